// The demo's CPU load: its busy processes exist while it runs, share one process group, exit by
// themselves at their stop time, are killed and reaped (no zombies) by stop() and the destructor,
// and die with their parent. Waits are polls with generous limits, and no assertion depends on
// how fast the machine is.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/family/cpu_load.h"

namespace sod2::rt {
namespace {

void sleep_ms(int ms) {
  timespec t{0, ms * 1000000L};
  ::nanosleep(&t, nullptr);
}

bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// True once `pid`, our child, has been reaped (by someone): waitpid knows it no more.
bool reaped(pid_t pid) {
  errno = 0;
  return ::waitpid(pid, nullptr, WNOHANG) < 0 && errno == ECHILD;
}

TEST(CpuLoad, InvalidArguments) {
  const double nan = std::nan("");
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    int threads;
    double start_s, stop_s;
    const char* message_part;
  };
  for (const Case& k :
       {Case{0, 0, 1, "threads"}, Case{-1, 0, 1, "threads"}, Case{1025, 0, 1, "threads"},
        Case{1, -0.5, 1, "start"}, Case{1, nan, 1, "start"}, Case{1, inf, inf, "start"},
        Case{1, 1, 1, "must come after"}, Case{1, 2, 1, "must come after"},
        Case{1, 0, nan, "must come after"}}) {
    auto load = CpuLoad::start(k.threads, k.start_s, k.stop_s);
    ASSERT_FALSE(load.ok()) << k.message_part;
    EXPECT_EQ(load.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(load.status().message().find(k.message_part), std::string::npos)
        << load.status().message();
  }
}

TEST(CpuLoad, StartsChildrenInOneGroupAndStopReapsThem) {
  auto started = CpuLoad::start(2, 0, 0.3);
  ASSERT_TRUE(started.ok()) << started.status().to_string();
  CpuLoad& load = **started;
  const std::vector<pid_t> pids = load.pids();
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_EQ(load.threads(), 2);
  EXPECT_EQ(pids[0], load.process_group());  // the first child leads the group
  for (pid_t pid : pids) {
    EXPECT_TRUE(alive(pid)) << pid;
    EXPECT_EQ(::getpgid(pid), load.process_group()) << pid;
    EXPECT_FALSE(reaped(pid)) << pid;
  }
  EXPECT_FALSE(load.active_at(-0.1));
  EXPECT_TRUE(load.active_at(0.0));
  EXPECT_TRUE(load.active_at(0.29));
  EXPECT_FALSE(load.active_at(0.3));

  load.stop();
  EXPECT_TRUE(load.pids().empty());
  EXPECT_EQ(load.process_group(), -1);
  for (pid_t pid : pids) {
    EXPECT_TRUE(reaped(pid)) << pid;  // killed and reaped: no zombie left
    EXPECT_FALSE(alive(pid)) << pid;
  }
  // The timeline knows the load ended early.
  EXPECT_FALSE(load.active_at(0.29));
  load.stop();  // idempotent
}

TEST(CpuLoad, DestructorStops) {
  std::vector<pid_t> pids;
  {
    auto load = CpuLoad::start(3, 0, std::numeric_limits<double>::infinity());
    ASSERT_TRUE(load.ok()) << load.status().to_string();
    pids = (*load)->pids();
    ASSERT_EQ(pids.size(), 3u);
    for (pid_t pid : pids) EXPECT_TRUE(alive(pid)) << pid;
  }
  for (pid_t pid : pids) EXPECT_TRUE(reaped(pid)) << pid;
}

TEST(CpuLoad, ChildrenExitByThemselvesAtTheirStopTime) {
  auto started = CpuLoad::start(1, 0, 0.05);
  ASSERT_TRUE(started.ok()) << started.status().to_string();
  const pid_t pid = (*started)->pids().at(0);
  // Wait (without reaping: that is stop()'s job) until it has exited; 5 s is far beyond 0.05 s.
  siginfo_t info{};
  for (int i = 0; i < 500 && info.si_pid == 0; ++i) {
    ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT), 0);
    if (info.si_pid == 0) sleep_ms(10);
  }
  ASSERT_EQ(info.si_pid, pid) << "the load process did not exit at its stop time";
  EXPECT_EQ(info.si_code, CLD_EXITED);
  EXPECT_EQ(info.si_status, 0);
  (*started)->stop();
  EXPECT_TRUE(reaped(pid));
}

TEST(CpuLoad, ScheduledLaterSleepsAndStopsAtOnce) {
  auto started = CpuLoad::start(1, 30, 60);
  ASSERT_TRUE(started.ok()) << started.status().to_string();
  CpuLoad& load = **started;
  const pid_t pid = load.pids().at(0);
  EXPECT_TRUE(alive(pid));
  EXPECT_FALSE(load.active_at(0));
  EXPECT_FALSE(load.active_at(29.9));
  EXPECT_TRUE(load.active_at(30));
  EXPECT_TRUE(load.active_at(59.9));
  EXPECT_FALSE(load.active_at(60));
  EXPECT_GE(load.elapsed_s(), 0);
  load.stop();  // SIGKILL: does not wait for the 30 s
  EXPECT_TRUE(reaped(pid));
  EXPECT_FALSE(load.active_at(30));
}

TEST(CpuLoad, ChildrenDieWithTheirParent) {
  // Orphans of the intermediate process below come to this process, so it can reap them and see
  // how they died.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t middle = ::fork();
  ASSERT_GE(middle, 0);
  if (middle == 0) {
    // The "demo" process: starts a load that would spin for a minute, then dies without stop().
    ::close(fds[0]);
    auto load = CpuLoad::start(1, 0, 60);
    const pid_t pid = load.ok() ? (*load)->pids().at(0) : -1;
    (void)!::write(fds[1], &pid, sizeof pid);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t grandchild = -1;
  ASSERT_EQ(::read(fds[0], &grandchild, sizeof grandchild),
            static_cast<ssize_t>(sizeof grandchild));
  ::close(fds[0]);
  ASSERT_GT(grandchild, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(middle, &status, 0), middle);

  pid_t got = 0;
  for (int i = 0; i < 500 && got == 0; ++i) {
    got = ::waitpid(grandchild, &status, WNOHANG);
    if (got == 0) sleep_ms(10);
  }
  if (got == 0) ::kill(grandchild, SIGKILL), ::waitpid(grandchild, nullptr, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  ASSERT_EQ(got, grandchild) << "the load outlived its parent";
  // Killed by the death signal, or (had the parent died before the child could ask for that
  // signal) exited at once on seeing it was orphaned.
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  const bool left = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  EXPECT_TRUE(killed || left) << "status " << status;
}

}  // namespace
}  // namespace sod2::rt
