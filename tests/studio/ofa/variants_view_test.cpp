// The studio's Dynamic-OFA view: the variants table (front, current row, demo runs) headless, then
// the view offscreen on the family of ../shared/models: open, measure over the local transport
// (recorded in a scratch store), a short demo with its live timeline, and errors as text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QApplication>
#include <filesystem>
#include <fstream>

#include "../test_home.h"
#include "app/studio/ofa/demo_timeline.h"
#include "app/studio/ofa/variants_model.h"
#include "app/studio/ofa/variants_view.h"

namespace sod2::studio {
namespace {

namespace fs = std::filesystem;
const QString kFamily = SOD2_SHARED_DIR "/models/dofa_mbv3/variants.json";

std::vector<VariantRow> rows() {
  std::vector<VariantRow> r(3);
  r[0].name = "a";
  r[0].macs = 10;
  r[1].name = "b";
  r[1].macs = 20;
  r[2].name = "c";
  r[2].macs = 15;
  return r;
}

TEST(VariantsModel, FrontFollowsLatencyAgainstMacs) {
  VariantsModel m;
  m.setVariants(rows());
  EXPECT_EQ(m.rowCount(), 3);
  EXPECT_EQ(m.data(m.index(0, VariantsModel::kLatency), Qt::DisplayRole).toString(), "–");
  // c is slower than b and smaller: off the front.
  m.setLatencies({1.0, 2.0, 3.0}, {"x", "x", "x"});
  EXPECT_TRUE(m.rows()[0].on_front);
  EXPECT_TRUE(m.rows()[1].on_front);
  EXPECT_FALSE(m.rows()[2].on_front);
  EXPECT_EQ(m.data(m.index(1, VariantsModel::kFront), Qt::DisplayRole).toString(), "✓");
  m.setCurrent(1);
  EXPECT_TRUE(m.data(m.index(1, VariantsModel::kName), Qt::DisplayRole).toString().endsWith("◀"));
  m.setDemoRuns({5, 0, 7});
  EXPECT_EQ(m.data(m.index(2, VariantsModel::kDemoRuns), Qt::DisplayRole).toLongLong(), 7);
}

TEST(VariantsModel, AccuracyWhenEveryVariantHasOne) {
  VariantsModel m;
  auto r = rows();
  for (size_t i = 0; i < r.size(); ++i) {
    r[i].has_accuracy = true;
    r[i].accuracy = 0.7 + 0.01 * static_cast<double>(i);
  }
  m.setVariants(r);
  EXPECT_TRUE(m.byAccuracy());
  // By accuracy c (0.72) beats b (0.71) even though it has fewer MACs.
  m.setLatencies({1.0, 2.0, 3.0}, {});
  EXPECT_TRUE(m.rows()[2].on_front);
}

// Made on first use, so listing the tests needs no display.
QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_variants_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

class VariantsViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    dir_ = fs::temp_directory_path() / ("sod2_variants_view_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    ::setenv("SOD2_PLUGIN_DIR", (SOD2_BINARY_DIR "/lib/sod2/plugins"), 1);
    ::setenv("SOD2_AGENT", (SOD2_BINARY_DIR "/bin/sod2-agent"), 1);
    ::setenv("SOD2_AGENT_DIR", (dir_ / "agent").c_str(), 1);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(VariantsViewTest, OpensMeasuresAndRunsADemo) {
  VariantsView view;
  view.setDatabase((dir_ / "profiles.db").string());
  ASSERT_FALSE(view.setBindings("batch=1,height=48,width=48"));
  auto err = view.openFamily(kFamily);
  ASSERT_FALSE(err) << err->toStdString();
  ASSERT_TRUE(view.hasFamily());
  ASSERT_EQ(view.model()->rowCount(), 4);
  EXPECT_EQ(view.model()->rows()[0].name, "small");
  EXPECT_EQ(view.model()->rows()[3].name, "max");

  err = view.measureNow("local");
  ASSERT_FALSE(err) << err->toStdString();
  for (const VariantRow& r : view.model()->rows()) {
    EXPECT_FALSE(std::isnan(r.latency_ms)) << r.name.toStdString();
    EXPECT_TRUE(r.source.startsWith("profile #")) << r.source.toStdString();
  }
  // A view opened later finds those profiles in the store at the same bindings.
  VariantsView again;
  again.setDatabase((dir_ / "profiles.db").string());
  ASSERT_FALSE(again.setBindings("batch=1,height=48,width=48"));
  ASSERT_FALSE(again.openFamily(kFamily));
  EXPECT_TRUE(again.model()->rows()[0].source.startsWith("profile #"));

  err = view.runDemoNow(1000, 0.3, std::nullopt);
  ASSERT_FALSE(err) << err->toStdString();
  EXPECT_GT(view.timeline()->points().size(), 0u);
  EXPECT_TRUE(view.summaryText().contains("within budget")) << view.summaryText().toStdString();
  int64_t runs = 0;
  for (const VariantRow& r : view.model()->rows()) runs += r.demo_runs;
  EXPECT_EQ(runs, static_cast<int64_t>(view.timeline()->points().size()));
}

TEST_F(VariantsViewTest, RunsTheDemoOnADeviceThroughItsAgent) {
  ::setenv("SOD2_ADB", SOD2_SOURCE_DIR "/tests/device/fake_adb.sh", 1);
  ::setenv("FAKE_ADB_ROOT", dir_.c_str(), 1);
  std::ofstream(dir_ / "devices") << "FAKE01 device Fake_Phone\n";
  VariantsView view;
  view.setDatabase((dir_ / "profiles.db").string());
  ASSERT_FALSE(view.setBindings("batch=1,height=48,width=48"));
  ASSERT_FALSE(view.openFamily(kFamily));
  auto err = view.runDemoNow(1000, 0.3, rt::LoadSchedule{0.05, 0.15, 1}, "adb:FAKE01");
  ::unsetenv("SOD2_ADB");
  ASSERT_FALSE(err) << err->toStdString();
  EXPECT_GT(view.timeline()->points().size(), 0u);
  EXPECT_TRUE(view.summaryText().contains("within budget")) << view.summaryText().toStdString();
  for (const VariantRow& r : view.model()->rows()) EXPECT_EQ(r.source, "warm-up");
}

TEST_F(VariantsViewTest, ErrorsAreText) {
  VariantsView view;
  EXPECT_TRUE(view.runDemoNow(10, 1, std::nullopt));
  auto missing = view.openFamily(QString::fromStdString((dir_ / "none.sod2").string()));
  ASSERT_TRUE(missing);
  EXPECT_TRUE(missing->contains("none.sod2")) << missing->toStdString();
  auto bad = view.setBindings("batch=");
  EXPECT_TRUE(bad);
}

}  // namespace
}  // namespace sod2::studio
