// Two recorded runs compared group by group with their control-flow groups' body nodes (#23
// item 2): nodes pair by their place in the bodies, a node of one run only keeps the list depth
// first, and a group only one run broke down shows no body rows.
#include "app/profiling/run_compare.h"

#include <gtest/gtest.h>

namespace sod2::profiling {
namespace {

store::BodyRecord body(int64_t depth, const std::string& attr, const std::string& name, double ms,
                       double calls = 1) {
  return {depth, attr, 1, 0, name, "Op", ms, calls, 0};
}

struct Want {
  int depth;
  std::string name;
  double a_ms, b_ms;
};

void expect_rows(const std::vector<BodyDelta>& rows, const std::vector<Want>& want) {
  ASSERT_EQ(rows.size(), want.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(rows[i].depth, want[i].depth);
    EXPECT_EQ(rows[i].name, want[i].name);
    EXPECT_DOUBLE_EQ(rows[i].a_ms, want[i].a_ms);
    EXPECT_DOUBLE_EQ(rows[i].b_ms, want[i].b_ms);
  }
}

TEST(RunCompare, BodyNodesPairByPlaceAndOneSidedNodesKeepTheListDepthFirst) {
  // A loop whose body holds an If: B's If ran a node A's did not, and A's a node B's did not;
  // B's loop body has a node after the If that A's lacks.
  const std::vector<store::BodyRecord> a = {
      body(1, "body", "/mm", 1.0, 3), body(1, "body", "/if", 2.0, 3),
      body(2, "then_branch", "/relu", 0.5, 2), body(2, "else_branch", "/id", 0.1, 1)};
  const std::vector<store::BodyRecord> b = {
      body(1, "body", "/mm", 1.5, 5), body(1, "body", "/if", 2.5, 5),
      body(2, "then_branch", "/relu", 0.4, 2), body(2, "then_branch", "/add", 0.3, 2),
      body(1, "body", "/tail", 0.2, 5)};
  const std::vector<BodyDelta> rows = compare_bodies(a, b);
  expect_rows(rows, {{1, "/mm", 1.0, 1.5},
                     {1, "/if", 2.0, 2.5},
                     {2, "/relu", 0.5, 0.4},
                     {2, "/add", -1, 0.3},  // after B's node before it, inside the If
                     {2, "/id", 0.1, -1},
                     {1, "/tail", -1, 0.2}});  // after the If's whole subtree
  EXPECT_DOUBLE_EQ(rows[0].a_calls, 3);
  EXPECT_DOUBLE_EQ(rows[0].b_calls, 5);
  EXPECT_EQ(rows[2].body, "then_branch");
  EXPECT_TRUE(rows[1].in_both());
  EXPECT_DOUBLE_EQ(rows[1].delta_ms(), 0.5);
  EXPECT_FALSE(rows[3].in_both());
  EXPECT_DOUBLE_EQ(rows[3].delta_ms(), 0);
}

TEST(RunCompare, TheSameNameUnderAnotherHolderOrBodyIsAnotherNode) {
  // Two Ifs each with a then-branch node named "/x", and "/x" again in an else branch.
  const std::vector<store::BodyRecord> a = {
      body(1, "body", "/if1", 1), body(2, "then_branch", "/x", 0.1), body(1, "body", "/if2", 2),
      body(2, "then_branch", "/x", 0.2), body(2, "else_branch", "/x", 0.3)};
  const std::vector<store::BodyRecord> b = {
      body(1, "body", "/if2", 4), body(2, "else_branch", "/x", 0.6),
      body(2, "then_branch", "/x", 0.4), body(1, "body", "/if1", 3),
      body(2, "then_branch", "/x", 0.5)};
  expect_rows(compare_bodies(a, b), {{1, "/if1", 1, 3},
                                     {2, "/x", 0.1, 0.5},
                                     {1, "/if2", 2, 4},
                                     {2, "/x", 0.2, 0.4},
                                     {2, "/x", 0.3, 0.6}});
  // Unnamed nodes at one place pair in order.
  expect_rows(
      compare_bodies({body(1, "body", "", 1), body(1, "body", "", 2)},
                     {body(1, "body", "", 3), body(1, "body", "", 4), body(1, "body", "", 5)}),
      {{1, "", 1, 3}, {1, "", 2, 4}, {1, "", -1, 5}});
}

TEST(RunCompare, GroupsShowBodiesOnlyWhereBothRunsBrokeThemDown) {
  store::RunRecord a, b;
  a.groups = {{0, "/loop", "Loop", "/loop", "", 3.0, 0},
              {1, "/if", "If", "/if", "", 1.0, 0},
              {2, "/gone", "Loop", "/gone", "", 1.0, 0}};
  b.groups = {{0, "/loop", "Loop", "/loop", "", 5.0, 0}, {1, "/if", "If", "/if", "", 1.0, 0}};
  a.groups[0].body = {body(1, "body", "/mm", 2.0)};
  b.groups[0].body = {body(1, "body", "/mm", 4.0), body(1, "body", "/new", 0.5)};
  a.groups[1].body = {body(1, "then_branch", "/relu", 0.5)};  // B's agent reported no bodies
  a.groups[2].body = {body(1, "body", "/old", 0.5)};          // not in B at all
  const std::vector<GroupDelta> rows = compare_groups(a, b);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].name, "/loop");  // largest change first, its body rows with it
  expect_rows(rows[0].body, {{1, "/mm", 2.0, 4.0}, {1, "/new", -1, 0.5}});
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_TRUE(rows[i].body.empty()) << rows[i].name;
}

}  // namespace
}  // namespace sod2::profiling
