// What the device panel, the profile view and the history view hold, without a display.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace sod2::studio
