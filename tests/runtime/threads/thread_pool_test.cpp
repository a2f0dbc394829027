#include "runtime/threads/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace sod2::rt {
namespace {

// Every index of [0, n) is visited exactly once, whatever n and grain are.
void expect_each_index_once(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    ASSERT_LE(0, b);
    ASSERT_LT(b, e);
    ASSERT_LE(e, n);
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
}

TEST(ThreadPool, CoversEveryIndexOnceForManySizesAndGrains) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 3, 7, 64, 1000, 100003})
      for (int64_t grain : {1, 3, 64, 1 << 20}) expect_each_index_once(pool, n, grain);
  }
}

TEST(ThreadPool, NothingToDoCallsNothing) {
  ThreadPool pool(4);
  bool called = false;
  pool.parallel_for(0, 1, [&](int64_t, int64_t) { called = true; });
  pool.parallel_for(-5, 1, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

// Back-to-back jobs: a worker still finishing its last chunk of one job must neither run a
// chunk of a job that has returned nor miss the next one (the ticket's generation).
TEST(ThreadPool, ThousandsOfShortJobsBackToBack) {
  ThreadPool pool(4);
  int64_t total = 0;
  for (int job = 0; job < 20000; ++job) {
    std::atomic<int64_t> sum{0};
    const int64_t n = 1 + job % 37;
    pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) sum.fetch_add(i + 1);
    });
    ASSERT_EQ(sum.load(), n * (n + 1) / 2) << "job " << job;
    total += sum.load();
  }
  EXPECT_GT(total, 0);
}

// Workers that went to sleep (past the spin) wake for the next job, and a caller that slept
// waiting for a long chunk wakes when it ends.
TEST(ThreadPool, WakesAfterIdleAndAfterLongChunks) {
  ThreadPool pool(3);
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // workers sleep by now
    expect_each_index_once(pool, 999, 1);
    std::atomic<int> slow{0};
    pool.parallel_for(3, 1, [&](int64_t b, int64_t) {
      if (b == 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      slow.fetch_add(1);
    });
    EXPECT_EQ(slow.load(), 3);
  }
}

TEST(ThreadPool, SeveralPoolsAtOnce) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int p = 0; p < 3; ++p) {
    callers.emplace_back([&] {
      ThreadPool pool(2);
      for (int job = 0; job < 2000; ++job) {
        std::atomic<int64_t> count{0};
        pool.parallel_for(100, 7, [&](int64_t b, int64_t e) { count.fetch_add(e - b); });
        if (count.load() != 100) failures.fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, DestroysPromptlyWhileWorkersSleepOrSpin) {
  for (int wait_ms : {0, 30}) {
    const auto start = std::chrono::steady_clock::now();
    {
      ThreadPool pool(4);
      expect_each_index_once(pool, 100, 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  }
}

// A job of one chunk per thread whose chunks each wait until every chunk has started: no
// thread can run two, so each runs the one it went for first, its own share. Thread t (the
// caller is 0) runs chunk t, job after job, however late a worker wakes.
TEST(ThreadPool, EachThreadRunsItsOwnShareFirst) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    for (int job = 0; job < 20; ++job) {
      if (job % 5 == 4) std::this_thread::sleep_for(std::chrono::milliseconds(2));  // workers sleep
      std::atomic<int> started{0};
      std::vector<int> ran_by(static_cast<size_t>(threads), -1);
      pool.parallel_for(threads, 1, [&](int64_t b, int64_t e) {
        ASSERT_EQ(e, b + 1);
        ran_by[static_cast<size_t>(b)] = ThreadPool::this_thread_index();
        started.fetch_add(1);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (started.load() < threads && std::chrono::steady_clock::now() < deadline)
          std::this_thread::yield();
      });
      for (int t = 0; t < threads; ++t)
        EXPECT_EQ(ran_by[static_cast<size_t>(t)], t) << threads << " threads, job " << job;
    }
  }
  EXPECT_EQ(ThreadPool::this_thread_index(), 0);  // a thread outside any pool
}

// Jobs of more chunks than 64 (the most one job makes) and of every count up to it.
TEST(ThreadPool, ManyThreadsAndChunkCountsUpToTheMost) {
  ThreadPool pool(20);
  for (int64_t n : {1, 2, 63, 64, 65, 80, 1000, 100000}) expect_each_index_once(pool, n, 1);
}

}  // namespace
}  // namespace sod2::rt
