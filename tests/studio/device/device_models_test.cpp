// What the device panel, the profile view and the history view hold, without a display.
#include <gtest/gtest.h>

#include <QBrush>
#include <QColor>

#include "app/studio/device/device_list_model.h"
#include "app/studio/device/history_model.h"
#include "app/studio/device/profile_table_model.h"
#include "app/studio/device/run_overlays.h"

namespace sod2::studio {
namespace {

std::shared_ptr<profiling::ProfileResult> two_groups() {
  auto r = std::make_shared<profiling::ProfileResult>();
  profiling::GroupProfile a;
  a.index = 0;
  a.name = "/conv";
  a.nodes = {"/conv", "/add", "/relu"};
  a.op_types = {"Conv", "Add", "Relu"};
  a.avg_ms = 3.0;
  a.percent = 75;
  a.output_bytes = 2048;
  a.shape = "[1,8,4,4]";
  profiling::GroupProfile b;
  b.index = 1;
  b.name = "/softmax";
  b.nodes = {"/softmax"};
  b.op_types = {"Softmax"};
  b.avg_ms = 1.0;
  b.percent = 25;
  r->groups = {a, b};
  return r;
}

TEST(ProfileTableModel, OneRowPerGroupWithBarsAndClassColours) {
  ProfileTableModel m;
  m.setResult(two_groups(), [](const profiling::GroupProfile& g) {
    return g.nodes.size() > 1 ? QColor(Qt::red) : QColor(Qt::blue);
  });
  ASSERT_EQ(m.rowCount(), 2);
  EXPECT_EQ(m.data(m.index(0, ProfileTableModel::kOps), Qt::DisplayRole).toString(),
            "Conv+Add+Relu");
  EXPECT_EQ(m.data(m.index(0, ProfileTableModel::kNodes), Qt::DisplayRole).toInt(), 3);
  EXPECT_EQ(m.data(m.index(0, ProfileTableModel::kOutput), Qt::DisplayRole).toString(), "2.0 KiB");
  // The slowest group's bar is full; the other's is its share of it.
  EXPECT_DOUBLE_EQ(
      m.data(m.index(0, ProfileTableModel::kMs), ProfileTableModel::kShareRole).toDouble(), 1.0);
  EXPECT_NEAR(m.data(m.index(1, ProfileTableModel::kMs), ProfileTableModel::kShareRole).toDouble(),
              1.0 / 3.0, 1e-12);
  EXPECT_EQ(m.data(m.index(0, 0), ProfileTableModel::kColorRole).value<QColor>(), QColor(Qt::red));
  EXPECT_EQ(m.data(m.index(1, 0), ProfileTableModel::kColorRole).value<QColor>(), QColor(Qt::blue));
  // Sorting uses numbers.
  EXPECT_DOUBLE_EQ(m.data(m.index(0, ProfileTableModel::kMs), Qt::UserRole).toDouble(), 3.0);
  // A graph node inside a fused group finds that group's row.
  EXPECT_EQ(m.rowOfNode("/relu"), 0);
  EXPECT_EQ(m.rowOfNode("/softmax"), 1);
  EXPECT_EQ(m.rowOfNode("/nope"), -1);
}

// Three groups, the middle one an If whose then_branch ran a Conv and a nested If's Add.
std::shared_ptr<profiling::ProfileResult> with_an_if() {
  auto r = std::make_shared<profiling::ProfileResult>();
  auto group = [](int index, const std::string& name, const std::string& op, double ms) {
    profiling::GroupProfile g;
    g.index = index;
    g.name = name;
    g.nodes = {name};
    g.op_types = {op};
    g.avg_ms = ms;
    return g;
  };
  r->groups = {group(0, "/stem/Conv", "Conv", 2.0), group(1, "/gated/If", "If", 4.0),
               group(2, "/head/Gemm", "Gemm", 3.0)};
  r->groups[1].body = {{1, "then_branch", 1, 0, "/gated/Conv", {"Conv", "Relu"}, 2.5, 0.5, 62.5},
                       {1, "then_branch", 1, 1, "/gated/inner/If", {"If"}, 1.0, 0.5, 25.0},
                       {2, "else_branch", 3, 0, "/gated/inner/Add", {"Add"}, 0.5, 0.25, 50.0}};
  return r;
}

TEST(ProfileTableModel, BodyNodesAreRowsIndentedUnderTheirGroup) {
  ProfileTableModel m;
  m.setResult(with_an_if(), [](const profiling::GroupProfile& g) {
    return g.op_types[0] == "If" ? QColor(Qt::green) : QColor(Qt::blue);
  });
  ASSERT_EQ(m.rowCount(), 6);
  auto text = [&](int row, int column) {
    return m.data(m.index(row, column), Qt::DisplayRole).toString();
  };
  // Execution order, the If's body nodes right after it, depth first.
  EXPECT_EQ(text(1, ProfileTableModel::kName), "/gated/If");
  EXPECT_EQ(text(2, ProfileTableModel::kOps), "  then_branch: Conv+Relu");
  EXPECT_EQ(text(2, ProfileTableModel::kName), "/gated/Conv");
  EXPECT_EQ(text(2, ProfileTableModel::kNodes), "x0.50");
  EXPECT_EQ(text(2, ProfileTableModel::kMs), "2.500");
  EXPECT_EQ(text(2, ProfileTableModel::kPercent), "62.5");  // of the If, not of the run
  EXPECT_EQ(text(3, ProfileTableModel::kOps), "  then_branch: If");
  EXPECT_EQ(text(4, ProfileTableModel::kOps), "    else_branch: Add");
  EXPECT_EQ(text(4, ProfileTableModel::kNodes), "x0.25");
  EXPECT_EQ(text(4, ProfileTableModel::kIndex), "");
  EXPECT_EQ(text(5, ProfileTableModel::kName), "/head/Gemm");
  EXPECT_FALSE(m.isBodyRow(1));
  EXPECT_TRUE(m.isBodyRow(4));
  ASSERT_NE(m.bodyAt(4), nullptr);
  EXPECT_EQ(m.bodyAt(4)->graph, 3);
  EXPECT_EQ(m.groupOfRow(4), 1);
  EXPECT_EQ(m.rowOfGroup(2), 5);
  // Bars on the groups' scale; the If's colour, lighter, for its body nodes.
  EXPECT_DOUBLE_EQ(
      m.data(m.index(2, ProfileTableModel::kMs), ProfileTableModel::kShareRole).toDouble(),
      2.5 / 4.0);
  EXPECT_EQ(m.data(m.index(2, 0), ProfileTableModel::kColorRole).value<QColor>(),
            QColor(Qt::green).lighter(130));
  EXPECT_EQ(m.data(m.index(5, 0), ProfileTableModel::kColorRole).value<QColor>(), QColor(Qt::blue));
  EXPECT_TRUE(m.data(m.index(2, 0), Qt::ToolTipRole).toString().contains("inside If /gated/If"));
  // Picking a body row selects its If in the graph, which shows main-graph nodes only; a graph
  // node finds its group's row, never a body row.
  EXPECT_EQ(m.activationName(3), "/gated/If");
  EXPECT_EQ(m.activationName(5), "/head/Gemm");
  EXPECT_EQ(m.rowOfNode("/head/Gemm"), 5);
  EXPECT_EQ(m.rowOfNode("/gated/Conv"), -1);
}

// Sorting orders the groups; body rows stay under their group in depth-first order.
TEST(ProfileTableModel, SortingByTimeKeepsBodyRowsUnderTheirGroup) {
  ProfileTableModel m;
  m.setResult(with_an_if());
  ProfileSortProxy proxy;
  proxy.setSourceModel(&m);
  proxy.setSortRole(Qt::UserRole);
  auto names = [&] {
    QStringList out;
    for (int row = 0; row < proxy.rowCount(); ++row)
      out << proxy.data(proxy.index(row, ProfileTableModel::kName)).toString();
    return out;
  };
  const QStringList if_rows = {"/gated/If", "/gated/Conv", "/gated/inner/If", "/gated/inner/Add"};
  proxy.sort(ProfileTableModel::kMs, Qt::DescendingOrder);
  EXPECT_EQ(names(), if_rows + QStringList({"/head/Gemm", "/stem/Conv"}));
  proxy.sort(ProfileTableModel::kMs, Qt::AscendingOrder);
  EXPECT_EQ(names(), QStringList({"/stem/Conv", "/head/Gemm"}) + if_rows);
  proxy.sort(ProfileTableModel::kIndex, Qt::DescendingOrder);
  EXPECT_EQ(names(), QStringList{"/head/Gemm"} + if_rows + QStringList{"/stem/Conv"});
  proxy.sort(ProfileTableModel::kIndex, Qt::AscendingOrder);
  EXPECT_EQ(names(), QStringList{"/stem/Conv"} + if_rows + QStringList{"/head/Gemm"});
}

TEST(HistoryModel, FailedRunsShowTheirReason) {
  store::RunRecord ok;
  ok.id = 2;
  ok.ok = true;
  ok.avg_ms = 1.25;
  ok.device.device_id = "local";
  store::RunRecord bad;
  bad.id = 1;
  bad.failure = "no Android device attached";
  HistoryModel m;
  m.setRuns({ok, bad});
  ASSERT_EQ(m.rowCount(), 2);
  EXPECT_EQ(m.runIdAt(0), 2);
  EXPECT_EQ(m.data(m.index(0, HistoryModel::kAvg), Qt::DisplayRole).toString(), "1.250");
  EXPECT_EQ(m.data(m.index(1, HistoryModel::kAvg), Qt::DisplayRole).toString(), "-");
  EXPECT_EQ(m.data(m.index(1, HistoryModel::kStatus), Qt::DisplayRole).toString(),
            "failed: no Android device attached");
}

TEST(RunCompareModel, MatchesGroupsByNameLargestChangeFirst) {
  store::RunRecord a, b;
  a.groups = {{0, "/x", "Conv", "/x", "", 2.0, 0},
              {1, "/y", "Relu", "/y", "", 1.0, 0},
              {2, "/gone", "Add", "/gone", "", 0.1, 0}};
  b.groups = {{0, "/y", "Relu", "/y", "", 1.5, 0},
              {1, "/x", "Conv", "/x", "", 1.0, 0},
              {2, "/new", "Mul", "/new", "", 0.2, 0}};
  RunCompareModel m;
  m.setRows(profiling::compare_groups(a, b));
  ASSERT_EQ(m.rowCount(), 4);
  EXPECT_EQ(m.data(m.index(0, RunCompareModel::kGroup), Qt::DisplayRole).toString(), "/x");
  EXPECT_EQ(m.data(m.index(0, RunCompareModel::kDelta), Qt::DisplayRole).toString(), "-1.000");
  EXPECT_EQ(m.data(m.index(0, RunCompareModel::kPercent), Qt::DisplayRole).toString(), "-50.0%");
  EXPECT_EQ(m.data(m.index(1, RunCompareModel::kGroup), Qt::DisplayRole).toString(), "/y");
  EXPECT_EQ(m.data(m.index(2, RunCompareModel::kPercent), Qt::DisplayRole).toString(), "only B");
  EXPECT_EQ(m.data(m.index(3, RunCompareModel::kPercent), Qt::DisplayRole).toString(), "only A");
}

// Issue 23 item 2: the History dock's comparison puts a control-flow group's body nodes under
// it, as the Profile dock does: indented by depth, lighter, each with both times and the change,
// "-" on the side that lacks it, and they travel with their group when groups are ordered.
TEST(RunCompareModel, BodyNodesFollowTheirGroupIndentedAndLighter) {
  store::RunRecord a, b;
  a.groups = {{0, "/conv", "Conv", "/conv", "", 1.0, 0}, {1, "/if", "If", "/if", "", 2.0, 0}};
  b.groups = {{0, "/conv", "Conv", "/conv", "", 1.1, 0}, {1, "/if", "If", "/if", "", 4.0, 0}};
  a.groups[1].body = {{1, "then_branch", 1, 0, "/then/mm", "MatMul", 1.0, 1, 50},
                      {2, "body", 2, 0, "/then/loop/add", "Add", 0.5, 3, 20}};
  b.groups[1].body = {{1, "then_branch", 1, 0, "/then/mm", "MatMul", 3.0, 1, 75},
                      {1, "else_branch", 3, 0, "/else/id", "Identity", 0.1, 0.5, 2}};
  RunCompareModel m;
  m.setRows(profiling::compare_groups(a, b));
  ASSERT_EQ(m.rowCount(), 5);  // the If (largest change) and its three body nodes, the Conv
  const auto cell = [&](int row, int column, int role = Qt::DisplayRole) {
    return m.data(m.index(row, column), role);
  };
  EXPECT_EQ(cell(0, RunCompareModel::kGroup).toString(), "/if");
  EXPECT_EQ(m.bodyAt(0), nullptr);
  EXPECT_EQ(cell(1, RunCompareModel::kOps).toString(), "  then_branch: MatMul");
  EXPECT_EQ(cell(1, RunCompareModel::kA).toString(), "1.000");
  EXPECT_EQ(cell(1, RunCompareModel::kB).toString(), "3.000");
  EXPECT_EQ(cell(1, RunCompareModel::kDelta).toString(), "2.000");
  EXPECT_EQ(cell(1, RunCompareModel::kPercent).toString(), "200.0%");
  EXPECT_EQ(cell(1, RunCompareModel::kGroup).toString(), "/then/mm");
  EXPECT_EQ(cell(2, RunCompareModel::kOps).toString(), "    body: Add");
  EXPECT_EQ(cell(2, RunCompareModel::kB).toString(), "-");
  EXPECT_EQ(cell(2, RunCompareModel::kDelta).toString(), "-");
  EXPECT_EQ(cell(2, RunCompareModel::kPercent).toString(), "only A");
  EXPECT_EQ(cell(3, RunCompareModel::kA).toString(), "-");
  EXPECT_EQ(cell(3, RunCompareModel::kPercent).toString(), "only B");
  EXPECT_EQ(cell(4, RunCompareModel::kGroup).toString(), "/conv");
  for (int row = 1; row <= 3; ++row) {
    ASSERT_NE(m.bodyAt(row), nullptr) << row;
    EXPECT_EQ(m.groupOfRow(row), 0) << row;
    // Lighter text than a group's (which keeps the default colour).
    const QVariant fg = cell(row, RunCompareModel::kOps, Qt::ForegroundRole);
    ASSERT_TRUE(fg.canConvert<QBrush>()) << row;
    EXPECT_GT(fg.value<QBrush>().color().lightness(), 100) << row;
  }
  EXPECT_FALSE(cell(0, RunCompareModel::kOps, Qt::ForegroundRole).isValid());
  EXPECT_EQ(m.groupOfRow(4), 1);
  EXPECT_EQ(m.groupOfRow(5), -1);
  EXPECT_TRUE(cell(2, RunCompareModel::kGroup, Qt::ToolTipRole)
                  .toString()
                  .contains("A: 0.500 ms per run, 3 calls per run"));
}

TEST(DeviceListModel, ShowsStatesAndIds) {
  DeviceListing l;
  device::DeviceEntry local;
  local.id = "local";
  local.state = "device";
  device::DeviceEntry phone;
  phone.id = "adb:XYZ";
  phone.state = "unauthorized";
  l.devices = {local, phone};
  DeviceListModel m;
  m.setListing(l);
  ASSERT_EQ(m.rowCount(), 2);
  EXPECT_EQ(m.idAt(1), "adb:XYZ");
  EXPECT_EQ(m.idAt(7), "");
  EXPECT_TRUE(m.data(m.index(1, DeviceListModel::kState), Qt::ToolTipRole)
                  .toString()
                  .contains("USB debugging"));
}

// ---- Overlays: runs drawn on the graph (#23 item 2, #24 item 4) ----

// The four nodes of two_groups(), and one no run has.
std::unique_ptr<Graph> four_nodes() {
  auto g = std::make_unique<Graph>("main");
  for (const char* name : {"/conv", "/add", "/relu", "/softmax", "/never"}) {
    Node n;
    n.name = name;
    n.op_type = "Op";
    g->add_node(std::move(n));
  }
  return g;
}

DisplayNode drawn(std::vector<NodeId> members) {
  DisplayNode n;
  n.members = std::move(members);
  return n;
}

TEST(RunOverlays, MeasuredTimeColoursEachNodeByItsGroupAndABoxBySumOfItsGroups) {
  const std::unique_ptr<Graph> g = four_nodes();
  const NodeOverlay o = measured_time_overlay(*two_groups(), *g);
  EXPECT_FALSE(o.diverging);
  EXPECT_EQ(o.unit, "ms");
  EXPECT_EQ(o.group_of_node, (std::vector<int>{0, 0, 0, 1, -1}));
  EXPECT_DOUBLE_EQ(o.max_abs(), 3.0);
  // A node of a fused group shows the group's time, not a share of it.
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({1})), 3.0);
  // A box over the fused group counts it once; one spanning two groups adds them.
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({0, 1, 2})), 3.0);
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({2, 3})), 4.0);
  EXPECT_FALSE(o.value_of(drawn({4})).has_value());
  EXPECT_EQ(o.describe(drawn({4})), "measured time: not in this run");
  EXPECT_EQ(o.describe(drawn({3})), "measured time: 1.000 ms (Softmax /softmax)");
  EXPECT_EQ(o.describe(drawn({2, 3})), "measured time: 4.000 ms over 2 groups");
  // Nodes inside an open If/Loop body are not the main graph's: no value.
  DisplayNode body = drawn({0});
  Node control;
  body.body_of = &control;
  EXPECT_FALSE(o.value_of(body).has_value());

  const NodeOverlay bytes = output_bytes_overlay(*two_groups(), *g);
  EXPECT_EQ(bytes.describe(drawn({0})), "output bytes: 2.0 KiB (Conv+Add+Relu /conv)");
}

TEST(RunOverlays, TheChangeBetweenTwoRunsIsSignedAndGroupsInOneRunCountWhole) {
  store::RunRecord a, b;
  a.id = 3;
  b.id = 7;
  a.groups = {{0, "/conv", "Conv+Add+Relu", "/conv,/add,/relu", "", 3.0, 0},
              {1, "/softmax", "Softmax", "/softmax", "", 1.0, 0}};
  b.groups = {{0, "/conv", "Conv+Add+Relu", "/conv,/add,/relu", "", 2.5, 0},
              {1, "/never", "Op", "/never", "", 0.5, 0}};
  const NodeOverlay o = run_delta_overlay(a, b, *four_nodes());
  EXPECT_TRUE(o.diverging);
  EXPECT_EQ(o.title, "change in time, run 3 -> 7");
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({0})), -0.5);  // faster in B
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({3})), -1.0);  // gone in B: its whole time saved
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({4})), 0.5);   // new in B
  EXPECT_EQ(o.describe(drawn({4})),
            "change in time, run 3 -> 7: +0.500 ms (Op /never (only in run 7))");
  EXPECT_DOUBLE_EQ(o.max_abs(), 1.0);
}

// The store escapes a ',' inside a name (store::join_names): the overlay reads the names back
// whole instead of splitting "/a,b" into two nodes that do not exist.
TEST(RunOverlays, ANodeNameWithACommaIsOneNode) {
  Graph g("main");
  for (const char* name : {"/a,b", "/c"}) {
    Node n;
    n.name = name;
    n.op_type = "Op";
    g.add_node(std::move(n));
  }
  store::RunRecord a, b;
  a.id = 1;
  b.id = 2;
  const std::string nodes = store::join_names({"/a,b", "/c"}, ',');
  a.groups = {{0, "/a,b", "Op+Op", nodes, "", 3.0, 0}};
  b.groups = {{0, "/a,b", "Op+Op", nodes, "", 1.0, 0}};
  const NodeOverlay o = run_delta_overlay(a, b, g);
  ASSERT_TRUE(o.value_of(drawn({0})).has_value());
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({0})), -2.0);
  EXPECT_DOUBLE_EQ(*o.value_of(drawn({1})), -2.0);
}

}  // namespace
}  // namespace sod2::studio
