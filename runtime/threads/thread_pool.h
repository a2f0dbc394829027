// A fixed pool of worker threads for data-parallel kernels. parallel_for splits [0, n) into
// chunks of at least `grain` items and blocks until all are done; it makes no heap allocation,
// so kernels may call it in the steady state. With one thread (or a small n) it runs inline.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
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
  bool take_chunk(int64_t* begin, int64_t* end);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  const RangeFn* job_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, next_ = 0, active_ = 0;
};

}  // namespace sod2::rt
