// Every model of ../shared/models, compiled with its models.json ranges (the plan that runs),
// evaluated at 100 seeded random bindings of its input symbols inside those ranges (multiples
// respected): the plan is finite, or the binding is refused with an error naming the symbol or
// assumption; never a size that overflows. Execution symbols are left unbound, so they take their
// bound expressions at the binding (report_binding.h), which must stay within their constant ranges
// and limits.
#include <iostream>

#include <gtest/gtest.h>

#include "core/opt/memory_plan.h"
#include "core/opt/report_binding.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"
#include "corpus.h"
#include "test_rng.h"

namespace sod2::opt {
namespace {

constexpr int kRandomBindings = 100;

using testing::Rng;

bool mentions_overflow(const std::string& message) {
  return message.find("overflow") != std::string::npos;
}

// The model as reports show it and the runtime runs it (the pipeline's plan, over the groups the
// CPU really fuses); the program itself is not needed here.
Expected<pipeline::CompiledModel> compile_for_reports(const testing::CorpusModel& m) {
  pipeline::CompileOptions options;
  options.rdp = m.options;
  options.build_program = false;
  return pipeline::compile_file(m.file.string(), options);
}

class PlanBindings : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanBindings, FiniteAtRandomBindingsInsideTheRanges) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  auto compiled = compile_for_reports(*found);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const RdpResult* rdp = &compiled->rdp;
  const MemoryPlan* plan = &compiled->plan;

  Rng rng{std::hash<std::string>()(found->name) ^ 0x9e3779b97f4a7c15ULL};
  int planned = 0;
  for (int i = 0; i < kRandomBindings; ++i) {
    std::map<std::string, int64_t> values;
    for (const SymbolInfo& info : rdp->symbols()) {
      if (info.kind != SymbolKind::kInput) continue;
      const sym::SymbolRange r = rdp->ranges().get(info.symbol);
      values[info.symbol.name()] = r.lo + r.multiple * rng.in(0, (r.hi - r.lo) / r.multiple);
    }
    std::string where;
    for (const auto& [name, v] : values) where += name + "=" + std::to_string(v) + " ";
    auto binding = make_binding(*rdp, values);
    if (!binding.ok()) {
      // Refused: only for a broken assumption, said so.
      EXPECT_NE(binding.status().message().find("assumption"), std::string::npos)
          << where << binding.status().message();
      continue;
    }
    auto at = evaluate_plan(*plan, *rdp, *binding);
    if (!at.ok()) {
      EXPECT_FALSE(mentions_overflow(at.status().message())) << where << at.status().message();
      continue;
    }
    ++planned;
    EXPECT_GE(at->arena_bytes, 0) << where;
    EXPECT_LE(at->arena_bytes, at->naive_bytes) << where;
    EXPECT_GE(at->arena_bytes, at->lower_bound_bytes) << where;
    for (const auto& [s, v] : at->binding) {
      if (!rdp->is_execution_symbol(s)) continue;
      const sym::SymbolRange r = rdp->ranges().get(s);
      EXPECT_GE(v, r.lo) << where << s.name();
      if (!has_no_useful_bound(*rdp, s)) {
        EXPECT_LE(v, r.hi) << where << s.name();
      }
      // What a report takes is what a user may bind.
      if (const auto limit = execution_limit(*rdp, s, at->binding)) {
        EXPECT_LE(v, std::max(*limit, r.lo)) << where << s.name();
      }
    }
  }
  EXPECT_GT(planned, 0) << "no random binding gave a plan";
}

// At models.json's three bindings: the arena with execution symbols at their bound expressions
// (now) against at their constant bounds (the top of the ranges, as reports had it before).
TEST_P(PlanBindings, BoundExpressionsNeverGrowTheArenaAtTheBenchmarkBindings) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  auto compiled = compile_for_reports(*found);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const RdpResult* rdp = &compiled->rdp;
  const MemoryPlan* plan = &compiled->plan;
  for (const auto& values : found->bindings) {
    auto binding = make_binding(*rdp, values);
    ASSERT_TRUE(binding.ok()) << binding.status().to_string();
    sym::Binding constant = *binding;
    bool has_execution = false;
    for (const SymbolInfo& info : rdp->symbols()) {
      if (info.kind != SymbolKind::kExecution) continue;
      constant[info.symbol] = report_upper_bound(*rdp, info.symbol);
      has_execution = true;
    }
    if (!has_execution) continue;
    auto now = evaluate_plan(*plan, *rdp, *binding);
    auto before = evaluate_plan(*plan, *rdp, constant);
    ASSERT_TRUE(now.ok()) << now.status().to_string();
    std::string where;
    for (const auto& [name, v] : values) where += name + "=" + std::to_string(v) + " ";
    if (!before.ok()) {
      std::cout << found->name << " " << where << ": constant bounds: " << before.status().message()
                << "; bound expressions: arena " << now->arena_bytes << "\n";
      continue;
    }
    std::cout << found->name << " " << where << ": arena " << before->arena_bytes
              << " bytes with constant bounds, " << now->arena_bytes << " with bound expressions\n";
    EXPECT_LE(now->arena_bytes, before->arena_bytes) << where;
  }
}

std::vector<std::string> names() { return testing::corpus_names(SOD2_SHARED_DIR "/models"); }

INSTANTIATE_TEST_SUITE_P(Corpus, PlanBindings, ::testing::ValuesIn(names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           return testing::gtest_safe_name(p.param);
                         });

// The corpus must be there: an empty suite would pass silently.
TEST(PlanBindingsSetup, CorpusIsReadable) {
  auto corpus = testing::read_corpus(SOD2_SHARED_DIR "/models");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  EXPECT_FALSE(corpus->empty());
}

}  // namespace
}  // namespace sod2::opt
