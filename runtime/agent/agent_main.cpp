// sod2-agent: the runtime's front on a device (PROTOCOL.md). The host starts it through a
// transport (a local child process, `adb shell -T`) and talks to it over its stdin/stdout; it
// writes nothing else to stdout. Diagnostics go to stderr.
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "core/version.h"
#include "runtime/agent/agent.h"
#include "runtime/exec/process_info.h"

namespace {

void usage(FILE* f) {
  std::fprintf(
      f,
      "usage: sod2-agent [--dir DIR] [--max-threads N] [--max-run-bytes N]\n"
      "                  [--max-loop-iterations N] [--max-run-ms N] [--max-queued-bytes N]\n"
      "                  [--version]\n"
      "Serves the sod2 agent protocol on stdin/stdout (started by `sod2 profile`, not by\n"
      "hand). Packages are kept in DIR/packages (default: this executable's folder).\n"
      "Limits (a host's request may lower them, never raise them):\n"
      "  --max-threads N          worker threads per request (default 4 per hardware thread)\n"
      "  --max-run-bytes N        memory of one run (default half the physical memory)\n"
      "  --max-loop-iterations N  iterations of one Loop node in one run (default 10000000)\n"
      "  --max-run-ms N           wall-clock time of one run (default 600000, 10 minutes)\n"
      "  --max-queued-bytes N     bytes a host may send ahead of a running request (256 MiB)\n");
}

// A positive count from the command line; false (with a message) otherwise.
bool parse_positive(const char* flag, const char* text, int64_t* out) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v <= 0) {
    std::fprintf(stderr, "sod2-agent: %s needs a positive whole number, not '%s'\n", flag, text);
    return false;
  }
  *out = v;
  return true;
}

// Exceptions on threads the agent does not own (a kernel's worker) cannot be turned into a reply;
// at least the host's stderr tail then says what happened instead of a bare SIGABRT.
[[noreturn]] void on_terminate() {
  const char* what = "an unknown exception";
  std::string text;
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      text = x.what();
      what = text.c_str();
    } catch (...) {
    }
  }
  std::fprintf(stderr, "sod2-agent: fatal: %s escaped every handler (please report this)\n", what);
  std::fflush(stderr);
  std::abort();
}

int run(int argc, char** argv) {
  sod2::agent::AgentOptions options;
  options.software = std::string("sod2 ") + SOD2_VERSION_STRING;
  // A sane ceiling for any run: half the memory, ten minutes; the session's own default
  // iterations. A host can lower each per request.
  const int64_t physical = sod2::rt::physical_memory_bytes();
  if (physical > 0) options.limits.max_bytes = physical / 2;
  options.limits.max_loop_iterations = sod2::rt::kDefaultMaxLoopIterations;
  options.limits.max_run_ms = 10 * 60 * 1000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--version") {
      std::printf("sod2-agent %s protocol %u\n", SOD2_VERSION_STRING,
                  sod2::agent::kProtocolVersion);
      return 0;
    }
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if (a == "--dir" && i + 1 < argc) {
      options.dir = argv[++i];
      continue;
    }
    int64_t v = 0;
    if (i + 1 < argc &&
        (a == "--max-threads" || a == "--max-run-bytes" || a == "--max-loop-iterations" ||
         a == "--max-run-ms" || a == "--max-queued-bytes")) {
      if (!parse_positive(a.c_str(), argv[++i], &v)) return 2;
      if (a == "--max-threads") {
        options.max_threads = static_cast<uint32_t>(std::min<int64_t>(v, UINT32_MAX));
      } else if (a == "--max-run-bytes") {
        options.limits.max_bytes = v;
      } else if (a == "--max-loop-iterations") {
        options.limits.max_loop_iterations = v;
      } else if (a == "--max-run-ms") {
        options.limits.max_run_ms = v;
      } else {
        options.max_queued_bytes = static_cast<uint64_t>(v);
      }
      continue;
    }
    std::fprintf(stderr, "sod2-agent: unknown argument '%s'\n", a.c_str());
    usage(stderr);
    return 2;
  }
  // The folder of this executable: on a phone /data/local/tmp/sod2, where the host pushed it.
  if (options.dir.empty()) options.dir = sod2::rt::executable_dir();
  // A host that goes away shows up as a failed write, not a signal; a full disk or a file-size
  // limit as a failed write of the package (reported), not SIGXFSZ.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGXFSZ, SIG_IGN);
  options.host_readable = [](int timeout_ms) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    return ::poll(&p, 1, timeout_ms) > 0;
  };
  const sod2::Status st = sod2::agent::serve(sod2::agent::fd_reader(STDIN_FILENO),
                                             sod2::agent::fd_writer(STDOUT_FILENO), options);
  if (!st.ok()) {
    std::fprintf(stderr, "sod2-agent: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::set_terminate(on_terminate);
  // serve() turns what a request throws into a reply; this catches what is left (parsing the
  // command line, a failure to report), so the agent exits with a message, not a signal.
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sod2-agent: %s (please report this)\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "sod2-agent: an unknown exception (please report this)\n");
  }
  return 1;
}
