#include "runtime/threads/thread_pool.h"

#include <algorithm>

namespace sod2::rt {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool ThreadPool::take_chunk(int64_t* begin, int64_t* end) {
  // Called with mu_ held.
  if (!job_ || next_ >= n_) return false;
  *begin = next_;
  *end = std::min(n_, next_ + chunk_);
  next_ = *end;
  ++active_;
  return true;
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || (job_ && generation_ != seen && next_ < n_); });
    if (stop_) return;
    seen = generation_;
    int64_t b, e;
    while (take_chunk(&b, &e)) {
      const RangeFn* job = job_;
      lock.unlock();
      (*job)(b, e);
      lock.lock();
      if (--active_ == 0 && next_ >= n_) done_cv_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, RangeFn fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t threads = num_threads();
  if (threads == 1 || n <= grain) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balance uneven work without much locking.
  const int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, threads * 4);
  std::unique_lock<std::mutex> lock(mu_);
  job_ = &fn;
  n_ = n;
  chunk_ = (n + chunks - 1) / chunks;
  next_ = 0;
  active_ = 0;
  ++generation_;
  work_cv_.notify_all();
  int64_t b, e;
  while (take_chunk(&b, &e)) {
    lock.unlock();
    fn(b, e);
    lock.lock();
    --active_;
  }
  done_cv_.wait(lock, [&] { return active_ == 0 && next_ >= n_; });
  job_ = nullptr;
}

}  // namespace sod2::rt
