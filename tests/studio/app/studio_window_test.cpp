// The studio window on every corpus model, offscreen: it opens the model, selecting a node shows
// its op, class and dims in the inspector, and after a binding change the memory timeline's
// rectangles are exactly what `sod2 plan --json --bind` reports at that binding.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QSignalSpy>
#include <QTest>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../opt/corpus.h"
#include "../test_home.h"
#include "app/cli/compile_command.h"
#include "app/cli/plan_command.h"
#include "app/studio/backend/backend_view.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/plan/shapes_table_model.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/widgets/main_window.h"
#include "app/studio/widgets/plan_compare.h"
#include "app/studio/widgets/shapes_page.h"
#include "app/studio/widgets/sweep_view.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_window_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

std::string ranges_file(const testing::CorpusModel& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, r] : m.options.ranges) j[name] = {r.lo, r.hi, r.multiple};
  const auto path = std::filesystem::temp_directory_path() /
                    ("studio_ranges_" + testing::gtest_safe_name(m.name) + ".json");
  std::ofstream(path) << j.dump();
  return path.string();
}

// The CLI's plan report for `m` at `values` (extra flags such as --no-fusion appended).
nlohmann::json plan_report(const testing::CorpusModel& m,
                           const std::map<std::string, int64_t>& values,
                           std::vector<std::string> extra = {}) {
  std::string bind_arg;
  for (const auto& [k, v] : values)
    bind_arg += (bind_arg.empty() ? "" : ",") + k + "=" + std::to_string(v);
  std::vector<std::string> args = {m.file.string(), "--ranges", ranges_file(m),
                                   "--bind",        bind_arg,   "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_plan(args, out, err), 0) << err.str();
  return nlohmann::json::parse(out.str());
}

void expect_rects_equal(const TimelineModel& t, const nlohmann::json& report) {
  const auto& tensors = report.at("tensors");
  ASSERT_EQ(t.rects().size(), tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TimelineRect& r = t.rects()[i];
    EXPECT_EQ(r.name, tensors[i].at("name").get<std::string>()) << i;
    EXPECT_EQ(r.offset, tensors[i].at("offset").get<int64_t>()) << r.name;
    EXPECT_EQ(r.size, tensors[i].at("size").get<int64_t>()) << r.name;
    EXPECT_EQ(r.first_step, tensors[i].at("first_step").get<int64_t>()) << r.name;
    EXPECT_EQ(r.last_step, tensors[i].at("last_step").get<int64_t>()) << r.name;
  }
}

class StudioWindowCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(StudioWindowCorpus, OpensSelectsRebindsAndMatchesThePlanReport) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  MainWindow w;
  w.resize(1200, 800);
  auto err = w.openModelNow(QString::fromStdString(m->file.string()), options);
  ASSERT_FALSE(err.has_value()) << err->toStdString();

  // Select the first node with an output: the inspector names its op and dims.
  const Graph& g = w.document()->graph();
  NodeId chosen = kNoNode;
  for (size_t i = 0; i < g.num_nodes() && chosen == kNoNode; ++i) {
    const Node& n = g.node(static_cast<NodeId>(i));
    if (n.op_type != "Constant" && !n.outputs.empty() && n.outputs[0] != kNoValue)
      chosen = static_cast<NodeId>(i);
  }
  ASSERT_NE(chosen, kNoNode);
  w.selectCoreNode(chosen);
  const std::string inspector = w.inspectorText().toStdString();
  EXPECT_NE(inspector.find("op       " + g.node(chosen).op_type), std::string::npos) << inspector;
  EXPECT_NE(inspector.find(w.document()->dims_text(g.node(chosen).outputs[0])), std::string::npos)
      << inspector;
  // The shapes table follows the selection (the row of a box's last member's first output).
  const DisplayGraph* d = w.displayGraph();
  const DisplayNode& shown = d->nodes[static_cast<size_t>(d->display_node_of(chosen))];
  EXPECT_EQ(w.selectedShapesValue(), g.node(shown.members.back()).outputs[0]);

  // A new binding: the timeline equals the CLI's plan report there.
  const auto& values = m->bindings[1];
  QString bind_error;
  ASSERT_TRUE(w.applyBinding(values, &bind_error)) << bind_error.toStdString();
  const TimelineModel* t = w.timelineModel();
  ASSERT_NE(t, nullptr);
  expect_rects_equal(*t, plan_report(*m, values));
  // The inspector follows the binding.
  w.selectCoreNode(chosen);
  auto b = w.document()->binding(values);
  ASSERT_TRUE(b.ok());
  EXPECT_NE(w.inspectorText().toStdString().find(
                "at binding " + w.document()->dims_at_text(g.node(chosen).outputs[0], *b)),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, StudioWindowCorpus,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         [](const auto& info) { return testing::gtest_safe_name(info.param); });

// Two plans side by side: the right-hand one is the CLI's plan at the other binding, or its
// plan without fusion at the current binding.
TEST(StudioWindow, ComparesAnotherBindingAndThePlanWithoutFusion) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  MainWindow w;
  w.resize(1200, 800);
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(m->file.string()), options).has_value());
  ASSERT_TRUE(w.applyBinding(m->bindings[2]));

  PlanCompare* c = w.planCompare();
  QString error;
  ASSERT_TRUE(c->setOtherBinding(m->bindings[0], &error)) << error.toStdString();
  ASSERT_NE(c->rightModel(), nullptr);
  expect_rects_equal(*c->rightModel(), plan_report(*m, m->bindings[0]));
  EXPECT_TRUE(c->rightCaption().contains("arena")) << c->rightCaption().toStdString();

  c->setMode(PlanCompare::Mode::kWithoutFusion);
  // Planned on a worker: the caption says so until it arrives.
  if (c->isPlanning())
    EXPECT_TRUE(c->rightCaption().contains("planning")) << c->rightCaption().toStdString();
  c->finishPlanning();
  ASSERT_NE(c->rightModel(), nullptr);
  expect_rects_equal(*c->rightModel(), plan_report(*m, m->bindings[2], {"--no-fusion"}));
  // The right side follows the main binding in this mode.
  ASSERT_TRUE(w.applyBinding(m->bindings[1]));
  expect_rects_equal(*c->rightModel(), plan_report(*m, m->bindings[1], {"--no-fusion"}));

  // A binding outside the range is refused with the symbol named, and nothing crashes.
  c->setMode(PlanCompare::Mode::kOtherBinding);
  auto bad = m->bindings[0];
  bad.begin()->second = 1 << 20;
  EXPECT_FALSE(c->setOtherBinding(bad, &error));
  EXPECT_TRUE(error.contains(QString::fromStdString(bad.begin()->first))) << error.toStdString();
}

// The Sweep view draws the plan that runs along one symbol, the others held at the binding: each
// point is what `sod2 plan --bind` reports there, and a click sets the binding.
TEST(StudioWindow, SweepsOneSymbolAndAClickSetsTheBinding) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "moe_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  MainWindow w;
  w.resize(1200, 800);
  w.show();
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(m->file.string()), options).has_value());
  w.showView(StudioView::kSweep);
  ASSERT_TRUE(w.applyBinding({{"batch", 2}, {"seq", 16}}));
  SweepView* s = w.sweepView();
  s->setSymbol("seq");
  ASSERT_NE(s->sweep(), nullptr) << s->caption().toStdString();
  const pipeline::PlanSweep& sweep = *s->sweep();
  EXPECT_EQ(sweep.held.at("batch"), 2);
  ASSERT_LE(sweep.points.size(), static_cast<size_t>(SweepView::kMaxPoints));
  ASSERT_GE(sweep.points.size(), 2u);
  EXPECT_EQ(s->cursor(), std::optional<int64_t>(16));
  for (size_t i : {size_t{0}, sweep.points.size() / 2}) {
    const pipeline::SweepPoint& p = sweep.points[i];
    ASSERT_TRUE(p.at) << p.error;
    const auto report = plan_report(*m, {{"batch", 2}, {"seq", p.value}});
    EXPECT_EQ(p.at->arena_bytes, report["summary"]["arena_bytes"].get<int64_t>()) << p.value;
  }
  // Holding another batch sweeps again.
  ASSERT_TRUE(w.applyBinding({{"batch", 4}, {"seq", 16}}));
  EXPECT_EQ(s->sweep()->held.at("batch"), 4);
  // A click at the plot's right end binds the last value.
  QWidget* plot = s->plot();
  const QPoint right(plot->width() - 17, plot->height() / 2);
  const std::optional<int64_t> last = s->valueAt(right.x());
  ASSERT_EQ(last, std::optional<int64_t>(s->sweep()->points.back().value));
  QTest::mouseClick(plot, Qt::LeftButton, {}, right);
  QApplication::processEvents();
  EXPECT_EQ(s->cursor(), last);
}

// An If's bodies open in place: their nodes are drawn, the inspector reports a body node with
// its body named, and closing them restores the plain drawing.
TEST(StudioWindow, OpensAndClosesTheBodiesOfAnIf) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "skipnet");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  MainWindow w;
  w.resize(1200, 800);
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(m->file.string()), options).has_value());
  const size_t plain = w.displayGraph()->nodes.size();
  const Node* control = nullptr;
  for (const DisplayNode& n : w.displayGraph()->nodes)
    if (n.node && n.has_subgraphs && !control) control = n.node;
  ASSERT_NE(control, nullptr);

  w.toggleBodies(control, true);
  const DisplayGraph* d = w.displayGraph();
  int body_node = -1;
  for (const DisplayNode& n : d->nodes)
    if (n.body_of == control && body_node < 0) body_node = n.id;
  ASSERT_GE(body_node, 0);
  EXPECT_EQ(w.graphView()->nodeCount(), static_cast<int>(d->nodes.size()));
  w.graphView()->selectNode(body_node, true);
  const DisplayNode& chosen = d->nodes[static_cast<size_t>(body_node)];
  const std::string text = w.inspectorText().toStdString();
  EXPECT_NE(text.find("op       " + chosen.op), std::string::npos) << text;
  EXPECT_NE(text.find("in       " + chosen.body), std::string::npos) << text;

  w.toggleBodies(control, true);
  EXPECT_EQ(w.displayGraph()->nodes.size(), plain);
}

// The background open of a file that does not import reports the importer's message (it
// reported an empty one: the error branch had been lost) without blocking the event loop.
TEST(StudioWindow, ABackgroundOpenOfABadFileReportsWhy) {
  app();
  MainWindow w;
  QSignalSpy finished(&w, &MainWindow::openFinished);
  w.openModel("/nonexistent/model.onnx");
  ASSERT_TRUE(finished.wait(30000));
  EXPECT_FALSE(finished.at(0).at(0).toBool());
  const QString error = finished.at(0).at(1).toString();
  EXPECT_TRUE(error.contains("/nonexistent/model.onnx")) << error.toStdString();
  EXPECT_EQ(w.document(), nullptr);
}

// Opening another model drops the old drawing at once: until the new layout arrives, nothing
// shown may point into the old model (a click there used to read the new model with the old
// model's node ids).
TEST(StudioWindow, OpeningAnotherModelDropsTheOldDrawingFirst) {
  app();
  auto big = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "bert_tiny");
  auto small = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "ranet_exit");
  ASSERT_TRUE(big.ok() && small.ok());
  MainWindow w;
  OpenOptions options;
  options.rdp = big->options;
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(big->file.string()), options).has_value());
  ASSERT_GT(w.graphView()->nodeCount(), 0);
  QSignalSpy finished(&w, &MainWindow::openFinished);
  options.rdp = small->options;
  w.openModel(QString::fromStdString(small->file.string()), options);
  ASSERT_TRUE(finished.wait(60000));
  ASSERT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
  // The new document is shown; its layout may still be running: the view holds either nothing
  // or the new model's drawing.
  EXPECT_TRUE(w.displayGraph() == nullptr || w.graphView()->nodeCount() == 0 ||
              w.displayGraph()->display_of_node.size() == w.document()->graph().num_nodes());
  if (w.displayGraph() == nullptr) EXPECT_EQ(w.graphView()->nodeCount(), 0);
  w.graphView()->selectNode(0, false);  // harmless whatever is shown
}

// A compiled package opens too (from File > Open's background path): the graph as compiled, the
// inspector on a compiled node, and the timeline at a new binding is the package's plan there.
TEST(StudioWindow, OpensACompiledPackage) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  const auto package = std::filesystem::temp_directory_path() / "studio_window_yolo.sod2";
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_compile(
                {m->file.string(), "-o", package.string(), "--ranges", ranges_file(*m)}, out, err),
            0)
      << err.str();
  MainWindow w;
  w.resize(1200, 800);
  QSignalSpy finished(&w, &MainWindow::openFinished);
  w.openModel(QString::fromStdString(package.string()));
  ASSERT_TRUE(finished.count() > 0 || finished.wait(30000));
  ASSERT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
  ASSERT_NE(w.package(), nullptr);
  EXPECT_EQ(w.document(), nullptr);
  // The layout arrives from the worker.
  QSignalSpy populated(w.graphView(), &GraphView::populated);
  ASSERT_TRUE(w.graphView()->nodeCount() > 0 || populated.wait(60000));
  w.graphView()->finishPopulating();
  const auto& compiled = w.package()->program().graphs[0].nodes;
  ASSERT_NE(w.displayGraph(), nullptr);
  EXPECT_EQ(w.displayGraph()->display_of_node.size(), compiled.size());

  w.selectCoreNode(0);
  const std::string text = w.inspectorText().toStdString();
  // A fused kernel (the sample's first Conv runs with its SiLU) shows its domain too.
  const std::string& domain = compiled[0].info.domain;
  EXPECT_NE(
      text.find("op       " + (domain.empty() ? "" : domain + ".") + compiled[0].info.op_type),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("as compiled"), std::string::npos) << text;
  // The package carries RDP's symbolic dims for tools: the image input's are shown.
  const auto& input = w.package()->program().graphs[0].values[static_cast<size_t>(
      w.package()->program().graphs[0].inputs[0])];
  EXPECT_EQ(input.dims, "[1,3,height,width]");

  ASSERT_TRUE(w.applyBinding(m->bindings[0]));
  auto at = w.package()->plan_at(m->bindings[0]);
  ASSERT_TRUE(at.ok());
  ASSERT_NE(w.timelineModel(), nullptr);
  EXPECT_EQ(w.timelineModel()->arena_bytes(), at->arena_bytes);
  ASSERT_EQ(w.timelineModel()->rects().size(), at->sizes.size());
  for (size_t i = 0; i < at->sizes.size(); ++i) {
    EXPECT_EQ(w.timelineModel()->rects()[i].offset, at->offsets[i]);
    EXPECT_EQ(w.timelineModel()->rects()[i].size, at->sizes[i]);
  }
  EXPECT_EQ(w.selectedShapesValue(), kNoValue);  // a package has no shapes table
  QString error;
  EXPECT_FALSE(w.applyBinding({{"height", 33}, {"width", 64}}, &error));
  EXPECT_TRUE(error.contains("height")) << error.toStdString();
}

// #23 item 7: every docked view comes from the one registry (dock_pages.h) with its object name
// (saved layouts key on it) and title, the View menu can show each, and the pages that follow
// the document are told of a model and then of a package the same way: the backend page is
// given each to place, the model-only pages forget the model when the package comes. The
// inspector is one of those pages (its text follows the selection and the binding), and the
// shapes page prepares its table for a model, none for a package.
TEST(StudioWindow, DockedViewsComeFromTheRegistryAndFollowModelAndPackageAlike) {
  app();
  MainWindow w;
  for (const DockPage& page : dock_pages()) {
    QDockWidget* dock = w.dockOf(page.view);
    ASSERT_NE(dock, nullptr) << page.name;
    EXPECT_EQ(dock->objectName().toStdString(), page.name);
    EXPECT_EQ(dock->windowTitle(), MainWindow::tr(page.title));
    EXPECT_EQ(dock->widget(), w.viewWidget(page.view)) << page.name;
    EXPECT_FALSE(dock->toggleViewAction()->associatedObjects().isEmpty()) << page.name;
  }
  EXPECT_EQ(w.dockOf(StudioView::kGraph), nullptr);

  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  OpenOptions options;
  options.rdp = m->options;
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(m->file.string()), options).has_value());
  EXPECT_FALSE(w.sweepView()->symbol().isEmpty()) << "the model's symbols reach the sweep page";
  // The backend page was given the model to place (placing may still fail without Vulkan).
  w.backendView()->placeNow();
  EXPECT_FALSE(w.backendView()->headerText().contains("Open a model"));
  auto* shapes = qobject_cast<ShapesPage*>(w.viewWidget(StudioView::kShapes));
  ASSERT_NE(shapes, nullptr);
  ASSERT_NE(shapes->model(), nullptr) << "the shapes page prepared the model's table";
  EXPECT_GT(shapes->model()->rowCount(), 0);
  // The inspector page: a node's report, then the same node at a new binding.
  const Graph& g = w.document()->graph();
  NodeId chosen = kNoNode;
  for (size_t i = 0; i < g.num_nodes() && chosen == kNoNode; ++i)
    if (g.node(static_cast<NodeId>(i)).op_type == "Conv") chosen = static_cast<NodeId>(i);
  ASSERT_NE(chosen, kNoNode);
  w.selectCoreNode(chosen);
  const QString at_start = w.inspectorText();
  EXPECT_TRUE(at_start.contains("op       Conv")) << at_start.toStdString();
  ASSERT_TRUE(w.applyBinding(m->bindings[1]));
  auto b = w.document()->binding(m->bindings[1]);
  ASSERT_TRUE(b.ok());
  const std::string at_new = w.document()->dims_at_text(g.node(chosen).outputs[0], *b);
  EXPECT_NE(w.inspectorText(), at_start);
  EXPECT_TRUE(w.inspectorText().contains(QString::fromStdString("at binding " + at_new)))
      << w.inspectorText().toStdString();

  const auto package = std::filesystem::temp_directory_path() / "studio_window_pages.sod2";
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_compile(
                {m->file.string(), "-o", package.string(), "--ranges", ranges_file(*m)}, out, err),
            0)
      << err.str();
  ASSERT_FALSE(w.openModelNow(QString::fromStdString(package.string())).has_value());
  ASSERT_NE(w.opened(), nullptr);
  EXPECT_EQ(w.opened()->package(), w.package());
  EXPECT_TRUE(w.sweepView()->symbol().isEmpty()) << "a package has no plan program to sweep";
  EXPECT_EQ(shapes->model(), nullptr) << "a package prepares no shapes table";
  EXPECT_TRUE(w.inspectorText().isEmpty()) << "a new document clears the inspector";
  w.backendView()->placeNow();
  EXPECT_FALSE(w.backendView()->headerText().contains("Open a model"));
  std::filesystem::remove(package);
}

// The background open runs every page's prepare() on its worker: the shapes table arrives with
// the document, in the window's thread, and follows the selection.
TEST(StudioWindow, TheOpeningWorkerPreparesTheShapesTable) {
  app();
  auto m = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "yolo_tiny");
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  MainWindow w;
  QSignalSpy finished(&w, &MainWindow::openFinished);
  OpenOptions options;
  options.rdp = m->options;
  w.openModel(QString::fromStdString(m->file.string()), options);
  ASSERT_TRUE(finished.count() > 0 || finished.wait(60000));
  ASSERT_TRUE(finished.at(0).at(0).toBool()) << finished.at(0).at(1).toString().toStdString();
  auto* shapes = qobject_cast<ShapesPage*>(w.viewWidget(StudioView::kShapes));
  ASSERT_NE(shapes, nullptr);
  ASSERT_NE(shapes->model(), nullptr);
  EXPECT_EQ(shapes->model()->thread(), w.thread());
  const Graph& g = w.document()->graph();
  EXPECT_EQ(shapes->model()->rowCount(), static_cast<int>(g.num_values()));
}

TEST(StudioWindow, ABadFileIsAReadableError) {
  app();
  MainWindow w;
  auto err = w.openModelNow("/nonexistent/model.onnx");
  ASSERT_TRUE(err.has_value());
  EXPECT_TRUE(err->contains("/nonexistent/model.onnx")) << err->toStdString();
}

}  // namespace
}  // namespace sod2::studio
