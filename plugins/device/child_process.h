// A child process the host talks to over its stdin/stdout (an agent, adb), with its stderr kept
// for error messages. Reads wait with a deadline and watch a cancel flag, so a hung device or a
// user's Cancel never blocks the host forever.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::device {

class ChildProcess {
 public:
  // Starts argv[0] (searched in PATH) with pipes on stdin, stdout and stderr. Errors: the
  // program is missing or not executable (named). The first call sets SIGPIPE to ignored for the
  // process, so writing to a child that went away is an error, not a fatal signal.
  static Expected<std::unique_ptr<ChildProcess>> start(const std::vector<std::string>& argv);
  ~ChildProcess();  // kills the child if it still runs, then reaps it

  // Reads up to n bytes of its stdout: 0 at its end. Waits at most `idle` for the first byte;
  // errors: the deadline passed, or `cancel` became true (kCancelled).
  Expected<size_t> read(uint8_t* buf, size_t n);
  Status write(const uint8_t* buf, size_t n);
  void close_stdin();

  // SIGKILL; the next read sees the end of the stream.
  void kill();
  // Waits (at most `timeout`) for the child to exit and describes how: "exited with status 1",
  // "was killed by signal 9 (Killed)"; "still running" when the timeout passed.
  std::string wait_and_describe(std::chrono::milliseconds timeout = std::chrono::seconds(2));
  // The last few KiB of what the child wrote to stderr, trimmed.
  std::string stderr_tail();

  pid_t pid() const { return pid_; }
  void set_idle_timeout(std::chrono::milliseconds t) { idle_ = t; }
  void set_cancel_flag(const std::atomic<bool>* cancel) { cancel_ = cancel; }

 private:
  ChildProcess() = default;
  void drain_stderr();

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;
  std::string stderr_;
  std::chrono::milliseconds idle_ = std::chrono::minutes(5);
  const std::atomic<bool>* cancel_ = nullptr;
};

// Runs argv to completion (stdin empty) and returns its exit code with its output; for short
// commands such as `adb devices -l`. Errors: it cannot start, or it runs past `timeout`.
struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out, err;
};
Expected<CommandResult> run_command(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    const std::atomic<bool>* cancel = nullptr);

// Where argv[0] would be found in PATH ("" if nowhere); an argument with a '/' is checked as is.
std::string find_executable(const std::string& name);

}  // namespace sod2::device
