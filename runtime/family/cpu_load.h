// Stands in for "other apps" competing for the CPU during a Dynamic-OFA demo: a scheduled burst of
// busy processes, so the budget controller has a real load spike to react to.
//
// Each busy "thread" is a forked, single-threaded process rather than a std::thread of a child:
// after fork() in a possibly multi-threaded parent only async-signal-safe calls are allowed, and
// starting threads (or allocating) is not. The children only sleep and spin on
// clock_gettime/clock_nanosleep, share one process group so they are killed together, and die
// with their parent (PR_SET_PDEATHSIG), so a crashed demo leaves no spinning processes behind.
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt {

class CpuLoad {
 public:
  // Forks `threads` busy processes now; each sleeps until start_s seconds after this call, spins
  // until stop_s (+infinity: until stop()), then exits. Errors (kInvalidArgument): threads outside
  // [1, 1024], a negative or non-finite start_s, stop_s ≤ start_s; (kIoError) fork failed — the
  // ones already forked are killed and reaped.
  //
  // Linux only. The children die when the *thread* that called start() exits (that is what
  // PR_SET_PDEATHSIG watches), so call it from a thread that outlives the load, such as the main
  // thread. Children are reaped by stop(): a parent that ignores SIGCHLD, or reaps with
  // waitpid(-1, ...) elsewhere, would race with it.
  static Expected<std::unique_ptr<CpuLoad>> start(int threads, double start_s, double stop_s);
  ~CpuLoad();  // stop()

  CpuLoad(const CpuLoad&) = delete;
  CpuLoad& operator=(const CpuLoad&) = delete;

  // Kills the children (SIGKILL) and reaps them; they may have exited by themselves already.
  // Idempotent. Afterwards active_at() is false from the time of the stop on.
  void stop();

  // Whether load is scheduled at t_s seconds after start() was called (for timelines): within
  // [start_s, stop_s), and before stop() if that came earlier.
  bool active_at(double t_s) const;
  // Seconds since start() was called, on the clock active_at() uses (CLOCK_MONOTONIC).
  double elapsed_s() const;

  int threads() const { return threads_; }
  double start_s() const { return start_s_; }
  double stop_s() const { return stop_s_; }
  // The children's pids and their process group (empty and -1 after stop()).
  const std::vector<pid_t>& pids() const { return pids_; }
  pid_t process_group() const { return pgid_; }

 private:
  CpuLoad() = default;

  int threads_ = 0;
  double start_s_ = 0, stop_s_ = 0;
  double stopped_at_s_ = -1;  // elapsed_s() when stop() ran; -1 before
  double origin_s_ = 0;       // CLOCK_MONOTONIC at start(), in seconds
  std::vector<pid_t> pids_;
  pid_t pgid_ = -1;
};

}  // namespace sod2::rt
