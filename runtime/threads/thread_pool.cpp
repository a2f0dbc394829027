#include "runtime/threads/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace sod2::rt {
namespace {

thread_local int t_index = 0;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a thread spins before it sleeps in the kernel. The kernels of one run follow each
// other within microseconds, and a futex wake costs tens of microseconds on a virtual machine
// (more than many kernels take): spinning this long keeps the workers awake through a run while
// bounding what an idle pool burns.
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins until pred() holds or kSpin has passed; returns pred().
template <class Pred>
bool spin_until(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (pred()) return true;
      cpu_relax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return pred();
  }
}

}  // namespace

int ThreadPool::this_thread_index() { return t_index; }

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(int index) {
  const uint64_t all = ~uint64_t{0};
  const int64_t threads = num_threads();
  for (;;) {
    const uint64_t taken = claimed_.load(std::memory_order_acquire);
    if (taken == all) return;
    // Its own share first, then the lowest chunk still waiting. (count_ may already be a newer
    // job's: any chunk whose bit is clear is one to run.)
    const int64_t count = count_.load(std::memory_order_relaxed);
    const int64_t first = index * count / threads, last = (index + 1) * count / threads;
    int k = -1;
    for (int64_t c = first; c < last && c < kMaxChunks; ++c)
      if (!((taken >> c) & 1)) {
        k = static_cast<int>(c);
        break;
      }
    if (k < 0) k = __builtin_ctzll(~taken);
    const uint64_t bit = uint64_t{1} << k;
    if (claimed_.fetch_or(bit, std::memory_order_acq_rel) & bit) continue;
    const int64_t b = static_cast<int64_t>(k) * chunk_;
    (*job_)(b, std::min(n_, b + chunk_));
    // seq_cst, paired with parallel_for's store of caller_sleeps_: either the caller sees this
    // chunk done or this thread sees it asleep.
    done_.fetch_add(1);
    if (caller_sleeps_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::worker_loop(int index) {
  t_index = index;
  for (;;) {
    const uint32_t g = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    if (claimed_.load(std::memory_order_acquire) != ~uint64_t{0}) {
      run_chunks(index);
      continue;
    }
    auto changed = [&] {
      return generation_.load(std::memory_order_relaxed) != g ||
             stop_.load(std::memory_order_relaxed);
    };
    if (spin_until(changed)) continue;
    std::unique_lock<std::mutex> lock(mu_);
    sleepers_.fetch_add(1);  // seq_cst, paired with parallel_for's publication of the job
    work_cv_.wait(lock, [&] { return generation_.load() != g || stop_.load(); });
    sleepers_.fetch_sub(1);
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
  // A few chunks per thread balance uneven work without much contention.
  const int64_t chunks = std::min<int64_t>({(n + grain - 1) / grain, threads * 4, kMaxChunks});
  job_ = &fn;
  n_ = n;
  chunk_ = (n + chunks - 1) / chunks;
  const auto count = static_cast<uint32_t>((n + chunk_ - 1) / chunk_);
  done_.store(0, std::memory_order_relaxed);
  count_.store(count, std::memory_order_relaxed);
  // Publishes the fields above (release) with the job's bits clear.
  claimed_.store(count == kMaxChunks ? 0 : ~uint64_t{0} << count);
  generation_.fetch_add(1);  // seq_cst, paired with sleepers_
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    work_cv_.notify_all();
  }
  run_chunks(0);
  auto finished = [&] { return done_.load(std::memory_order_acquire) == count; };
  if (!spin_until(finished)) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_sleeps_.store(true);
    done_cv_.wait(lock, [&] { return done_.load() == count; });
    caller_sleeps_.store(false);
  }
  job_ = nullptr;
}

}  // namespace sod2::rt
