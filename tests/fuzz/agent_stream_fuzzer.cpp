// libFuzzer target: arbitrary bytes as the host's side of the agent protocol (PROTOCOL.md),
// served by the real agent loop with a real package folder. Whatever arrives — broken frames,
// wrong orders, damaged packages, absurd run requests — must end in an Error message or a clean
// close, never a crash, a hang or an unbounded allocation.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "runtime/agent/agent.h"

namespace {

const std::string& work_dir() {
  static const std::string dir = [] {
    const auto d = std::filesystem::temp_directory_path() /
                   ("sod2_agent_stream_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The folder goes with the process (ctest replays this on every run). Registered after
  // work_dir()'s string exists, so the handler runs before that string is destroyed.
  static const bool cleanup = [] {
    work_dir();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(work_dir(), ec);
    });
    return true;
  }();
  (void)cleanup;
  size_t pos = 0;
  sod2::agent::AgentOptions options;
  options.dir = work_dir();
  options.software = "sod2 fuzz";
  options.max_runs_per_request = 4;  // a seed's package runs; more only costs time
  options.max_family_run_s = 0.02;   // likewise a family's demo
  options.max_sustained_s = 0.2;     // and a sustained run (its windows are at least 0.1 s)
  options.sysfs_root = work_dir() + "/no-sysfs";  // the same sensors (none) for every input
  options.max_load_processes = 0;    // no forking inside the fuzzer
  // Reads never block (the end of the input is the end of the stream), and everything the input
  // asks for is done before the agent sees that end: what is fuzzed does not depend on timing.
  options.host_readable = [](int) { return true; };
  options.drain_on_close = true;
  auto read = [&](uint8_t* buf, size_t n) -> sod2::Expected<size_t> {
    const size_t k = std::min(n, size - pos);
    std::memcpy(buf, data + pos, k);
    pos += k;
    return k;
  };
  auto write = [](const uint8_t*, size_t) { return sod2::Status::ok_status(); };
  (void)sod2::agent::serve(read, write, options);
  // Packages stored by one input must not make the next one behave differently.
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(work_dir()) / "packages", ec);
  return 0;
}
