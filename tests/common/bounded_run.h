// Runs a piece of code that might hang or allocate without end (reading a FIFO, /dev/zero) in a
// forked child with a time limit and, where the build allows, an address-space limit, so a test
// of such input reports a failure instead of stalling or exhausting the machine. The code returns
// a string (an error message, say) that comes back to the parent.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <string>

namespace sod2::testing {

struct BoundedRun {
  bool finished = false;  // the code returned (or threw) within the limits
  std::string result;     // what it returned, or how the child ended
  double seconds = 0;
};

inline BoundedRun run_bounded(const std::function<std::string()>& fn, int seconds = 10,
                              uint64_t max_address_space = uint64_t{4} << 30) {
  BoundedRun r;
  int fds[2];
  if (::pipe(fds) != 0) {
    r.result = "pipe failed";
    return r;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    r.result = "fork failed";
    return r;
  }
  if (pid == 0) {
    ::close(fds[0]);
#if !defined(__SANITIZE_ADDRESS__)
    // Sanitizers reserve terabytes of address space up front; without them, a reader that
    // allocates without end gets std::bad_alloc here instead of the OOM killer.
    struct rlimit lim {
      max_address_space, max_address_space
    };
    ::setrlimit(RLIMIT_AS, &lim);
#endif
    ::alarm(static_cast<unsigned>(seconds) + 1);
    // Nothing may leave the child but through _exit: an exception would unwind into the test
    // framework, which would go on running the remaining tests in the child.
    std::string out;
    try {
      out = fn();
    } catch (const std::exception& e) {
      out = std::string("threw ") + e.what();
    } catch (...) {
      out = "threw a non-standard exception";
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t w = ::write(fds[1], out.data() + done, out.size() - done);
      if (w <= 0) break;
      done += static_cast<size_t>(w);
    }
    ::_exit(0);  // no atexit handlers or test-framework teardown in the child
  }
  ::close(fds[1]);
  std::string got;
  const auto deadline = t0 + std::chrono::seconds(seconds);
  bool timed_out = false;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n <= 0) break;  // EOF: the child wrote everything and ended
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (timed_out) {
    r.result = "did not finish within " + std::to_string(seconds) + " s";
  } else if (WIFSIGNALED(status)) {
    r.result = "the child died of signal " + std::to_string(WTERMSIG(status)) +
               " (SIGALRM: it hung; SIGABRT: an uncaught exception such as std::bad_alloc)";
  } else {
    r.finished = true;
    r.result = std::move(got);
  }
  return r;
}

}  // namespace sod2::testing
