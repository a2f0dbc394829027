// The timeline's index and pixel math against brute force, on synthetic rectangles.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "app/studio/plan/rect_index.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/plan/timeline_viewport.h"
#include "plan_test_support.h"

namespace sod2::studio {
namespace {

std::vector<IndexedRect> random_rects(int n, int64_t steps, std::mt19937& rng) {
  std::vector<IndexedRect> out(static_cast<size_t>(n));
  for (IndexedRect& r : out) {
    r.first_step = static_cast<int64_t>(rng() % static_cast<uint32_t>(steps));
    r.last_step = std::min<int64_t>(steps - 1, r.first_step + static_cast<int64_t>(rng() % 30));
    r.offset = static_cast<int64_t>(rng() % 10000);
    r.size = static_cast<int64_t>(rng() % 500);  // some are empty
  }
  return out;
}

bool contains(const IndexedRect& r, double step, double offset) {
  const int64_t s = static_cast<int64_t>(std::floor(step));
  return r.size > 0 && r.first_step <= s && s <= r.last_step &&
         static_cast<double>(r.offset) <= offset && offset < static_cast<double>(r.offset + r.size);
}

TEST(RectIndex, PointQueriesAgreeWithBruteForceOnOverlappingRects) {
  std::mt19937 rng(7);
  const int64_t steps = 200;
  const auto rects = random_rects(3000, steps, rng);
  const RectIndex index(rects, steps);
  std::uniform_real_distribution<double> step(-5, steps + 5), offset(-100, 10600);
  for (int q = 0; q < 20000; ++q) {
    const double s = step(rng), o = q % 10 == 0 ? std::floor(offset(rng)) : offset(rng);
    std::vector<int> expected;
    for (size_t i = 0; i < rects.size(); ++i)
      if (contains(rects[i], s, o)) expected.push_back(static_cast<int>(i));
    ASSERT_EQ(index.at(s, o), expected) << "step " << s << " offset " << o;
  }
}

TEST(RectIndex, WindowQueriesVisitEachMeetingRectOnce) {
  std::mt19937 rng(11);
  const int64_t steps = 300;
  const auto rects = random_rects(2000, steps, rng);
  const RectIndex index(rects, steps);
  std::uniform_real_distribution<double> step(-10, steps + 10), offset(-200, 11000);
  for (int q = 0; q < 500; ++q) {
    double s0 = step(rng), s1 = step(rng), o0 = offset(rng), o1 = offset(rng);
    if (s1 < s0) std::swap(s0, s1);
    if (o1 < o0) std::swap(o0, o1);
    std::vector<int> expected;
    const int64_t f0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(s0)));
    const int64_t f1 = std::min<int64_t>(steps - 1, static_cast<int64_t>(std::floor(s1)));
    for (size_t i = 0; i < rects.size(); ++i) {
      const IndexedRect& r = rects[i];
      if (r.size > 0 && r.first_step <= f1 && f0 <= r.last_step &&
          static_cast<double>(r.offset) < o1 && static_cast<double>(r.offset + r.size) > o0)
        expected.push_back(static_cast<int>(i));
    }
    std::vector<int> got;
    index.visit_in(s0, s1, o0, o1, [&](int i) { got.push_back(i); });
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expected) << "window " << s0 << ".." << s1 << " x " << o0 << ".." << o1;
  }
}

TEST(RectIndex, EmptyPlans) {
  const RectIndex none({}, 0);
  EXPECT_TRUE(none.at(0, 0).empty());
  int visits = 0;
  none.visit_in(0, 10, 0, 10, [&](int) { ++visits; });
  EXPECT_EQ(visits, 0);
}

TEST(TimelineModel, TenThousandTensorsHitAndDerivedNumbers) {
  const TimelineModel tl = testing::synthetic_timeline(10000, 5000, 3);
  ASSERT_EQ(tl.rects().size(), 10000u);
  // Live bytes by brute force at a few steps; the synthetic plan never overlaps.
  for (int64_t s : {0, 1, 777, 2500, 4999}) {
    int64_t live = 0;
    for (const TimelineRect& r : tl.rects())
      if (r.first_step <= s && s <= r.last_step) live += r.size;
    EXPECT_EQ(tl.live_bytes_per_step()[static_cast<size_t>(s)], live) << s;
  }
  EXPECT_GE(tl.arena_bytes(), tl.lower_bound_bytes());
  ASSERT_FALSE(tl.peak_steps().empty());
  std::mt19937 rng(5);
  for (int q = 0; q < 2000; ++q) {
    const double s = std::uniform_real_distribution<double>(0, 5000)(rng);
    const double o =
        std::uniform_real_distribution<double>(0, static_cast<double>(tl.arena_bytes()))(rng);
    std::optional<int> expected;
    for (const TimelineRect& r : tl.rects()) {
      if (contains({r.first_step, r.last_step, r.offset, r.size}, s, o)) {
        expected = r.tensor;
        break;
      }
    }
    ASSERT_EQ(tl.hit(s, o), expected);
  }
}

TEST(TimelineModel, TooltipNamesTheTensorSizeOffsetAndLifetime) {
  TimelineRect r;
  r.tensor = 0;
  r.name = "conv1_out";
  r.first_step = 3;
  r.last_step = 7;
  r.offset = 4096;
  r.size = 2048;
  r.size_expr = "2048*batch";
  r.offset_expr = "4096*batch";
  const TimelineModel tl = TimelineModel::from_rects({r}, 10, 6144, 2048);
  const std::string tip = tl.tooltip_text(0);
  EXPECT_NE(tip.find("conv1_out"), std::string::npos) << tip;
  EXPECT_NE(tip.find("2048*batch = 2,048 bytes"), std::string::npos) << tip;
  EXPECT_NE(tip.find("4096*batch = 4,096"), std::string::npos) << tip;
  EXPECT_NE(tip.find("steps 3–7 (5 steps)"), std::string::npos) << tip;
  EXPECT_EQ(tl.tooltip_text(1), "");
  EXPECT_EQ(tl.peak_steps(), (std::vector<int64_t>{3, 4, 5, 6, 7}));
  EXPECT_EQ(tip.find("views"), std::string::npos) << tip;
}

TEST(TimelineModel, TooltipNamesTheViewsOfTheTensorsBytes) {
  TimelineRect r;
  r.tensor = 0;
  r.name = "qkv";
  r.size = 64;
  r.views = {"q_heads", "k_heads", "v_heads", "q_flat", "k_flat"};
  const TimelineModel tl = TimelineModel::from_rects({r}, 1, 64, 64);
  const std::string tip = tl.tooltip_text(0);
  EXPECT_NE(tip.find("views     q_heads, k_heads, v_heads and 2 more (the same bytes, not copied)"),
            std::string::npos)
      << tip;
}

TEST(TimelineViewport, MapsBothWaysAndZoomKeepsTheAnchor) {
  TimelineViewport vp;
  vp.resize(1000, 500);
  vp.fit(100, 1 << 20);
  EXPECT_DOUBLE_EQ(vp.x_of(0), 0);
  EXPECT_DOUBLE_EQ(vp.x_of(100), 1000);
  EXPECT_DOUBLE_EQ(vp.y_of(0), 500);
  EXPECT_GT(vp.y_of(1 << 20), 0);  // headroom above the arena
  const double step = vp.step_at(300), offset = vp.offset_at(120);
  vp.zoom_at(300, 120, 4, 2);
  EXPECT_NEAR(vp.step_at(300), step, 1e-9);
  EXPECT_NEAR(vp.offset_at(120), offset, 1e-6);
  EXPECT_NEAR(vp.last_visible_step() - vp.first_visible_step(), 25, 1e-9);
  vp.pan_pixels(100, 0);  // dragging right shows earlier steps
  EXPECT_NEAR(vp.step_at(400), step, 1e-9);
  vp.zoom_at(0, 0, 0, 0);  // never a zero scale
  EXPECT_GT(vp.px_per_step, 0);
  EXPECT_GT(vp.px_per_byte, 0);
}

TEST(HumanBytes, Units) {
  EXPECT_EQ(human_bytes(64), "64 B");
  EXPECT_EQ(human_bytes(1536), "1.5 KiB");
  EXPECT_EQ(human_bytes(int64_t{3} << 20), "3.0 MiB");
}

}  // namespace
}  // namespace sod2::studio
