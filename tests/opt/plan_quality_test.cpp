// How good the symbolic plan is, against the per-binding yardsticks (issue #18 item 6): on every
// model of ../shared/models, at its three declared bindings and at 50 seeded random bindings
// inside its ranges (multiples respected, execution symbols bound explicitly inside their
// bounds), the layout a binding runs with (pipeline::plan_at: its plan version, or the layout
// a session makes at that binding) must need
//   arena <= 1.02 x greedy-by-size at that binding (same order), and
//   arena <= 1.05 x the lower bound (peak live bytes in the plan's order)
// where greedy itself is within 1.05 x the lower bound. Where greedy is above that, the
// greedy + 2% rule is the one that must hold: no planner of this kind is held to more than the
// per-binding greedy. A table (model, binding, arena/LB, greedy/LB, version) goes to stdout so
// that the numbers can be reported.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "core/onnx/onnx_import.h"
#include "core/opt/memory_plan.h"
#include "core/opt/plan_types.h"
#include "core/opt/plan_verifier.h"
#include "core/opt/report_binding.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"
#include "core/sym/transform.h"
#include "corpus.h"
#include "test_rng.h"

namespace sod2::opt {
namespace {

constexpr int kRandomBindings = 50;
constexpr double kGreedySlack = 1.02;
constexpr double kBoundSlack = 1.05;

using testing::Rng;

// A value of `r` on its multiple, uniform-ish in [r.lo, hi].
int64_t draw(const sym::SymbolRange& r, int64_t hi, Rng* rng) {
  const int64_t m = std::max<int64_t>(r.multiple, 1);
  return r.lo + m * rng->in(0, std::max<int64_t>(hi - r.lo, 0) / m);
}

// A binding inside the ranges, every symbol bound: input symbols on their multiple, then each
// execution symbol between its low end and the value a report gives it at the symbols drawn so
// far (complete_binding: its bound at this binding); redrawn until RDP's assumptions hold.
std::optional<sym::Binding> random_binding(const RdpResult& rdp, Rng* rng) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    sym::Binding drawn;
    for (const SymbolInfo& info : rdp.symbols()) {
      if (rdp.is_execution_symbol(info.symbol)) continue;
      const sym::SymbolRange r = rdp.ranges().get(info.symbol);
      drawn[info.symbol] = draw(r, std::min(r.hi, kUnboundedReportValue), rng);
    }
    for (const SymbolInfo& info : rdp.symbols()) {
      if (!rdp.is_execution_symbol(info.symbol)) continue;
      const sym::Symbol one[] = {info.symbol};
      const int64_t hi = complete_binding(rdp, one, drawn).at(info.symbol);
      drawn[info.symbol] = draw(rdp.ranges().get(info.symbol), hi, rng);
    }
    std::map<std::string, int64_t> values;
    for (const auto& [s, v] : drawn) values[s.name()] = v;
    auto b = make_binding(rdp, values);
    if (b.ok()) return *b;
  }
  return std::nullopt;
}

// The symbols a declared binding leaves out (execution symbols) take the values the planner
// judged it at, explicitly.
sym::Binding complete(const RdpResult& rdp, const sym::Binding& b) {
  std::vector<sym::Symbol> all;
  for (const SymbolInfo& info : rdp.symbols()) all.push_back(info.symbol);
  return complete_binding(rdp, all, b);
}

std::string binding_text(const RdpResult& rdp, const sym::Binding& b) {
  std::string out;
  for (const auto& [s, v] : b) {
    if (rdp.is_execution_symbol(s)) continue;
    out += (out.empty() ? "" : ",") + s.name() + "=" + std::to_string(v);
  }
  return out;
}

class PlanQuality : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanQuality, NoWorseThanGreedyNorFarFromTheBound) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const testing::CorpusModel& m = *found;
  auto model = import_onnx_file(m.file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto rdp = run_rdp(*model, m.options);
  ASSERT_TRUE(rdp.ok()) << rdp.status().to_string();

  std::vector<sym::Binding> bench;
  for (const auto& b : m.bindings) {
    auto binding = make_binding(*rdp, b);
    ASSERT_TRUE(binding.ok()) << binding.status().to_string();
    bench.push_back(*binding);
  }
  // The plan the runtime runs (the pipeline's: over the groups the CPU has fused kernels for).
  pipeline::CompileOptions options;
  options.rdp = m.options;
  options.check_bindings = bench;
  const auto start = std::chrono::steady_clock::now();
  auto compiled = pipeline::compile(std::move(*model), options);
  const double plan_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const MemoryPlan* plan = &compiled->plan;

  std::vector<sym::Binding> bindings;
  for (const sym::Binding& b : bench) bindings.push_back(complete(*rdp, b));
  Rng rng{std::hash<std::string>()(m.name) ^ 0x5eed};
  for (int i = 0; i < kRandomBindings; ++i) {
    auto b = random_binding(*rdp, &rng);
    ASSERT_TRUE(b.has_value()) << "no random binding satisfies the assumptions";
    bindings.push_back(*b);
  }

  const bool segmented =
      std::any_of(plan->segments.begin(), plan->segments.end(), [](int32_t x) { return x > 0; });
  std::printf("%-18s %5zu tensors%s, %zu versions (%zu cells), planned in %.0f ms\n",
              m.name.c_str(), plan->tensors.tensors.size(), segmented ? " (EDO segments)" : "",
              plan->versions.versions.size(), plan->versions.version_of_cell.size(), plan_ms);
  double worst_lb = 0, worst_greedy = 0, worst_free_greedy = 0;
  for (size_t i = 0; i < bindings.size(); ++i) {
    auto at = pipeline::plan_at(*compiled, bindings[i]);
    ASSERT_TRUE(at.ok()) << at.status().to_string();
    // With EDO segments, no offset may wait for a size known only later (symbolic_planner.h),
    // at this binding as at any other: the greedy a plan is held to keeps that rule too (the
    // better of greedy by size with later segments on top, and with the weaker rule).
    // evaluate_plan's greedy_bytes ignores it and is printed next to it.
    int64_t greedy_bytes = at->greedy_bytes;
    if (segmented) {
      std::vector<int64_t> sizes;
      for (const PlacedTensor& t : at->tensors) sizes.push_back(t.size);
      greedy_bytes = plan_greedy_by_size(sizes, plan->lives, plan->segments).arena_bytes;
      auto known = plan_greedy_known_steps(sizes, plan->lives, plan->segments);
      if (known) greedy_bytes = std::min(greedy_bytes, known->arena_bytes);
    }
    const double lb = static_cast<double>(std::max<int64_t>(at->lower_bound_bytes, 1));
    const double arena = static_cast<double>(at->arena_bytes);
    const double greedy = static_cast<double>(std::max<int64_t>(greedy_bytes, 1));
    const double free_greedy = static_cast<double>(std::max<int64_t>(at->greedy_bytes, 1));
    worst_lb = std::max(worst_lb, arena / lb);
    worst_greedy = std::max(worst_greedy, arena / greedy);
    worst_free_greedy = std::max(worst_free_greedy, arena / free_greedy);
    const std::string where = m.name + " " + (i < bench.size() ? "declared" : "random") + " " +
                              binding_text(*rdp, bindings[i]);
    if (i < bench.size()) {
      std::printf("  %-32s arena/LB %.3f  greedy/LB %.3f", binding_text(*rdp, bindings[i]).c_str(),
                  arena / lb, greedy / lb);
      if (segmented) std::printf("  (greedy ignoring segments/LB %.3f)", free_greedy / lb);
      std::printf("  version %d\n", at->version);
    }
    EXPECT_LE(arena, kGreedySlack * greedy)
        << where << ": arena " << at->arena_bytes << ", greedy " << greedy_bytes;
    if (greedy <= kBoundSlack * lb) {
      EXPECT_LE(arena, kBoundSlack * lb)
          << where << ": arena " << at->arena_bytes << ", lower bound " << at->lower_bound_bytes;
    }
  }
  std::printf("  worst over %zu bindings: arena/LB %.3f, arena/greedy %.3f", bindings.size(),
              worst_lb, worst_greedy);
  if (segmented) std::printf(", arena/greedy ignoring segments %.3f", worst_free_greedy);
  std::printf("\n");
  std::fflush(stdout);
}

std::vector<std::string> corpus_names() { return testing::corpus_names(SOD2_SHARED_DIR "/models"); }

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, PlanQuality, ::testing::ValuesIn(corpus_names()), test_name);

// Random lifetimes and sizes with EDO segments that are consistent (a tensor's size is known by
// its first step): segments 0, or the first step of an "EDO output" for some tensors and the
// tensors that start after it.
struct SegmentedInstance {
  std::vector<int64_t> sizes;
  std::vector<Lifetime> lives;
  std::vector<int32_t> segments;
};

SegmentedInstance random_segmented(Rng* rng) {
  SegmentedInstance in;
  const int64_t n = rng->in(2, 40);
  std::vector<int32_t> edo_steps{static_cast<int32_t>(rng->in(1, 10)),
                                 static_cast<int32_t>(rng->in(5, 20))};
  for (int64_t i = 0; i < n; ++i) {
    const auto first = static_cast<int32_t>(rng->in(0, 24));
    in.lives.push_back({first, first + static_cast<int32_t>(rng->in(0, 8))});
    in.sizes.push_back(64 * rng->in(0, 40));
    int32_t seg = 0;
    for (int32_t e : edo_steps)
      if (e <= first && rng->in(0, 2) == 0) seg = std::max(seg, e);
    in.segments.push_back(seg);
  }
  return in;
}

TEST(KnownStepsGreedy, ValidKeepsTheRuleAndSometimesBeatsSegmentsOnTop) {
  Rng rng{2024};
  int better = 0;
  for (int round = 0; round < 400; ++round) {
    const SegmentedInstance in = random_segmented(&rng);
    const auto known = plan_greedy_known_steps(in.sizes, in.lives, in.segments);
    ASSERT_TRUE(known.has_value()) << "round " << round;
    std::vector<PlacedTensor> placed;
    for (size_t t = 0; t < in.sizes.size(); ++t)
      placed.push_back({in.sizes[t], known->offsets[t], in.lives[t]});
    Status st = verify_layout(placed, known->arena_bytes);
    ASSERT_TRUE(st.ok()) << "round " << round << ": " << st.to_string();
    // The layering in offset order keeps the rule, and needs no more than the greedy here.
    const Layering layering = make_layering(known->offsets, in.sizes, in.lives, {});
    EXPECT_TRUE(layering_respects_segments(layering, in.lives, in.segments)) << "round " << round;
    EXPECT_LE(layering_arena(layering, in.sizes), known->arena_bytes) << "round " << round;
    // Checked independently: every tensor under t (transitively) is known by t's first step.
    std::vector<int32_t> latest(in.sizes.size(), 0);
    for (int32_t t : layering.order) {
      latest[t] = in.segments[t];
      for (int32_t u : layering.below[t]) latest[t] = std::max(latest[t], latest[u]);
      EXPECT_LE(latest[t], in.lives[t].first_step) << "round " << round << " tensor " << t;
    }
    better += known->arena_bytes < plan_greedy_by_size(in.sizes, in.lives, in.segments).arena_bytes;
  }
  EXPECT_GT(better, 0);
}

TEST(KnownStepsGreedy, SegmentAfterTheFirstStepHasNoPlan) {
  // Tensor 1's size would be known only at step 3, after it is written at step 1.
  const std::vector<int64_t> sizes{64, 64};
  const std::vector<Lifetime> lives{{0, 2}, {1, 2}};
  EXPECT_FALSE(plan_greedy_known_steps(sizes, lives, std::vector<int32_t>{0, 3}).has_value());
  // Without segments it is greedy by size.
  auto plain = plan_greedy_known_steps(sizes, lives, std::vector<int32_t>{0, 0});
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->offsets, plan_greedy_by_size(sizes, lives).offsets);
}

TEST(KnownStepsGreedy, SymbolicPlanOffsetsOnlyUseSizesKnownByTheFirstStep) {
  Rng rng{77};
  for (int round = 0; round < 100; ++round) {
    const SegmentedInstance in = random_segmented(&rng);
    std::vector<sym::SymExpr> sizes;
    std::vector<sym::Symbol> symbols;
    for (size_t t = 0; t < in.sizes.size(); ++t) {
      symbols.push_back(sym::symbol("s" + std::to_string(t)));
      sizes.push_back(64 * sym::SymExpr(symbols.back()));
    }
    std::vector<std::vector<int64_t>> refs{in.sizes};
    std::vector<int64_t> other;
    for (size_t t = 0; t < in.sizes.size(); ++t) other.push_back(64 * rng.in(0, 40));
    refs.push_back(other);
    SymbolicPlanRequest req;
    req.sizes = sizes;
    req.lives = in.lives;
    req.references = refs;
    req.judges = refs;
    req.segments = in.segments;
    const SymbolicPlan plan = plan_symbolic(req);
    for (size_t t = 0; t < sizes.size(); ++t) {
      for (const sym::Symbol& s : sym::free_symbols(plan.offsets[t])) {
        const size_t u = static_cast<size_t>(std::stoi(s.name().substr(1)));
        EXPECT_LE(in.segments[u], in.lives[t].first_step)
            << "round " << round << ": offset of " << t << " needs s" << u;
      }
    }
  }
}

}  // namespace
}  // namespace sod2::opt
