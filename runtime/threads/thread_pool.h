// A fixed pool of worker threads for data-parallel kernels. parallel_for splits [0, n) into
// chunks of at least `grain` items and blocks until all are done; it makes no heap allocation,
// so kernels may call it in the steady state. With one thread (or a small n) it runs inline.
// One caller at a time: parallel_for is not reentrant and not for concurrent callers.
//
// Thread t (the caller is 0) first takes its own share of the chunks, the t-th of
// num_threads() equal runs, and only then the others' that are still waiting: kernels that
// split alike (a conv's parts, an elementwise op's ranges) then find on each thread the data that
// thread wrote in the last one, still in its core's cache.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace sod2::rt {

// A non-owning reference to a callable `void(int64_t begin, int64_t end)`.
class RangeFn {
 public:
  template <typename F>
  RangeFn(const F& f)  // NOLINT: implicit on purpose, like std::function_ref
      : obj_(&f),
        call_([](const void* o, int64_t b, int64_t e) { (*static_cast<const F*>(o))(b, e); }) {}
  void operator()(int64_t b, int64_t e) const { call_(obj_, b, e); }

 private:
  const void* obj_;
  void (*call_)(const void*, int64_t, int64_t);
};

class ThreadPool {
 public:
  // threads <= 0: one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  void parallel_for(int64_t n, int64_t grain, RangeFn fn);

  // The calling thread's index in the pool whose job it runs: 1.. for a worker, 0 for any other
  // thread (a caller). Per-thread buffers indexed by it stay with one core from job to job.
  static int this_thread_index();

 private:
  void worker_loop(int index);
  // Claims and runs chunks of the current job, its own share first, until none is left.
  void run_chunks(int index);

  std::vector<std::thread> workers_;
  // The job's chunks, bit k set once chunk k is taken (and every bit past the job's count). A
  // thread claims a chunk by setting its bit: a late worker can never claim a chunk of a job that
  // has finished (all its bits are set), and a bit it sets of a newer job is that job's chunk,
  // whose fields below were written before the bits were cleared.
  static constexpr int kMaxChunks = 64;
  std::atomic<uint64_t> claimed_{~uint64_t{0}};
  std::atomic<uint32_t> count_{0};  // the current job's chunks
  // Bumped for each job: what sleeping and spinning workers watch.
  std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> done_{0};  // chunks of the current job finished
  std::atomic<bool> stop_{false};
  // Sleeping, after a spin found no work: workers on work_cv_, the caller on done_cv_. The
  // counters let the other side skip the lock and the futex call when nobody sleeps.
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_sleeps_{false};
  const RangeFn* job_ = nullptr;
  int64_t n_ = 0, chunk_ = 0;
};

}  // namespace sod2::rt
