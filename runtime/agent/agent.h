// sod2-agent's protocol loop (PROTOCOL.md), separate from main() so tests can drive it over a
// pipe in-process. It receives packages into its folder (by content hash, so a package already
// there is not sent again), runs them with the host's inputs, and streams the timings back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status/status.h"
#include "runtime/agent/frame_io.h"

namespace sod2::agent {

struct AgentOptions {
  std::string dir;  // packages land in dir/packages/ (created when missing)
  std::string software = "sod2";
  // Warm-up plus measured runs one request may ask for; more is answered with an error.
  uint32_t max_runs_per_request = 1000000;
  // The longest family run (Dynamic-OFA demo) one request may ask for, in seconds.
  double max_family_run_s = 3600;
  // Busy processes a family run may start on the device (its stand-in load).
  uint32_t max_load_processes = 1024;
  // Whether the host has sent something not read yet: lets a long run request stop between runs
  // when a Cancel arrives. Null: never checked.
  std::function<bool()> host_has_data;
};

// Serves one host until it closes the stream (ok) or the stream breaks (the error). Protocol
// errors the host caused are answered with an Error message before returning or continuing.
Status serve(const ReadFn& read, const WriteFn& write, const AgentOptions& options);

}  // namespace sod2::agent
