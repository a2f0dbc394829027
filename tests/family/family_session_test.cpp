// FamilySession over the Dynamic-OFA family package: deterministic manager behaviour with an
// injected latency source (a device model: each variant's latency times a load factor), switching
// without allocation after warm-up, and the outputs of whichever variant ran.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "../common/allocation_counter.h"
#include "../opt/corpus.h"
#include "core/family/family_writer.h"
#include "core/package/program_builder.h"
#include "runtime/family/family_session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t>* g_bytes = nullptr;

const std::vector<uint8_t>& family_bytes() {
  if (!g_bytes) {
    auto spec = family::read_family_spec(SOD2_SHARED_DIR "/models/dofa_mbv3/variants.json");
    EXPECT_TRUE(spec.ok()) << spec.status().to_string();
    auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "dofa_mbv3/max");
    EXPECT_TRUE(corpus.ok());
    family::FamilyCompileOptions options;
    options.compile.rdp = corpus->options;
    auto bytes = family::build_family_package(*spec, options);
    EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
    g_bytes = new std::vector<uint8_t>(bytes.ok() ? std::move(*bytes) : std::vector<uint8_t>{});
  }
  return *g_bytes;
}

// A small input so the real runs are quick; the controller sees the modelled latencies only.
rt::HostTensor small_image() {
  rt::HostTensor t(rt::DType::kFloat, rt::Shape{1, 3, 32, 32});
  float* p = t.view().as<float>();
  for (int64_t i = 0; i < t.view().numel(); ++i) p[i] = static_cast<float>(i % 17) / 17.0f;
  return t;
}

Expected<std::unique_ptr<rt::FamilySession>> make_session(double budget_ms,
                                                          std::vector<double> expected = {}) {
  auto family = rt::load_family_package(family_bytes(), nullptr);
  if (!family.ok()) return family.status();
  rt::FamilySessionOptions options;
  options.session.threads = 1;
  options.budget_ms = budget_ms;
  options.expected_ms = std::move(expected);
  return rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), options);
}

// Modelled device: small 10 ms, medium 14, large 25, max 40, times a load factor.
const std::vector<double> kDeviceMs = {10, 14, 25, 40};

TEST(FamilySession, OrdersVariantsSmallToLargeByMacs) {
  auto s = make_session(0);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ((*s)->variants(), 4);
  for (int i = 1; i < 4; ++i) EXPECT_LT((*s)->variant(i - 1).macs, (*s)->variant(i).macs);
  EXPECT_EQ((*s)->current(), 3) << "without a manager, the largest variant runs";
}

TEST(FamilySession, HoldsTheBudgetUnderLoadAndClimbsBackAfterIt) {
  auto s = make_session(30, kDeviceMs);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  double load = 1.0;
  (*s)->set_latency_source([&](int v, double) { return kDeviceMs[static_cast<size_t>(v)] * load; });
  const rt::HostTensor image = small_image();
  const rt::Tensor in = image.view();
  ASSERT_TRUE((*s)->warm_up({&in, 1}, 1).ok());
  EXPECT_EQ((*s)->current(), 2) << "large (25 ms) is the largest within 30 ms";
  int within = 0;
  for (int run = 0; run < 60; ++run) {
    ASSERT_TRUE((*s)->run({&in, 1}).ok());
    within += (*s)->last_latency_ms() <= 30;
  }
  EXPECT_EQ((*s)->current(), 2);
  EXPECT_EQ(within, 60);
  load = 2.0;  // other apps take half the CPU: large now 50 ms, medium 28, small 20
  int runs_to_recover = 0;
  while ((*s)->last_latency_ms() > 30 || runs_to_recover == 0) {
    ASSERT_TRUE((*s)->run({&in, 1}).ok());
    ASSERT_LT(++runs_to_recover, 12) << "the manager did not step down";
  }
  EXPECT_LE((*s)->current(), 1);
  for (int run = 0; run < 60; ++run) {
    ASSERT_TRUE((*s)->run({&in, 1}).ok());
    EXPECT_LE((*s)->last_latency_ms(), 30) << "run " << run << " under load";
  }
  load = 1.0;
  for (int run = 0; run < 100; ++run) ASSERT_TRUE((*s)->run({&in, 1}).ok());
  EXPECT_EQ((*s)->current(), 2) << "back to large once the load is gone";
}

TEST(FamilySession, WarmUpMeasuresExpectedLatenciesNonDecreasing) {
  auto s = make_session(25);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // Measured times say medium is slower than large: expected latencies still rise with size.
  const std::vector<double> measured = {10, 30, 20, 40};
  (*s)->set_latency_source([&](int v, double) { return measured[static_cast<size_t>(v)]; });
  const rt::HostTensor image = small_image();
  const rt::Tensor in = image.view();
  ASSERT_TRUE((*s)->warm_up({&in, 1}, 1).ok());
  EXPECT_EQ((*s)->expected_ms(), (std::vector<double>{10, 30, 30, 40}));
  ASSERT_NE((*s)->controller(), nullptr);
  EXPECT_EQ((*s)->current(), 0);
}

TEST(FamilySession, SwitchingVariantsAfterWarmUpAllocatesNothing) {
  auto s = make_session(0);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const rt::HostTensor image = small_image();
  const rt::Tensor in = image.view();
  ASSERT_TRUE((*s)->warm_up({&in, 1}, 1).ok());
  const int64_t before = g_allocations.load();
  for (int round = 0; round < 3; ++round) {
    for (int v = 0; v < 4; ++v) {
      ASSERT_TRUE((*s)->set_variant(v).ok());
      ASSERT_TRUE((*s)->run({&in, 1}).ok());
      EXPECT_EQ((*s)->last_variant(), v);
    }
  }
  EXPECT_EQ(g_allocations.load() - before, 0) << "allocations while switching among variants";
}

TEST(FamilySession, FloorsKeepTheManagerAboveAVariant) {
  auto family = rt::load_family_package(family_bytes(), nullptr);
  ASSERT_TRUE(family.ok());
  rt::FamilySessionOptions options;
  options.session.threads = 1;
  options.budget_ms = 5;  // below every variant: the manager sinks to the floor
  options.expected_ms = {10, 14, 25, 40};
  options.min_macs = 100000000;  // large (148 M) is the smallest with this many
  auto s = rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_NE((*s)->controller(), nullptr);
  EXPECT_EQ((*s)->controller()->floor(), 2);
  (*s)->set_latency_source([](int v, double) { return kDeviceMs[static_cast<size_t>(v)]; });
  const rt::HostTensor image = small_image();
  const rt::Tensor in = image.view();
  for (int run = 0; run < 40; ++run) ASSERT_TRUE((*s)->run({&in, 1}).ok());
  EXPECT_EQ((*s)->current(), 2);

  auto again = rt::load_family_package(family_bytes(), nullptr);
  options.min_macs = 0;
  options.min_accuracy = 0.5;  // the family file gives no accuracies
  auto none = rt::FamilySession::create(std::move(*again), rt::KernelRegistry::standard(), options);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("accuracy of at least"), std::string::npos);
}

TEST(FamilySession, BadArgumentsAreErrors) {
  EXPECT_FALSE(make_session(-1).ok());
  auto wrong_count = make_session(10, {1, 2});
  ASSERT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.status().message().find("2 expected latencies for 4 variants"),
            std::string::npos);
  auto s = make_session(0);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE((*s)->set_variant(4).ok());
  EXPECT_FALSE((*s)->set_budget(0).ok());
  const rt::HostTensor wrong(rt::DType::kFloat, rt::Shape{1, 4, 32, 32});
  const rt::Tensor in = wrong.view();
  auto out = (*s)->run({&in, 1});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("variant 'max'"), std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace sod2
