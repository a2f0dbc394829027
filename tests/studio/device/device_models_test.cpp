// What the device panel, the profile view and the history view hold, without a display.
#include <gtest/gtest.h>

#include <QColor>

#include "app/studio/device/device_list_model.h"
#include "app/studio/device/history_model.h"
#include "app/studio/device/profile_table_model.h"

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

}  // namespace
}  // namespace sod2::studio
