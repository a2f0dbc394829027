// The timeline's rectangles equal `sod2 plan --json` at the same binding, for every model of the
// corpus at two of its bindings; and what the timeline derives (live bytes, peaks, hits, a rebind)
// agrees with the plan.
#include <gtest/gtest.h>

#include "app/studio/plan/timeline_model.h"
#include "core/rdp/binding.h"
#include "core/sym/bounded_text.h"
#include "plan_test_support.h"

namespace sod2::studio {
namespace {

const char* const kModels = SOD2_SHARED_DIR "/models";

class TimelineCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(TimelineCorpus, RectsEqualPlanJsonAtTwoBindings) {
  auto found = sod2::testing::find_corpus_model(kModels, GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  ASSERT_GE(found->bindings.size(), 3u);
  for (size_t b : {size_t{0}, size_t{2}}) {
    const auto& bind = found->bindings[b];
    SCOPED_TRACE("binding " + std::to_string(b));
    auto planned = testing::plan_like_cli(*found, bind);
    ASSERT_TRUE(planned.ok()) << planned.status().to_string();
    const testing::PlannedModel& p = **planned;
    auto built = TimelineModel::build(p.model, p.rdp, p.plan, p.at);
    ASSERT_TRUE(built.ok()) << built.status().to_string();
    const TimelineModel& tl = *built;
    auto doc = testing::plan_json_from_cli(*found, bind);
    ASSERT_TRUE(doc.ok()) << doc.status().to_string();

    const auto& tensors = (*doc)["tensors"];
    ASSERT_EQ(tl.rects().size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TimelineRect& r = tl.rects()[i];
      const auto& j = tensors[i];
      EXPECT_EQ(r.tensor, static_cast<int>(i));
      EXPECT_EQ(r.name, j["name"].get<std::string>()) << i;
      EXPECT_EQ(r.offset, j["offset"].get<int64_t>()) << r.name;
      EXPECT_EQ(r.size, j["size"].get<int64_t>()) << r.name;
      EXPECT_EQ(r.first_step, j["first_step"].get<int64_t>()) << r.name;
      EXPECT_EQ(r.last_step, j["last_step"].get<int64_t>()) << r.name;
      // The JSON's symbolic section is the whole-range plan, which a binding uses when it falls in
      // no bucketed version.
      if ((*doc)["binding"]["version"].get<int>() == -1) {
        EXPECT_EQ(r.size_expr, (*doc)["plan"]["tensors"][i]["size"].get<std::string>()) << r.name;
        EXPECT_EQ(r.offset_expr, (*doc)["plan"]["tensors"][i]["offset"].get<std::string>())
            << r.name;
      }
    }
    EXPECT_EQ(tl.arena_bytes(), (*doc)["summary"]["arena_bytes"].get<int64_t>());
    EXPECT_EQ(tl.lower_bound_bytes(), (*doc)["summary"]["lower_bound_bytes"].get<int64_t>());
    EXPECT_EQ(tl.num_steps(), static_cast<int64_t>((*doc)["order"]["steps"].size()));
    EXPECT_EQ(tl.plan_version(), (*doc)["binding"]["version"].get<int>());

    // The lower bound is the peak of live bytes in this order: the peak steps reach it.
    EXPECT_EQ(tl.peak_live_bytes(), tl.lower_bound_bytes());
    ASSERT_FALSE(tl.peak_steps().empty());
    for (int64_t s : tl.peak_steps())
      EXPECT_EQ(tl.live_bytes_per_step()[static_cast<size_t>(s)], tl.lower_bound_bytes());

    // A valid plan: the centre of each rectangle hits exactly that tensor.
    for (const TimelineRect& r : tl.rects()) {
      if (r.size == 0) continue;
      const double step = (static_cast<double>(r.first_step) + r.last_step + 1) / 2;
      const double offset = static_cast<double>(r.offset) + static_cast<double>(r.size) / 2;
      EXPECT_EQ(tl.all_hits(step, offset), std::vector<int>{r.tensor}) << r.name;
    }
    // The values viewing each tensor's bytes, as the document lists them.
    for (const TimelineRect& r : tl.rects())
      EXPECT_EQ(r.views, (*doc)["plan"]["tensors"][static_cast<size_t>(r.tensor)]["views"]
                             .get<std::vector<std::string>>())
          << r.name;
    if (tl.rects().empty()) continue;
    const std::string tip = tl.tooltip_text(0);
    EXPECT_NE(tip.find(tl.rects()[0].name), std::string::npos) << tip;
    EXPECT_NE(tip.find("lifetime"), std::string::npos) << tip;
  }
}

TEST_P(TimelineCorpus, RebindMatchesAFreshEvaluation) {
  auto found = sod2::testing::find_corpus_model(kModels, GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  auto planned = testing::plan_like_cli(*found, found->bindings[0]);
  ASSERT_TRUE(planned.ok()) << planned.status().to_string();
  const testing::PlannedModel& p = **planned;
  auto tl = TimelineModel::build(p.model, p.rdp, p.plan, p.at);
  ASSERT_TRUE(tl.ok()) << tl.status().to_string();
  auto other = make_binding(p.rdp, found->bindings[1]);
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  auto at = opt::evaluate_plan(p.plan, p.rdp, *other);
  ASSERT_TRUE(at.ok()) << at.status().to_string();
  ASSERT_TRUE(tl->rebind(*at).ok());
  EXPECT_EQ(tl->arena_bytes(), at->arena_bytes);
  EXPECT_EQ(tl->lower_bound_bytes(), at->lower_bound_bytes);
  EXPECT_EQ(tl->plan_version(), at->version);
  const opt::SymbolicPlan& symbolic =
      p.plan.symbolic_of(plan::laid_out_at_binding(at->version) ? -1 : at->version);
  for (size_t t = 0; t < at->tensors.size(); ++t) {
    EXPECT_EQ(tl->rects()[t].offset, at->tensors[t].offset);
    EXPECT_EQ(tl->rects()[t].size, at->tensors[t].size);
    // The expression as reports print it: itself when short, else a stand-in saying its size.
    EXPECT_EQ(tl->rects()[t].offset_expr, plan::laid_out_at_binding(at->version)
                                              ? "(" + plan::version_text(at->version) + ")"
                                              : sym::bounded_text(symbolic.offsets[t]));
  }
  opt::PlanAtBinding wrong = *at;
  wrong.tensors.pop_back();
  EXPECT_FALSE(tl->rebind(wrong).ok());
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return sod2::testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, TimelineCorpus,
                         ::testing::ValuesIn(sod2::testing::corpus_names(kModels)), test_name);

TEST(TimelineCorpusSetup, FindsTheCorpus) {
  EXPECT_GE(sod2::testing::corpus_names(kModels).size(), 10u);
}

}  // namespace
}  // namespace sod2::studio
