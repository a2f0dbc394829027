// The Dynamic-OFA budget controller on simulated latency sources (expected latency × a load
// factor × a deterministic jitter), so every run of the test sees the same latencies: it climbs to
// the largest variant that fits and stays, steps down within a few runs of a load spike and climbs
// back after it, does not oscillate when the budget sits between two variants (nor, thanks to the
// back-off, when the expected ratios are wrong), respects its floor, follows set_budget at once,
// rejects bad construction and ignores NaN latencies.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "runtime/family/budget_controller.h"

namespace sod2::rt {
namespace {

const std::vector<double> kExpected = {5, 10, 20, 40, 80};

// ±jitter, a fixed pattern over runs (no random source: the test must not depend on a seed).
double jitter(int run, double amplitude) {
  return 1.0 + amplitude * (static_cast<double>((run * 37) % 21) - 10.0) / 10.0;
}

BudgetController make(std::vector<double> expected, BudgetControllerOptions o) {
  Expected<BudgetController> c = BudgetController::create(std::move(expected), o);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return std::move(c).value();
}

// Runs `runs` simulated runs starting at run index `first`; latency(v, run) is what a run of
// variant v takes. Returns the variant used by each run.
std::vector<int> simulate(BudgetController& c, int first, int runs,
                          const std::function<double(int, int)>& latency) {
  std::vector<int> used;
  for (int r = first; r < first + runs; ++r) {
    const int v = c.current();
    used.push_back(v);
    const int next = c.observe(latency(v, r));
    EXPECT_EQ(next, c.current());
  }
  return used;
}

std::function<double(int, int)> model(const std::vector<double>& actual, double load,
                                      double amplitude = 0.05) {
  return [actual, load, amplitude](int v, int run) {
    return actual[v] * load * jitter(run, amplitude);
  };
}

TEST(BudgetController, DefaultStartIsTheLargestThatFits) {
  EXPECT_EQ(make(kExpected, {.budget_ms = 33}).current(), 2);
  EXPECT_EQ(make(kExpected, {.budget_ms = 80}).current(), 4);
  EXPECT_EQ(make(kExpected, {.budget_ms = 1}).current(), 0);
  EXPECT_EQ(make(kExpected, {.budget_ms = 1, .floor = 1}).current(), 1);
  BudgetController c = make(kExpected, {.budget_ms = 33});
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kStart);
  EXPECT_EQ(c.last_decision().to_string(), "start: variant 2, budget 33.0 ms");
  EXPECT_EQ(c.options().cooldown_runs, 8);  // -1 resolved to the window
}

TEST(BudgetController, ClimbsToTheLargestFeasibleVariantAndStays) {
  BudgetController c = make(kExpected, {.budget_ms = 33, .start = 0});
  const std::vector<int> used = simulate(c, 0, 500, model(kExpected, 1.0));
  // Two steps up (0 → 1 → 2), each after at most a cooldown of runs; 40 ms does not fit 33 ms.
  EXPECT_EQ(c.current(), 2);
  EXPECT_EQ(c.switches(), 2);
  EXPECT_EQ(used[20], 2);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kNoHeadroom);
  EXPECT_NE(c.last_decision().to_string().find("no headroom: predicted"), std::string::npos);
}

TEST(BudgetController, LoadSpikeStepsDownQuicklyAndClimbsBackAfter) {
  BudgetController c = make(kExpected, {.budget_ms = 33});
  ASSERT_EQ(c.current(), 2);
  simulate(c, 0, 100, model(kExpected, 1.0));
  ASSERT_EQ(c.current(), 2);
  ASSERT_EQ(c.switches(), 0);

  // Other apps double every latency: variant 2 now takes ~40 ms.
  const std::vector<int> spike = simulate(c, 100, 200, model(kExpected, 2.0));
  int first_down = -1;
  for (int i = 0; i < static_cast<int>(spike.size()); ++i) {
    if (spike[i] < 2) {
      first_down = i;
      break;
    }
  }
  ASSERT_GE(first_down, 0);
  // The full window still holds 8 runs at the old load: the median misses once 5 new runs do,
  // and the 6th run (index 5) already uses the smaller variant.
  EXPECT_LE(first_down, 5);
  EXPECT_EQ(c.current(), 1);   // 20 ms under load fits; 40 ms would not
  EXPECT_EQ(c.switches(), 1);  // and no flip-flop while the load lasts

  // The load ends: back up within about a window of runs (the old window's median must clear).
  const std::vector<int> after = simulate(c, 300, 100, model(kExpected, 1.0));
  int back = -1;
  for (int i = 0; i < static_cast<int>(after.size()); ++i) {
    if (after[i] == 2) {
      back = i;
      break;
    }
  }
  ASSERT_GE(back, 0);
  EXPECT_LE(back, 12);
  EXPECT_EQ(c.current(), 2);
  EXPECT_EQ(c.switches(), 2);
}

TEST(BudgetController, BigSpikeJumpsSeveralLevelsAtOnce) {
  BudgetController c = make(kExpected, {.budget_ms = 33, .start = 4});
  // Variant 4 takes 80 ms: 40 ms for variant 3 still misses, so it goes to 2 in one switch.
  simulate(c, 0, 3, model(kExpected, 1.0, 0.0));
  EXPECT_EQ(c.current(), 2);
  EXPECT_EQ(c.switches(), 1);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kStepDown);
  EXPECT_EQ(c.last_decision().to_string(),
            "over budget: median 80.0 ms > 33.0 ms; 4 → 2 (predicted 20.0 ms)");
}

TEST(BudgetController, LatenciesFromBeforeASwitchDoNotCount) {
  BudgetController c = make(kExpected, {.budget_ms = 33, .start = 3});
  simulate(c, 0, 3, model(kExpected, 1.0, 0.0));
  ASSERT_EQ(c.current(), 2);
  // Huge latencies right after the switch: the new variant's window starts empty, so nothing is
  // decided until min_samples of its own runs.
  EXPECT_EQ(c.observe(1000), 2);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kCollecting);
  EXPECT_EQ(c.last_decision().to_string(), "collecting: 1 sample since the last switch");
  EXPECT_EQ(c.observe(1000), 2);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kCollecting);
  EXPECT_EQ(c.observe(1000), 0);  // now the median of its own three runs misses by far
}

TEST(BudgetController, NoOscillationWhenTheBudgetSitsBetweenTwoVariants) {
  // 20 ms fits 30 ms, 40 ms does not; ±10% jitter.
  {
    BudgetController c = make(kExpected, {.budget_ms = 30});
    simulate(c, 0, 1000, model(kExpected, 1.0, 0.10));
    EXPECT_EQ(c.current(), 2);
    EXPECT_EQ(c.switches(), 0);
  }
  // The budget just under the larger one's latency, which the jitter makes straddle it.
  {
    BudgetController c = make(kExpected, {.budget_ms = 39, .start = 3});
    simulate(c, 0, 1000, model(kExpected, 1.0, 0.10));
    EXPECT_EQ(c.current(), 2);
    EXPECT_LE(c.switches(), 2);
  }
  // From below, with the smallest useful margin.
  {
    BudgetController c = make(kExpected, {.budget_ms = 39, .up_margin = 0.95, .start = 0});
    simulate(c, 0, 1000, model(kExpected, 1.0, 0.10));
    EXPECT_EQ(c.current(), 2);
    EXPECT_LE(c.switches(), 3);
  }
}

TEST(BudgetController, WrongExpectedRatiosBackOffInsteadOfOscillating) {
  // Estimated 40 ms for the largest, but it really takes 60: from variant 1 (20 ms) a step up is
  // predicted at 40 ≤ 42.5 and then misses the 50 ms budget every time.
  const std::vector<double> expected = {10, 20, 40};
  const std::vector<double> actual = {10, 20, 60};
  BudgetController c = make(expected, {.budget_ms = 50});
  const std::vector<int> used = simulate(c, 0, 1000, model(actual, 1.0, 0.02));
  int over = 0;
  for (int v : used) over += v == 2;
  EXPECT_LE(c.switches(), 20);
  EXPECT_LE(over, 50);  // runs spent on the variant that misses

  // Without the back-off, the cooldown alone lets it try again every few runs.
  BudgetController naive = make(expected, {.budget_ms = 50, .max_up_backoff = 1});
  simulate(naive, 0, 1000, model(actual, 1.0, 0.02));
  EXPECT_GT(naive.switches(), 100);
}

TEST(BudgetController, FloorIsRespected) {
  // Nothing at or above the floor fits: start at the floor and stay there.
  BudgetController c = make(kExpected, {.budget_ms = 15, .floor = 2});
  EXPECT_EQ(c.current(), 2);
  const std::vector<int> used = simulate(c, 0, 200, model(kExpected, 1.0));
  for (int v : used) EXPECT_EQ(v, 2);
  EXPECT_EQ(c.switches(), 0);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kOverAtFloor);

  // A spike that would call for variant 0 stops at the floor.
  BudgetController d = make(kExpected, {.budget_ms = 45, .floor = 2, .start = 3});
  simulate(d, 0, 100, model(kExpected, 10.0));
  EXPECT_EQ(d.current(), 2);
  EXPECT_EQ(d.switches(), 1);
}

TEST(BudgetController, SetBudgetTakesEffectAtOnce) {
  BudgetController c = make(kExpected, {.budget_ms = 33});
  simulate(c, 0, 20, model(kExpected, 1.0, 0.0));
  ASSERT_EQ(c.current(), 2);

  // Lower: the window's median (20 ms) misses 15 ms, so the next run already uses variant 1.
  c.set_budget(15);
  EXPECT_EQ(c.budget_ms(), 15);
  EXPECT_EQ(c.current(), 1);
  EXPECT_TRUE(c.last_decision().from_set_budget);
  EXPECT_EQ(c.last_decision().to_string(),
            "budget set to 15.0 ms; over budget: median 20.0 ms > 15.0 ms; 2 → 1 (predicted 10.0 "
            "ms)");

  // Raise it: no latencies of variant 1 yet, so nothing to decide until min_samples...
  c.set_budget(100);
  EXPECT_EQ(c.current(), 1);
  EXPECT_EQ(c.last_decision().kind, DecisionKind::kBudgetChanged);
  // ...then the first step up does not wait for the cooldown; later ones do, one level at a time.
  const std::vector<int> used = simulate(c, 20, 60, model(kExpected, 1.0, 0.0));
  EXPECT_EQ(used[3], 2);
  EXPECT_EQ(c.current(), 4);  // 80 ms ≤ 100 × 0.85
  EXPECT_EQ(c.switches(), 4);

  // Invalid budgets are ignored.
  for (double bad : {0.0, -5.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    c.set_budget(bad);
    EXPECT_EQ(c.budget_ms(), 100);
    EXPECT_EQ(c.last_decision().kind, DecisionKind::kIgnoredBudget);
  }
  EXPECT_EQ(c.current(), 4);
}

TEST(BudgetController, NanAndNegativeLatenciesAreIgnored) {
  BudgetController c = make(kExpected, {.budget_ms = 33, .start = 0});
  BudgetController reference = make(kExpected, {.budget_ms = 33, .start = 0});
  const auto latency = model(kExpected, 1.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double bad[] = {std::nan(""), -1.0, inf, -inf};
  for (int r = 0; r < 100; ++r) {
    const int v = c.current();
    ASSERT_EQ(v, reference.current()) << "run " << r;
    const double bad_latency = bad[r % 4];
    EXPECT_EQ(c.observe(bad_latency), v);
    EXPECT_EQ(c.last_decision().kind, DecisionKind::kIgnoredLatency);
    c.observe(latency(v, r));
    reference.observe(latency(v, r));
    EXPECT_EQ(c.last_decision().to_string(), reference.last_decision().to_string());
  }
  EXPECT_EQ(c.runs(), 100);
  EXPECT_EQ(c.switches(), reference.switches());
  c.observe(std::nan(""));
  EXPECT_EQ(c.last_decision().to_string(), "ignored latency nan ms");
}

TEST(BudgetController, StepUpMessage) {
  BudgetController c = make(kExpected, {.budget_ms = 30, .cooldown_runs = 0, .start = 1});
  c.observe(10);
  c.observe(10);
  EXPECT_EQ(c.observe(10), 2);
  EXPECT_EQ(c.last_decision().to_string(), "headroom: predicted 20.0 ms ≤ 25.5 ms; 1 → 2");
  EXPECT_EQ(c.switches(), 1);
}

TEST(BudgetController, InvalidConstruction) {
  struct Case {
    std::vector<double> expected;
    BudgetControllerOptions options;
    const char* message_part;
  };
  const double nan = std::nan("");
  const std::vector<Case> cases = {
      {{}, {.budget_ms = 10}, "empty"},
      {{1, 0, 2}, {.budget_ms = 10}, "variant 1 must be finite and > 0"},
      {{-1}, {.budget_ms = 10}, "variant 0 must be finite and > 0"},
      {{1, nan}, {.budget_ms = 10}, "variant 1 must be finite and > 0"},
      {{1, std::numeric_limits<double>::infinity()}, {.budget_ms = 10}, "finite"},
      {{1, 3, 2}, {.budget_ms = 10}, "must not decrease"},
      {{1, 2}, {.budget_ms = 0}, "budget"},
      {{1, 2}, {.budget_ms = -3}, "budget"},
      {{1, 2}, {.budget_ms = nan}, "budget"},
      {{1, 2}, {.budget_ms = 10, .window = 0}, "window"},
      {{1, 2}, {.budget_ms = 10, .min_samples = 0}, "min_samples"},
      {{1, 2}, {.budget_ms = 10, .window = 4, .min_samples = 5}, "min_samples"},
      {{1, 2}, {.budget_ms = 10, .up_margin = 0}, "up_margin"},
      {{1, 2}, {.budget_ms = 10, .up_margin = 1.5}, "up_margin"},
      {{1, 2}, {.budget_ms = 10, .up_margin = nan}, "up_margin"},
      {{1, 2}, {.budget_ms = 10, .cooldown_runs = -2}, "cooldown_runs"},
      {{1, 2}, {.budget_ms = 10, .floor = -1}, "floor"},
      {{1, 2}, {.budget_ms = 10, .floor = 2}, "floor"},
      {{1, 2, 3}, {.budget_ms = 10, .floor = 1, .start = 0}, "start"},
      {{1, 2}, {.budget_ms = 10, .start = 2}, "start"},
      {{1, 2}, {.budget_ms = 10, .max_up_backoff = 0}, "max_up_backoff"},
  };
  for (const Case& k : cases) {
    Expected<BudgetController> c = BudgetController::create(k.expected, k.options);
    ASSERT_FALSE(c.ok()) << k.message_part;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(c.status().message().find(k.message_part), std::string::npos) << c.status().message();
  }
  // Equal expected latencies are allowed (variants the estimate cannot tell apart).
  EXPECT_TRUE(BudgetController::create({1, 1, 2}, {.budget_ms = 10}).ok());
}

}  // namespace
}  // namespace sod2::rt
