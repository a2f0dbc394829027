#include "runtime/threads/thread_pool.h"

#include <algorithm>
#include <chrono>

namespace sod2::rt {
namespace {

constexpr int kChunkBits = 16;
constexpr uint64_t kChunkMask = (uint64_t{1} << kChunkBits) - 1;
constexpr int64_t kMaxChunks = static_cast<int64_t>(kChunkMask);

uint32_t ticket_chunks(uint64_t t) { return static_cast<uint32_t>((t >> kChunkBits) & kChunkMask); }
uint32_t ticket_next(uint64_t t) { return static_cast<uint32_t>(t & kChunkMask); }
bool has_work(uint64_t t) { return ticket_next(t) < ticket_chunks(t); }

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

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  { std::lock_guard<std::mutex> lock(mu_); }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(uint64_t ticket) {
  while (has_work(ticket)) {
    // On failure `ticket` is reloaded: another thread took the chunk, or a new job began (its
    // fields were written before its ticket was published, so running it is as safe).
    if (!ticket_.compare_exchange_weak(ticket, ticket + 1, std::memory_order_acquire,
                                       std::memory_order_acquire))
      continue;
    const int64_t b = static_cast<int64_t>(ticket_next(ticket)) * chunk_;
    (*job_)(b, std::min(n_, b + chunk_));
    ++ticket;
    // seq_cst, paired with parallel_for's store of caller_sleeps_: either the caller sees this
    // chunk done or this thread sees it asleep.
    done_.fetch_add(1);
    if (caller_sleeps_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      done_cv_.notify_all();
    }
  }
}

void ThreadPool::worker_loop() {
  for (;;) {
    const uint64_t t = ticket_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    if (has_work(t)) {
      run_chunks(t);
      continue;
    }
    auto changed = [&] {
      return ticket_.load(std::memory_order_relaxed) != t || stop_.load(std::memory_order_relaxed);
    };
    if (spin_until(changed)) continue;
    std::unique_lock<std::mutex> lock(mu_);
    sleepers_.fetch_add(1);  // seq_cst, paired with parallel_for's publication of the ticket
    work_cv_.wait(lock, [&] { return ticket_.load() != t || stop_.load(); });
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
  ++generation_;
  const uint64_t ticket = static_cast<uint64_t>(generation_) << 32 | static_cast<uint64_t>(count)
                                                                         << kChunkBits;
  ticket_.store(ticket);  // seq_cst: publishes the fields above (release) and pairs with sleepers_
  if (sleepers_.load() > 0) {
    { std::lock_guard<std::mutex> lock(mu_); }
    work_cv_.notify_all();
  }
  run_chunks(ticket);
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
