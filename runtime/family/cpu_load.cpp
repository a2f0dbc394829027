#include "runtime/family/cpu_load.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

namespace sod2::rt {
namespace {

constexpr int kMaxThreads = 1024;
// Deadlines further out are clamped (about 30 years), so a huge stop_s cannot overflow time_t.
constexpr double kMaxSeconds = 1e9;

double to_seconds(const timespec& t) { return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9; }

timespec plus_seconds(timespec t, double s) {
  s = std::min(s, kMaxSeconds);
  const auto whole = static_cast<time_t>(s);
  t.tv_sec += whole;
  t.tv_nsec += static_cast<long>((s - static_cast<double>(whole)) * 1e9);
  if (t.tv_nsec >= 1000000000L) {
    t.tv_sec += 1;
    t.tv_nsec -= 1000000000L;
  }
  return t;
}

bool before(const timespec& a, const timespec& b) {
  return a.tv_sec < b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec < b.tv_nsec);
}

// The body of each forked child. The parent may have had other threads holding locks (malloc's,
// stdio's) at the fork, so from here on only async-signal-safe calls and raw syscalls: no
// allocation, no stdio, no exit() (which would run the parent's atexit handlers and flush its
// stdio buffers a second time).
[[noreturn]] void child_main(pid_t parent, pid_t pgid, rlim_t max_fd, timespec begin,
                             timespec end) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before the line above: then nothing would ever kill this child.
  if (::getppid() != parent) ::_exit(0);
  ::setpgid(0, pgid);  // the parent does it too; whichever comes first wins

  // The parent's signal handlers would run the parent's code in this copy of it; a child that is
  // signalled just dies. (sigaction refuses SIGKILL, SIGSTOP and libc's internal signals.)
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Copies of the parent's descriptors would keep its pipes and sockets open: a reader waiting
  // for EOF on one of them (an agent's stdin, a test harness's stdout) would wait for this child.
  bool closed = false;
#ifdef SYS_close_range
  closed = ::syscall(SYS_close_range, 0u, ~0u, 0u) == 0;
#endif
  if (!closed) {
    for (rlim_t fd = 0; fd < max_fd; ++fd) ::close(static_cast<int>(fd));
  }

  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &begin, nullptr) == EINTR) {
  }
  volatile uint64_t x = 1;
  for (;;) {
    // About a millisecond of work between clock reads.
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
    timespec now;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (!before(now, end)) break;
  }
  ::_exit(0);
}

}  // namespace

Expected<std::unique_ptr<CpuLoad>> CpuLoad::start(int threads, double start_s, double stop_s) {
  if (threads < 1 || threads > kMaxThreads) {
    return invalid_argument("CPU load threads must be in [1, " + std::to_string(kMaxThreads) +
                            "], got " + std::to_string(threads));
  }
  if (!std::isfinite(start_s) || start_s < 0) {
    return invalid_argument("CPU load start must be a finite time ≥ 0 s, got " +
                            std::to_string(start_s));
  }
  if (std::isnan(stop_s) || stop_s <= start_s) {
    return invalid_argument("CPU load stop (" + std::to_string(stop_s) +
                            " s) must come after its start (" + std::to_string(start_s) + " s)");
  }
  std::unique_ptr<CpuLoad> load(new CpuLoad());
  load->threads_ = threads;
  load->start_s_ = start_s;
  load->stop_s_ = stop_s;

  // Everything the children need is computed here, before fork, where any call is allowed.
  timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  load->origin_s_ = to_seconds(now);
  const timespec begin = plus_seconds(now, start_s);
  const timespec end = plus_seconds(now, stop_s);
  rlimit files{};
  rlim_t max_fd = 1024;
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    max_fd = std::min<rlim_t>(files.rlim_cur, rlim_t{1} << 20);  // only without close_range
  }
  const pid_t parent = ::getpid();

  load->pids_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      load->stop();
      return io_error("cannot fork CPU load process " + std::to_string(i + 1) + " of " +
                      std::to_string(threads) + ": " + std::strerror(e));
    }
    // The first child leads the group (pgid 0 = its own pid); the others join it.
    if (pid == 0) child_main(parent, i == 0 ? 0 : load->pgid_, max_fd, begin, end);
    if (i == 0) load->pgid_ = pid;
    // Also here, so the group exists before the next child tries to join it.
    ::setpgid(pid, load->pgid_);
    load->pids_.push_back(pid);
  }
  return load;
}

CpuLoad::~CpuLoad() { stop(); }

void CpuLoad::stop() {
  if (pids_.empty()) return;
  // Until they are reaped below, the children's pids (and so the group's id) cannot be reused,
  // so these signals reach no one else.
  if (pgid_ > 0) ::kill(-pgid_, SIGKILL);
  for (pid_t pid : pids_) ::kill(pid, SIGKILL);  // any that did not make it into the group
  for (pid_t pid : pids_) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  pids_.clear();
  pgid_ = -1;
  if (stopped_at_s_ < 0) stopped_at_s_ = elapsed_s();
}

double CpuLoad::elapsed_s() const {
  timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return to_seconds(now) - origin_s_;
}

bool CpuLoad::active_at(double t_s) const {
  if (t_s < start_s_ || t_s >= stop_s_) return false;
  return stopped_at_s_ < 0 || t_s < stopped_at_s_;
}

}  // namespace sod2::rt
