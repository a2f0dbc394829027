// Export & profile from the studio window, offscreen, on this machine: the profile view fills
// with the model's groups, picking a group selects its node in the graph and back, and the
// history view shows the run from the same store the CLI reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <QApplication>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <filesystem>
#include <fstream>

#include "../../opt/corpus.h"
#include "../test_home.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/history_view.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/device/sustained_chart.h"
#include "app/studio/graph/graph_style.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/main_window.h"
#include "app/studio/widgets/sweep_view.h"
#include "core/store/profile_store.h"

namespace sod2::studio {
namespace {

namespace fs = std::filesystem;

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_profile_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

class StudioProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    dir_ = fs::temp_directory_path() / ("sod2_studio_profile_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("SOD2_PLUGIN_DIR", SOD2_BINARY_DIR "/lib/sod2/plugins", 1);
    ::setenv("SOD2_AGENT", SOD2_BINARY_DIR "/bin/sod2-agent", 1);
    ::setenv("SOD2_AGENT_DIR", (dir_ / "agent").c_str(), 1);
    db_ = (dir_ / "profiles.db").string();
    // What Export & profile remembers per model lives in the shared test home: an earlier run
    // must not feed this one's inputs.
    QSettings settings;
    settings.remove("profile/int_inputs");
    settings.remove("profile/input_files");
  }
  void TearDown() override { fs::remove_all(dir_); }
  // One measured run on one thread, no warm-up: what a test of the inputs needs.
  static device::RunSettings once() {
    device::RunSettings s;
    s.runs = 1;
    s.warmup = 0;
    s.threads = 1;
    return s;
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(StudioProfileTest, ExportAndProfileFillsTheViewsAndFollowsTheGraph) {
  MainWindow w;
  w.setProfileDatabase(db_);
  const QString model = SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx";
  ASSERT_FALSE(w.openModelNow(model).has_value());
  ASSERT_TRUE(w.applyBinding({{"height", 64}, {"width", 96}}));
  device::RunSettings s;
  s.runs = 2;
  s.warmup = 1;
  s.threads = 1;
  auto err = w.profileNow("local", s);
  ASSERT_FALSE(err.has_value()) << err->toStdString();

  const ProfileTableModel* m = w.profileView()->model();
  ASSERT_NE(m->result(), nullptr);
  ASSERT_GT(m->rowCount(), 10);
  EXPECT_EQ(m->result()->bindings, "height=64,width=96");
  EXPECT_EQ(m->result()->stats.count, 2);
  EXPECT_TRUE(w.profileView()->summaryText().contains("recorded as run 1"));

  // Picking a group in the profile selects its node in the graph...
  QSignalSpy picked(w.graphView(), &GraphView::nodeSelected);
  const QString name = m->data(m->index(3, ProfileTableModel::kName), Qt::DisplayRole).toString();
  emit w.profileView()->groupActivated(name);
  ASSERT_GE(picked.count(), 1);
  EXPECT_TRUE(w.inspectorText().contains(name)) << w.inspectorText().toStdString();

  // ...and the history holds the run, read from the store.
  w.historyView()->refresh();
  ASSERT_EQ(w.historyView()->model()->rowCount(), 1);
  EXPECT_EQ(w.historyView()->model()->runIdAt(0), 1);

  // A second run at another binding compares group by group.
  ASSERT_TRUE(w.applyBinding({{"height", 128}, {"width", 96}}));
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  w.historyView()->refresh();
  ASSERT_EQ(w.historyView()->model()->rowCount(), 2);
  ASSERT_TRUE(w.historyView()->compare(1, 2));
  EXPECT_EQ(w.historyView()->compareModel()->rowCount(), m->rowCount());
}

// #23 item 2: skipnet's Ifs are broken down in the Profile dock: their branches' nodes are rows
// under them, picking one selects its If in the graph, and sorting by time keeps them there.
TEST_F(StudioProfileTest, ControlFlowBodiesAreRowsUnderTheirGroupInTheProfileDock) {
  auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "skipnet");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  OpenOptions options;
  options.rdp = corpus->options;
  MainWindow w;
  w.setProfileDatabase(db_);
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(corpus->file.string()), options).has_value());
  ASSERT_TRUE(w.applyBinding({{"height", 64}, {"width", 64}}));
  device::RunSettings s;
  s.runs = 2;
  s.warmup = 1;
  s.threads = 1;
  auto err = w.profileNow("local", s);
  ASSERT_FALSE(err.has_value()) << err->toStdString();
  const ProfileTableModel* m = w.profileView()->model();
  ASSERT_NE(m->result(), nullptr);
  int body_row = -1;
  size_t body_nodes = 0;
  for (const profiling::GroupProfile& g : m->result()->groups) body_nodes += g.body.size();
  ASSERT_GT(body_nodes, 0u);
  EXPECT_EQ(m->rowCount(), static_cast<int>(m->result()->groups.size() + body_nodes));
  for (int row = 0; row < m->rowCount() && body_row < 0; ++row)
    if (m->isBodyRow(row)) body_row = row;
  ASSERT_GT(body_row, 0);
  const QString parent = m->activationName(body_row);
  EXPECT_EQ(m->data(m->index(body_row - 1, ProfileTableModel::kName), Qt::DisplayRole).toString(),
            parent)
      << "a group's first body node follows it";
  EXPECT_TRUE(m->data(m->index(body_row, ProfileTableModel::kOps), Qt::DisplayRole)
                  .toString()
                  .contains(QRegularExpression("^  (then|else)_branch: ")));

  // Picking the body node's row in the table selects its If in the graph.
  auto* table = w.profileView()->findChild<QTableView*>();
  ASSERT_NE(table, nullptr);
  table->sortByColumn(ProfileTableModel::kMs, Qt::DescendingOrder);
  auto* proxy = qobject_cast<const QSortFilterProxyModel*>(table->model());
  ASSERT_NE(proxy, nullptr);
  const QModelIndex shown = proxy->mapFromSource(m->index(body_row, 0));
  // Sorted by time, the body row is still right under its group's.
  const QModelIndex above = proxy->mapToSource(proxy->index(shown.row() - 1, 0));
  EXPECT_EQ(m->groupOfRow(above.row()), m->groupOfRow(body_row));
  QSignalSpy activated(w.profileView(), &ProfileView::groupActivated);
  QSignalSpy picked(w.graphView(), &GraphView::nodeSelected);
  table->selectionModel()->setCurrentIndex(
      shown, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
  ASSERT_EQ(activated.count(), 1);
  EXPECT_EQ(activated[0][0].toString(), parent);
  ASSERT_GE(picked.count(), 1);
  EXPECT_TRUE(w.inspectorText().contains(parent)) << w.inspectorText().toStdString();
}

// #23 item 5: the Devices dock's integer inputs reach the device (an id past bert's vocabulary
// fails the run in its embedding Gather), follow the sliders through symbol bounds, are checked
// before anything is sent, and come back when the model is opened again.
TEST_F(StudioProfileTest, IntegerInputsAreTheTypedRangesRememberedPerModel) {
  auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "bert_tiny");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  const QString model = QString::fromStdString(corpus->file.string());
  OpenOptions options;
  options.rdp = corpus->options;
  const device::RunSettings s = once();
  {
    MainWindow w;
    w.setProfileDatabase(db_);
    ASSERT_FALSE(w.openModelNow(model, options).has_value());
    ASSERT_TRUE(w.applyBinding({{"batch", 1}, {"seq", 8}}));
    w.devicePanel()->setIntInputRanges("input_ids=1000000, attention_mask=1");
    const auto past_vocabulary = w.profileNow("local", s);
    ASSERT_TRUE(past_vocabulary.has_value()) << "ids past the vocabulary ran";
    EXPECT_NE(past_vocabulary->indexOf("index 1000000 is out of range"), -1)
        << past_vocabulary->toStdString();
    w.devicePanel()->setIntInputRanges("input_ids=5:2");
    const auto empty = w.profileNow("local", s);
    ASSERT_TRUE(empty.has_value());
    EXPECT_NE(empty->indexOf("input_ids: the range 5:2 is empty"), -1) << empty->toStdString();
    w.devicePanel()->setIntInputRanges("lengths=seq");
    const auto unknown = w.profileNow("local", s);
    ASSERT_TRUE(unknown.has_value());
    EXPECT_NE(unknown->indexOf("lengths: the model has no input"), -1) << unknown->toStdString();
    w.devicePanel()->setIntInputRanges("input_ids=0:seq, attention_mask=1");
    const auto good = w.profileNow("local", s);
    ASSERT_FALSE(good.has_value()) << good->toStdString();
  }
  MainWindow again;
  ASSERT_FALSE(again.openModelNow(model, options).has_value());
  EXPECT_EQ(again.devicePanel()->intInputRanges(), "input_ids=0:seq, attention_mask=1");
}

// A .npy file as numpy.save writes it: int64 data of `dims`.
void write_npy_int64(const fs::path& path, const std::vector<int64_t>& dims,
                     const std::vector<int64_t>& values) {
  std::string shape = "(";
  for (int64_t d : dims) shape += std::to_string(d) + ", ";
  shape += ")";
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::ofstream f(path, std::ios::binary);
  const char prefix[] = {'\x93',
                         'N',
                         'U',
                         'M',
                         'P',
                         'Y',
                         1,
                         0,
                         static_cast<char>(header.size() & 0xff),
                         static_cast<char>(header.size() >> 8)};
  f.write(prefix, sizeof prefix);
  f << header;
  f.write(reinterpret_cast<const char*>(values.data()),
          static_cast<std::streamsize>(values.size() * sizeof(int64_t)));
}

// #23 item 5: the Devices dock's input files reach the device exactly (a token id past bert's
// vocabulary in the file fails the run), their dims size the run over the sliders, a file that
// does not fit the model is refused naming it, Add... names a file's input, and the files come
// back when the model is opened again.
TEST_F(StudioProfileTest, InputFilesFeedTheRunSizeItAndAreRememberedPerModel) {
  auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "bert_tiny");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  const QString model = QString::fromStdString(corpus->file.string());
  OpenOptions options;
  options.rdp = corpus->options;
  const device::RunSettings s = once();
  const fs::path ids = dir_ / "input_ids.npy";
  std::vector<int64_t> tokens(12);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int64_t>(100 + i);
  write_npy_int64(ids, {1, 12}, tokens);
  const fs::path bad_ids = dir_ / "bad_ids.npy";
  tokens[5] = 1000000;
  write_npy_int64(bad_ids, {1, 12}, tokens);
  const fs::path flat = dir_ / "flat.npy";
  write_npy_int64(flat, {12}, tokens);
  {
    MainWindow w;
    w.setProfileDatabase(db_);
    ASSERT_FALSE(w.openModelNow(model, options).has_value());
    ASSERT_TRUE(w.applyBinding({{"batch", 1}, {"seq", 8}}));
    DevicePanel* panel = w.devicePanel();
    panel->setIntInputRanges("attention_mask=1");
    // Add... goes by the file's stem.
    ASSERT_TRUE(panel->addInputFile(QString::fromStdString(bad_ids.string()), "input_ids"));
    const auto past_vocabulary = w.profileNow("local", s);
    ASSERT_TRUE(past_vocabulary.has_value()) << "the file's ids were not the ones that ran";
    EXPECT_NE(past_vocabulary->indexOf("index 1000000 is out of range"), -1)
        << past_vocabulary->toStdString();
    panel->setInputFiles("input_ids=" + QString::fromStdString(flat.string()));
    const auto rank = w.profileNow("local", s);
    ASSERT_TRUE(rank.has_value());
    EXPECT_NE(rank->indexOf("flat.npy has rank 1 [12], input 'input_ids' has rank 2"), -1)
        << rank->toStdString();
    panel->setInputFiles({});
    ASSERT_TRUE(panel->addInputFile(QString::fromStdString(ids.string())));
    EXPECT_EQ(panel->inputFiles().toStdString(), "input_ids=" + ids.string());
    const auto good = w.profileNow("local", s);
    ASSERT_FALSE(good.has_value()) << good->toStdString();
    // The file's [1, 12] sized the run, not the slider's seq=8.
    EXPECT_EQ(w.profileView()->model()->result()->bindings, "batch=1,seq=12");
  }
  MainWindow again;
  ASSERT_FALSE(again.openModelNow(model, options).has_value());
  EXPECT_EQ(again.devicePanel()->inputFiles().toStdString(), "input_ids=" + ids.string());
}

// #24 item 2 in the studio: "Measure on device" runs the Sweep view's symbol on the device and
// draws the measured latency over the plan's curves; a window opened later finds the sweep in
// the store for the same file, symbol and held values, and not for other held values.
TEST_F(StudioProfileTest, AMeasuredSweepIsDrawnOverThePlanAndFoundAgainInTheStore) {
  auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  const QString model = QString::fromStdString(corpus->file.string());
  OpenOptions options;
  options.rdp = corpus->options;
  device::RunSettings s;
  s.runs = 2;
  s.warmup = 0;
  s.threads = 1;
  {
    MainWindow w;
    w.resize(1200, 800);
    w.show();
    w.setProfileDatabase(db_);
    ASSERT_FALSE(w.openModelNow(model, options).has_value());
    w.showView(StudioView::kSweep);
    ASSERT_TRUE(w.applyBinding({{"height", 64}, {"width", 96}}));
    SweepView* view = w.sweepView();
    view->setSymbol("height");
    ASSERT_NE(view->sweep(), nullptr) << view->caption().toStdString();
    EXPECT_EQ(view->measured(), nullptr);
    auto err = w.measureSweepNow("height", 64, 192, 64, "local", s);
    ASSERT_FALSE(err.has_value()) << err->toStdString();
    const profiling::ProfileSweep* m = view->measured();
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->points.size(), 3u);
    EXPECT_EQ(m->held.at("width"), 96);
    EXPECT_EQ(m->arena_mismatches, 0u);
    // The device ran in the arena the plan curve shows at each measured point.
    for (const profiling::MeasuredPoint& p : m->points) {
      ASSERT_TRUE(p.result) << p.error;
      for (const pipeline::SweepPoint& q : view->sweep()->points) {
        if (q.value == p.value && q.at) {
          EXPECT_EQ(q.at->arena_bytes, p.result->arena_bytes()) << "height=" << p.value;
        }
      }
    }
    EXPECT_TRUE(view->caption().contains("Measured (sweep 1 on local)"))
        << view->caption().toStdString();
    EXPECT_TRUE(view->caption().contains("the device's arena is the plan's at every one"))
        << view->caption().toStdString();
    w.historyView()->refresh();
    EXPECT_EQ(w.historyView()->model()->rowCount(), 3);
  }
  MainWindow again;
  again.resize(1200, 800);
  again.show();
  again.setProfileDatabase(db_);
  ASSERT_FALSE(again.openModelNow(model, options).has_value());
  again.showView(StudioView::kSweep);
  ASSERT_TRUE(again.applyBinding({{"height", 64}, {"width", 96}}));
  again.sweepView()->setSymbol("height");
  ASSERT_NE(again.sweepView()->measured(), nullptr) << again.sweepView()->caption().toStdString();
  EXPECT_EQ(again.sweepView()->measured()->sweep_id, 1);
  ASSERT_TRUE(again.applyBinding({{"height", 64}, {"width", 128}}));
  EXPECT_EQ(again.sweepView()->measured(), nullptr) << "measured at another width";

  // #24 item 4: the History dock's Sweeps tab compares two sweeps point by point, and a point's
  // two runs group by group.
  ASSERT_FALSE(again.measureSweepNow("height", 128, 256, 128, "local", s).has_value());
  HistoryView* history = again.historyView();
  history->refresh();
  ASSERT_EQ(history->sweepsModel()->rowCount(), 2);
  EXPECT_EQ(history->sweepsModel()->sweepIdAt(0), 2) << "newest first";
  ASSERT_TRUE(history->compareSweeps(1, 2));
  const SweepCompareModel* points = history->sweepCompareModel();
  ASSERT_EQ(points->rowCount(), 4);  // 64, 128, 192 in A; 128, 256 in B
  int both = -1;
  for (int r = 0; r < points->rowCount(); ++r)
    if (points->rows()[static_cast<size_t>(r)].in_both()) both = r;
  ASSERT_GE(both, 0);
  EXPECT_EQ(points->rows()[static_cast<size_t>(both)].value, 128);
  EXPECT_EQ(points->headerData(SweepCompareModel::kValue, Qt::Horizontal, Qt::DisplayRole),
            "height");
  EXPECT_FALSE(history->compareSweepPoint(0)) << "64 is only in A";
  ASSERT_TRUE(history->compareSweepPoint(both));
  EXPECT_GT(history->compareModel()->rowCount(), 10);
  ASSERT_TRUE(history->compared().has_value());
  EXPECT_EQ(history->compared()->first.sweep_value, 128);
}

TEST_F(StudioProfileTest, TheDevicePanelCanSendNarrowerWeights) {
  MainWindow w;
  w.setProfileDatabase(db_);
  ASSERT_FALSE(
      w.openModelNow(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx").has_value());
  device::RunSettings s;
  s.runs = 1;
  s.warmup = 0;
  s.threads = 1;
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  const int64_t full = w.profileView()->model()->result()->package_bytes;
  EXPECT_EQ(w.devicePanel()->weightStorage(), package::WeightStorage::kAsIs);
  w.devicePanel()->setWeightStorage(package::WeightStorage::kFloat16);
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  const int64_t half = w.profileView()->model()->result()->package_bytes;
  EXPECT_LT(static_cast<double>(half), 0.6 * static_cast<double>(full));
  w.devicePanel()->setWeightStorage(package::WeightStorage::kInt8);
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  EXPECT_LT(w.profileView()->model()->result()->package_bytes, half);
}

// #24 item 3 in the studio: the Devices dock's "Keep running" makes the profile a sustained run,
// whose windows the profile view charts over time with the cold window beside the last.
TEST_F(StudioProfileTest, ASustainedRunIsChartedWindowByWindow) {
  MainWindow w;
  w.setProfileDatabase(db_);
  ASSERT_FALSE(
      w.openModelNow(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx").has_value());
  ASSERT_TRUE(w.applyBinding({{"height", 64}, {"width", 64}}));
  w.devicePanel()->setSustained(30, 0);
  EXPECT_DOUBLE_EQ(w.devicePanel()->settings().duration_s, 30);
  EXPECT_DOUBLE_EQ(w.devicePanel()->settings().window_s, 3) << "auto: a tenth of the duration";
  w.devicePanel()->setSustained(0, 0);
  EXPECT_EQ(w.devicePanel()->settings().duration_s, 0);

  device::RunSettings s;
  s.runs = 2;
  s.warmup = 1;
  s.threads = 1;
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  EXPECT_TRUE(w.profileView()->sustainedChart()->isHidden()) << "a run without a duration";

  s.duration_s = 1;
  s.window_s = 0.25;
  auto err = w.profileNow("local", s);
  ASSERT_FALSE(err.has_value()) << err->toStdString();
  const SustainedChart* chart = w.profileView()->sustainedChart();
  EXPECT_FALSE(chart->isHidden());
  ASSERT_TRUE(chart->run().has_value());
  EXPECT_GE(chart->run()->windows.size(), 3u);
  EXPECT_TRUE(chart->captionText().contains("Sustained run")) << chart->captionText().toStdString();
  EXPECT_TRUE(chart->captionText().contains("cold → last window"))
      << chart->captionText().toStdString();
  EXPECT_TRUE(chart->windowText(0).contains("window 0")) << chart->windowText(0).toStdString();
  EXPECT_TRUE(chart->windowText(0).contains("p99")) << chart->windowText(0).toStdString();
  // The store has it with its windows, as `sod2 history --windows` reads it.
  auto db = store::ProfileStore::open(db_);
  ASSERT_TRUE(db.ok());
  auto run = (*db)->run(2);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->windows.size(), chart->run()->windows.size());
}

// #23 item 2 / #24 item 4: a profile's measured time, and the change between two compared runs,
// colour the graph's nodes; every drawn node's fill is the overlay's colour for its value.
TEST_F(StudioProfileTest, RunsColourTheGraphNodeByNode) {
  MainWindow w;
  w.setProfileDatabase(db_);
  ASSERT_FALSE(
      w.openModelNow(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx").has_value());
  ASSERT_TRUE(w.applyBinding({{"height", 64}, {"width", 96}}));
  using C = MainWindow::NodeColouring;
  EXPECT_FALSE(w.setNodeColouring(C::kMeasuredTime));
  EXPECT_TRUE(w.statusText().contains("Export & profile the model first"))
      << w.statusText().toStdString();
  EXPECT_FALSE(w.setNodeColouring(C::kRunChange));
  EXPECT_EQ(w.nodeColouring(), C::kClass);

  device::RunSettings s;
  s.runs = 2;
  s.warmup = 1;
  s.threads = 1;
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  ASSERT_TRUE(w.setNodeColouring(C::kMeasuredTime));
  GraphView* view = w.graphView();
  view->finishPopulating();
  const NodeOverlay* overlay = view->overlay();
  ASSERT_NE(overlay, nullptr);
  EXPECT_TRUE(w.statusText().contains("Nodes coloured by measured time"))
      << w.statusText().toStdString();
  const DisplayGraph& shown = *w.displayGraph();
  int coloured = 0, hottest = 0;
  for (const DisplayNode& n : shown.nodes) {
    const QColor fill = view->nodeFill(n.id);
    if (n.kind == DisplayNodeKind::kGraphInput || n.kind == DisplayNodeKind::kGraphOutput) {
      EXPECT_EQ(fill, io_fill());
      continue;
    }
    const std::optional<double> v = overlay->value_of(n);
    EXPECT_EQ(fill, v ? overlay_fill(*v, overlay->max_abs(), false) : overlay_missing_fill())
        << n.label;
    if (v) {
      ++coloured;
      EXPECT_TRUE(view->nodeToolTip(n.id).contains("measured time")) << n.label;
      if (*v >= overlay->max_abs()) ++hottest;
    }
  }
  EXPECT_GT(coloured, static_cast<int>(shown.nodes.size()) / 2);
  EXPECT_GE(hottest, 1);

  // Back to classes: the class colours again.
  ASSERT_TRUE(w.setNodeColouring(C::kClass));
  EXPECT_EQ(view->overlay(), nullptr);
  for (const DisplayNode& n : shown.nodes) EXPECT_EQ(view->nodeFill(n.id), node_fill(n)) << n.label;

  // Two runs compared in the History dock: "Show on graph" colours the change.
  ASSERT_TRUE(w.applyBinding({{"height", 128}, {"width", 96}}));
  ASSERT_FALSE(w.profileNow("local", s).has_value());
  w.historyView()->refresh();
  ASSERT_TRUE(w.historyView()->compare(1, 2));
  emit w.historyView()->showChangeOnGraph();
  EXPECT_EQ(w.nodeColouring(), C::kRunChange);
  ASSERT_NE(view->overlay(), nullptr);
  EXPECT_TRUE(view->overlay()->diverging);
  bool described = false;
  for (const DisplayNode& n : shown.nodes)
    described |= view->nodeToolTip(n.id).contains("change in time, run 1 -> 2");
  EXPECT_TRUE(described);
}

TEST_F(StudioProfileTest, AFailureIsShownAndRecorded) {
  MainWindow w;
  w.setProfileDatabase(db_);
  ASSERT_FALSE(
      w.openModelNow(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx").has_value());
  ::setenv("SOD2_AGENT", "/bin/echo", 1);
  auto err = w.profileNow("local", {});
  ASSERT_TRUE(err.has_value());
  EXPECT_TRUE(err->contains("not a sod2 agent")) << err->toStdString();
  w.historyView()->refresh();
  ASSERT_EQ(w.historyView()->model()->rowCount(), 1);
  EXPECT_FALSE(w.historyView()->model()->runs()[0].ok);
}

TEST_F(StudioProfileTest, NothingOpenIsAClearError) {
  MainWindow w;
  w.setProfileDatabase(db_);
  auto err = w.profileNow("local", {});
  ASSERT_TRUE(err.has_value());
  EXPECT_TRUE(err->contains("open a model")) << err->toStdString();
}

TEST_F(StudioProfileTest, TheDevicePanelListsThisMachine) {
  MainWindow w;
  w.devicePanel()->refreshNow();
  bool local = false;
  for (int r = 0; r < w.devicePanel()->model()->rowCount(); ++r)
    local |= w.devicePanel()->model()->idAt(r) == "local";
  EXPECT_TRUE(local);
  EXPECT_EQ(w.devicePanel()->selectedDevice(), "local");
}

}  // namespace
}  // namespace sod2::studio
