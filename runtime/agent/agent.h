// sod2-agent's protocol loop (PROTOCOL.md), separate from main() so tests can drive it over a
// pipe in-process. It receives packages into its folder (by content hash, so a package already
// there is not sent again), runs them with the host's inputs, and streams the timings back.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/status/status.h"
#include "runtime/agent/frame_io.h"
#include "runtime/exec/session.h"

namespace sod2::agent {

struct AgentOptions {
  std::string dir;  // packages land in dir/packages/ (created when missing)
  std::string software = "sod2";
  // Warm-up plus measured runs one request may ask for; more is answered with an error.
  uint32_t max_runs_per_request = 1000000;
  // The longest family run (Dynamic-OFA demo) one request may ask for, in seconds.
  double max_family_run_s = 3600;
  // The longest sustained run (RunRequest.duration_s) one request may ask for, in seconds.
  double max_sustained_s = 24 * 3600;
  // Where a sustained run reads the device's thermal zones and CPU frequencies.
  std::string sysfs_root = "/sys";
  // Busy processes a family run may start on the device (its stand-in load).
  uint32_t max_load_processes = 1024;
  // Worker threads one request may ask for; 0: rt::kMaxThreadsPerCore per hardware thread.
  // More is answered with RESOURCE_EXHAUSTED naming the limit.
  uint32_t max_threads = 0;
  // What one run may take (memory, loop iterations, time). A run request may lower these, never
  // raise them; 0 in a field leaves it to the session's default.
  rt::RunLimits limits;
  // Messages a host may send ahead of a run request in progress, and their bytes. Past either
  // the agent stops reading until the request is done (the host's writes wait), so a host can
  // neither fill the device's memory nor lose a message.
  size_t max_queued_messages = 64;
  uint64_t max_queued_bytes = uint64_t{256} << 20;
  // Waits up to `timeout_ms` for the host's stream to become readable (data or its end): true
  // when a read would not block. Lets serve() return promptly when it ends the conversation
  // itself; null: reads just block, and serve() returns once the host sends or closes.
  std::function<bool(int timeout_ms)> host_readable;
  // When the host closes its stream the request in progress is cancelled and the rest is
  // dropped: the host has gone. True: finish everything it sent first (a scripted host that
  // writes all its requests and closes at once; the fuzzers).
  bool drain_on_close = false;
};

// Serves one host until it closes the stream (ok) or the stream breaks (the error). Protocol
// errors the host caused are answered with an Error message before returning or continuing;
// so is whatever a request throws (out of memory, no thread to start): the agent frees what
// that request held and keeps serving. Messages are read on a thread of their own, so a Cancel
// or the end of the stream stops a run in progress.
Status serve(const ReadFn& read, const WriteFn& write, const AgentOptions& options);

}  // namespace sod2::agent
