#include "plugins/device/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

extern char** environ;

namespace sod2::device {
namespace {

constexpr size_t kStderrKeep = 8 << 10;

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = ::strsignal(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (") + name + ")" : "");
  }
  return "stopped";
}

}  // namespace

std::string find_executable(const std::string& name) {
  auto runnable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return runnable(name) ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string p = (dir.empty() ? "." : dir) + "/" + name;
    if (runnable(p)) return p;
    start = end + 1;
  }
  return "";
}

Expected<std::unique_ptr<ChildProcess>> ChildProcess::start(const std::vector<std::string>& argv) {
  if (argv.empty()) return invalid_argument("no command to start");
  // A child that exits without reading (a crashed agent, an unplugged phone's adb) must turn the
  // host's next write into EPIPE, not a SIGPIPE that kills the studio or the CLI.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  const std::string exe = find_executable(argv[0]);
  if (exe.empty()) {
    return not_found("'" + argv[0] + "' " +
                     (argv[0].find('/') != std::string::npos ? "does not exist or is not executable"
                                                             : "is not in PATH"));
  }
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return io_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    return io_error(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return io_error(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  // The child starts with default signal dispositions (the host ignores SIGPIPE).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    ::close(in[1]), ::close(out[0]), ::close(err[0]);
    return io_error("cannot start " + exe + ": " + std::strerror(rc));
  }
  std::unique_ptr<ChildProcess> p(new ChildProcess());
  p->pid_ = pid;
  p->in_ = in[1];
  p->out_ = out[0];
  p->err_ = err[0];
  ::fcntl(p->err_, F_SETFL, O_NONBLOCK);
  return p;
}

ChildProcess::~ChildProcess() {
  close_fd(in_);
  if (!reaped_ && pid_ > 0) {
    // Give a child that saw its stdin close a moment to exit by itself, then make sure.
    wait_and_describe(std::chrono::milliseconds(200));
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      wait_and_describe(std::chrono::seconds(5));
    }
  }
  close_fd(out_);
  close_fd(err_);
}

void ChildProcess::drain_stderr() {
  if (err_ < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t k = ::read(err_, buf, sizeof buf);
    if (k > 0) {
      stderr_.append(buf, static_cast<size_t>(k));
      if (stderr_.size() > 2 * kStderrKeep) stderr_.erase(0, stderr_.size() - kStderrKeep);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) close_fd(err_);
    return;
  }
}

Expected<size_t> ChildProcess::read(uint8_t* buf, size_t n) {
  if (out_ < 0) return size_t{0};
  const auto deadline = std::chrono::steady_clock::now() + idle_;
  for (;;) {
    if (cancel_ && cancel_->load()) return cancelled("cancelled");
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int r = ::poll(fds, err_ >= 0 ? 2 : 1, 100);
    if (r < 0 && errno != EINTR) return io_error(std::string("poll: ") + std::strerror(errno));
    if (r > 0 && err_ >= 0 && fds[1].revents) drain_stderr();
    if (r > 0 && fds[0].revents) {
      for (;;) {
        const ssize_t k = ::read(out_, buf, n);
        if (k >= 0) return static_cast<size_t>(k);
        if (errno != EINTR) return io_error(std::string("read: ") + std::strerror(errno));
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return io_error(
          "no answer for " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(idle_).count()) +
          " s (the device or the agent hangs)");
    }
  }
}

Status ChildProcess::write(const uint8_t* buf, size_t n) {
  if (in_ < 0) return io_error("the stream to the child is closed");
  size_t done = 0;
  while (done < n) {
    if (cancel_ && cancel_->load()) return cancelled("cancelled");
    pollfd p{in_, POLLOUT, 0};
    const int r = ::poll(&p, 1, 100);
    if (r < 0 && errno != EINTR) return io_error(std::string("poll: ") + std::strerror(errno));
    if (r <= 0) {
      drain_stderr();
      continue;
    }
    const ssize_t k = ::write(in_, buf + done, n - done);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k < 0) {
      return io_error(errno == EPIPE ? std::string("the other end closed the stream")
                                     : std::string("write: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(k);
  }
  return Status::ok_status();
}

void ChildProcess::close_stdin() { close_fd(in_); }

void ChildProcess::kill() {
  if (!reaped_ && pid_ > 0) ::kill(pid_, SIGKILL);
}

std::string ChildProcess::wait_and_describe(std::chrono::milliseconds timeout) {
  if (reaped_) return describe_wait_status(wait_status_);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_status_ = status;
      return describe_wait_status(status);
    }
    if (r < 0 && errno != EINTR) return "could not be waited for";
    if (std::chrono::steady_clock::now() > deadline) return "still running";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string ChildProcess::stderr_tail() {
  drain_stderr();
  std::string s =
      stderr_.size() > kStderrKeep ? stderr_.substr(stderr_.size() - kStderrKeep) : stderr_;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

Expected<CommandResult> run_command(const std::vector<std::string>& argv,
                                    std::chrono::milliseconds timeout,
                                    const std::atomic<bool>* cancel) {
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> p, ChildProcess::start(argv));
  p->close_stdin();
  p->set_idle_timeout(timeout);
  p->set_cancel_flag(cancel);
  CommandResult r;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  uint8_t buf[4096];
  for (;;) {
    Expected<size_t> k = p->read(buf, sizeof buf);
    if (!k.ok()) {
      p->kill();
      if (k.status().code() == StatusCode::kCancelled) return k.status();
      return io_error("'" + argv[0] + (argv.size() > 1 ? " " + argv[1] : "") + "' " +
                      k.status().message());
    }
    if (*k == 0) break;
    r.out.append(reinterpret_cast<const char*>(buf), *k);
    if (std::chrono::steady_clock::now() > deadline) {
      p->kill();
      return io_error("'" + argv[0] + "' did not finish in time");
    }
  }
  const std::string how = p->wait_and_describe(timeout);
  r.err = p->stderr_tail();
  if (how.rfind("exited with status ", 0) == 0) r.exit_code = std::stoi(how.substr(19));
  return r;
}

}  // namespace sod2::device
