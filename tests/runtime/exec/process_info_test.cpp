// The process facts the CLI's benchmark reports: resident memory and its peak.
#include "runtime/exec/process_info.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

namespace sod2::rt {
namespace {

// A transient peak (64 MiB touched, then returned to the kernel) no longer counts once the peak
// restarts: what `sod2 run` does after loading, so a load's transient peak is not reported as
// the runs' working memory.
TEST(ProcessInfo, RestartingThePeakForgetsAnEarlierTransientPeak) {
  if (resident_bytes().peak == 0) GTEST_SKIP() << "no /proc/self/status here";
  constexpr size_t kBytes = size_t{64} << 20;
  void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 1, kBytes);
  const ResidentBytes during = resident_bytes();
  ASSERT_EQ(::munmap(p, kBytes), 0);
  const ResidentBytes after = resident_bytes();
  // The kernel's RSS counters are per-CPU and batched: they may lag by some pages.
  constexpr int64_t kSlack = int64_t{1} << 20;
  EXPECT_GE(after.peak + kSlack, during.current);
  EXPECT_LT(after.current + int64_t{32 << 20}, after.peak);
  if (!restart_peak_resident()) GTEST_SKIP() << "this kernel refuses to restart the peak";
  const ResidentBytes restarted = resident_bytes();
  EXPECT_LT(restarted.peak + int64_t{32 << 20}, after.peak);
  EXPECT_GE(restarted.peak + kSlack, restarted.current);
}

}  // namespace
}  // namespace sod2::rt
