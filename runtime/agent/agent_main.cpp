// sod2-agent: the runtime's front on a device (PROTOCOL.md). The host starts it through a
// transport (a local child process, `adb shell -T`) and talks to it over its stdin/stdout; it
// writes nothing else to stdout. Diagnostics go to stderr.
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "core/version.h"
#include "runtime/agent/agent.h"
#include "runtime/exec/process_info.h"

namespace {

void usage(FILE* f) {
  std::fprintf(f,
               "usage: sod2-agent [--dir DIR] [--version]\n"
               "Serves the sod2 agent protocol on stdin/stdout (started by `sod2 profile`, not by\n"
               "hand). Packages are kept in DIR/packages (default: this executable's folder).\n");
}

}  // namespace

int main(int argc, char** argv) {
  sod2::agent::AgentOptions options;
  options.software = std::string("sod2 ") + SOD2_VERSION_STRING;
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
  options.host_has_data = [] {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  };
  const sod2::Status st = sod2::agent::serve(sod2::agent::fd_reader(STDIN_FILENO),
                                             sod2::agent::fd_writer(STDOUT_FILENO), options);
  if (!st.ok()) {
    std::fprintf(stderr, "sod2-agent: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}
