// A fixed pool of worker threads for data-parallel kernels. parallel_for splits [0, n) into
// chunks of at least `grain` items and blocks until all are done; it makes no heap allocation,
// so kernels may call it in the steady state. With one thread (or a small n) it runs inline.
// One caller at a time: parallel_for is not reentrant and not for concurrent callers.
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

 private:
  void worker_loop();
  // Claims and runs chunks of the job published in `ticket` until none is left.
  void run_chunks(uint64_t ticket);

  std::vector<std::thread> workers_;
  // The job's ticket: generation << 32 | chunk count << 16 | next chunk. A worker claims a chunk
  // by compare-and-swap on the whole word, so a late worker can never claim a chunk of a job
  // that has finished (its generation no longer matches), and the job's fields below, written
  // before the ticket was published, stay valid until every claimed chunk is done.
  std::atomic<uint64_t> ticket_{0};
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
  uint32_t generation_ = 0;
};

}  // namespace sod2::rt
