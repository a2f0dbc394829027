// The studio window on an exporter-style scoped transformer, offscreen: it opens with its
// layers closed, opening a layer opens it where it was on screen and leaves the rest in place, undo
// and redo walk back and forth, a node hidden in a closed scope is revealed and selected, the
// context menu opens and closes boxes, and the graph exports as SVG and PNG. The same model
// compiled to a package opens with its layers closed too, and find reaches inside them.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QImage>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../test_home.h"
#include "app/cli/compile_command.h"
#include "app/studio/graph/graph_minimap.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/find_bar.h"
#include "app/studio/widgets/main_window.h"
#include "tests/bench/synthetic_models.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_hierarchy_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

class StudioHierarchyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    dir_ = sod2::testing::test_dir("hierarchy");
    std::filesystem::create_directories(dir_);
    model_ = (dir_ / "scoped_transformer.onnx").string();
    std::ofstream(model_, std::ios::binary) << bench::transformer_like(1500).SerializeAsString();
    owned_ = std::make_unique<MainWindow>();  // after the QApplication
    owned_->resize(1400, 900);
    owned_->show();
    const auto error = window().openModelNow(QString::fromStdString(model_), {});
    ASSERT_FALSE(error) << error->toStdString();
    ASSERT_NE(window().graphHierarchy(), nullptr);
  }

  // The display node drawing main-graph node `node`.
  const DisplayNode& shown(NodeId node) const {
    const DisplayGraph& d = *window().displayGraph();
    return d.nodes[static_cast<size_t>(d.display_node_of(node))];
  }
  int scope_of_layer(int layer) const {
    const GraphHierarchy& h = *window().graphHierarchy();
    for (int child : h.scopes[1].children)
      if (h.scopes[static_cast<size_t>(child)].label == "layers." + std::to_string(layer))
        return child;
    return -1;
  }

  std::filesystem::path dir_;
  std::string model_;
  MainWindow& window() const { return *owned_; }

  std::unique_ptr<MainWindow> owned_;
};

TEST_F(StudioHierarchyTest, OpensWithLayersClosedAndOpensOneWithoutMovingIt) {
  const DisplayGraph& d = *window().displayGraph();
  EXPECT_LE(d.nodes.size(), GraphHierarchy::kDefaultItems + 2);
  EXPECT_EQ(shown(0).kind, DisplayNodeKind::kScope);
  EXPECT_EQ(shown(0).label, "layers.0");

  // Layer 3's first node: on screen before, at the same place after its scope opens.
  const int layer3 = scope_of_layer(3);
  ASSERT_GT(layer3, 0);
  NodeId first = kNoNode;
  const GraphHierarchy& h = *window().graphHierarchy();
  for (size_t i = 0; i < h.scope_of_node.size() && first == kNoNode; ++i)
    if (h.scopes[static_cast<size_t>(h.scope_of_node[i])].parent == layer3)
      first = static_cast<NodeId>(i);
  ASSERT_NE(first, kNoNode);
  window().graphView()->selectNode(window().displayGraph()->display_node_of(first), true);
  const auto before = window().graphView()->viewPositionOf(first);
  ASSERT_TRUE(before);
  const size_t closed_count = window().displayGraph()->nodes.size();
  window().toggleScope(layer3, /*now=*/true);
  EXPECT_GT(window().displayGraph()->nodes.size(), closed_count);
  // Now drawn in the layer's attention scope's box (the layer's frame holds it).
  EXPECT_EQ(shown(first).kind, DisplayNodeKind::kScope);
  EXPECT_EQ(h.scopes[static_cast<size_t>(shown(first).scope)].parent, layer3);
  const auto after = window().graphView()->viewPositionOf(first);
  ASSERT_TRUE(after);
  // The layer opens downwards from where its box's top was: its frame's title, then its first
  // box.
  EXPECT_GE(after->y(), before->y() - 1.0);
  EXPECT_LE(after->y(), before->y() + 60.0);

  // Undo closes it again, redo opens it.
  window().undoView(/*now=*/true);
  EXPECT_EQ(window().displayGraph()->nodes.size(), closed_count);
  window().redoView(/*now=*/true);
  EXPECT_GT(window().displayGraph()->nodes.size(), closed_count);
  window().undoView(true);
  window().undoView(true);  // nothing more to undo: no change
  EXPECT_EQ(window().displayGraph()->nodes.size(), closed_count);
}

// What the person did not open stays where it was on screen: the layer above keeps its place
// exactly, the one below moves straight down; undo shows the drawing from before exactly, and
// Lay out again lays the whole graph out afresh.
TEST_F(StudioHierarchyTest, OpeningALayerLeavesTheOthersInPlaceAndUndoRestoresTheDrawing) {
  const GraphHierarchy& h = *window().graphHierarchy();
  auto first_node_of = [&h](int scope) {
    for (size_t i = 0; i < h.scope_of_node.size(); ++i)
      for (int s = h.scope_of_node[i]; s > 0; s = h.scopes[static_cast<size_t>(s)].parent)
        if (s == scope && !h.folded_constant[i]) return static_cast<NodeId>(i);
    return kNoNode;
  };
  const NodeId above = first_node_of(scope_of_layer(2)), below = first_node_of(scope_of_layer(4));
  ASSERT_NE(above, kNoNode);
  ASSERT_NE(below, kNoNode);
  window().graphView()->selectNode(
      window().displayGraph()->display_node_of(first_node_of(scope_of_layer(3))), true);
  const GraphLayout closed = *window().graphLayout();
  const auto above_at = window().graphView()->viewPositionOf(above);
  const auto below_at = window().graphView()->viewPositionOf(below);
  ASSERT_TRUE(above_at && below_at);

  window().toggleScope(scope_of_layer(3), /*now=*/true);
  EXPECT_TRUE(window().drawingIsIncremental());
  const auto above_now = window().graphView()->viewPositionOf(above);
  const auto below_now = window().graphView()->viewPositionOf(below);
  ASSERT_TRUE(above_now && below_now);
  EXPECT_NEAR(above_now->x(), above_at->x(), 1.0);
  EXPECT_NEAR(above_now->y(), above_at->y(), 1.0);
  EXPECT_NEAR(below_now->x(), below_at->x(), 1.0);
  EXPECT_GT(below_now->y(), below_at->y() + 100);  // made room for the layer's contents

  window().undoView(/*now=*/true);
  const GraphLayout& again = *window().graphLayout();
  ASSERT_EQ(again.nodes.size(), closed.nodes.size());
  for (size_t i = 0; i < closed.nodes.size(); ++i) {
    EXPECT_DOUBLE_EQ(again.nodes[i].x, closed.nodes[i].x) << i;
    EXPECT_DOUBLE_EQ(again.nodes[i].y, closed.nodes[i].y) << i;
  }

  window().toggleScope(scope_of_layer(3), /*now=*/true);
  window().layOutAgain(/*now=*/true);
  EXPECT_FALSE(window().drawingIsIncremental());
  EXPECT_GT(window().displayGraph()->nodes.size(), closed.nodes.size());
}

TEST_F(StudioHierarchyTest, RevealsAndSelectsANodeInAClosedScope) {
  const QList<NodeId> hits = window().coreNodesMatching(QStringLiteral("/encoder/layers.5/norm/"));
  ASSERT_FALSE(hits.isEmpty());
  const NodeId target = hits.back();  // the layer's LayerNormalization
  EXPECT_EQ(shown(target).kind, DisplayNodeKind::kScope);
  window().revealCoreNode(target, /*now=*/true);
  const int selected = window().graphView()->selectedNode();
  ASSERT_GE(selected, 0);
  const DisplayNode& n = window().displayGraph()->nodes[static_cast<size_t>(selected)];
  EXPECT_NE(n.kind, DisplayNodeKind::kScope);
  EXPECT_NE(std::find(n.members.begin(), n.members.end(), target), n.members.end());
  EXPECT_NE(window().inspectorText().indexOf(QStringLiteral("LayerNormalization")), -1);
}

TEST_F(StudioHierarchyTest, ContextMenuOpensAScopeAndCloseItAgain) {
  GraphView* view = window().graphView();
  view->finishPopulating();
  const int box = window().displayGraph()->display_node_of(0);
  const auto at = view->viewPositionOf(0);
  ASSERT_TRUE(at);
  view->selectNode(box, true);
  const auto centred = view->viewPositionOf(0);
  std::unique_ptr<QMenu> menu(view->contextMenuAt(centred->toPoint()));
  ASSERT_TRUE(menu);
  QAction* open = nullptr;
  QStringList texts;
  for (QAction* a : menu->actions()) {
    texts << a->text();
    if (a->text() == QStringLiteral("Open")) open = a;
  }
  EXPECT_TRUE(texts.contains(QStringLiteral("Copy name"))) << texts.join(',').toStdString();
  EXPECT_TRUE(texts.contains(QStringLiteral("Show in shapes table")));
  ASSERT_TRUE(open) << texts.join(',').toStdString();
  QSignalSpy spy(view, &GraphView::scopeActivated);
  open->trigger();
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.front().front().toInt(), window().displayGraph()->nodes[box].scope);
  EXPECT_EQ(view->contextMenuAt(QPoint(-50, -50)), nullptr) << "empty space has no menu";
}

TEST_F(StudioHierarchyTest, ExportsTheGraphAsSvgAndPng) {
  const QString svg = QString::fromStdString((dir_ / "graph.svg").string());
  const QString png = QString::fromStdString((dir_ / "graph.png").string());
  ASSERT_FALSE(window().exportGraph(svg, /*whole=*/true));
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  const QByteArray text = f.readAll();
  EXPECT_TRUE(text.contains("<svg"));
  EXPECT_TRUE(text.contains("layers.0")) << "text stays text";
  ASSERT_FALSE(window().exportGraph(png, /*whole=*/false));
  const QImage image(png);
  EXPECT_FALSE(image.isNull());
  EXPECT_GT(image.width(), 100);
  // A name it cannot write, or a format it does not know: an error, no file.
  const auto bad_suffix =
      window().exportGraph(QString::fromStdString((dir_ / "g.bmp").string()), true);
  ASSERT_TRUE(bad_suffix);
  EXPECT_NE(bad_suffix->indexOf(QStringLiteral(".svg or .png")), -1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "g.bmp"));
  EXPECT_TRUE(
      window().exportGraph(QString::fromStdString((dir_ / "no/such/dir/g.svg").string()), true));
}

TEST_F(StudioHierarchyTest, TheMinimapShowsTheWholeDrawingAndMovesTheView) {
  GraphView* view = window().graphView();
  view->finishPopulating();
  ASSERT_TRUE(view->minimapShown()) << "a chain of ~75 layer boxes is taller than the window";
  // A click on a layer in the middle of the map centres the view on it.
  const auto at = view->viewPositionOf(window().coreNodesMatching("/encoder/layers.40/").front());
  ASSERT_TRUE(at);
  const QPointF target = view->mapToScene(at->toPoint()) + QPointF(20, 10);
  GraphMinimap* map = view->minimap();
  QTest::mouseClick(map, Qt::LeftButton, {}, map->toMap(target).toPoint());
  const QPointF centre = view->mapToScene(view->viewport()->rect().center());
  // A map pixel is several scene units: near, not exact.
  const double unit = 1.0 / (map->toMap(QPointF(1, 0)).x() - map->toMap(QPointF(0, 0)).x());
  EXPECT_NEAR(centre.y(), target.y(), 2 * unit);
  view->setMinimapEnabled(false);
  EXPECT_FALSE(view->minimapShown());
  view->setMinimapEnabled(true);
  EXPECT_TRUE(view->minimapShown());
}

// The scoped transformer compiled to a .sod2 package, opened in the window.
class StudioPackageHierarchyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    const auto dir = sod2::testing::test_dir("hierarchy");
    std::filesystem::create_directories(dir);
    const std::string model = (dir / "scoped_for_package.onnx").string();
    package_ = (dir / "scoped_transformer.sod2").string();
    std::ofstream(model, std::ios::binary) << bench::transformer_like(1500).SerializeAsString();
    std::ostringstream out, err;
    ASSERT_EQ(cli::run_compile({model, "-o", package_}, out, err), 0) << err.str();
    window_ = std::make_unique<MainWindow>();
    window_->resize(1400, 900);
    window_->show();
    const auto error = window_->openModelNow(QString::fromStdString(package_), {});
    ASSERT_FALSE(error) << error->toStdString();
    ASSERT_NE(window_->package(), nullptr);
    ASSERT_NE(window_->graphHierarchy(), nullptr);
  }
  void TearDown() override {
    window_.reset();
    std::filesystem::remove(package_);
  }
  const DisplayNode& shown(NodeId node) const {
    const DisplayGraph& d = *window_->displayGraph();
    return d.nodes[static_cast<size_t>(d.display_node_of(node))];
  }

  std::string package_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(StudioPackageHierarchyTest, OpensWithItsLayersClosedAndSummarisesALayer) {
  MainWindow& w = *window_;
  const DisplayGraph& d = *w.displayGraph();
  EXPECT_LE(d.nodes.size(), GraphHierarchy::kDefaultItems + 2);
  EXPECT_LT(d.nodes.size(), w.package()->num_nodes());
  ASSERT_EQ(shown(0).kind, DisplayNodeKind::kScope);
  EXPECT_EQ(shown(0).label, "layers.0");
  EXPECT_EQ(d.display_of_node.size(), w.package()->num_nodes());
  // The inspector summarises the box's compiled nodes.
  w.graphView()->selectNode(d.display_node_of(0), true);
  const QString text = w.inspectorText();
  EXPECT_TRUE(text.contains(QStringLiteral("name scope /encoder/layers.0"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("MatMul"))) << text.toStdString();
  // Find reaches a compiled node inside a closed layer, on the layer's box.
  const auto found = GraphFindIndex(d).find(QStringLiteral("/encoder/layers.5/norm/"));
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(d.nodes[static_cast<size_t>(found.front().node)].kind, DisplayNodeKind::kScope);
  EXPECT_EQ(d.nodes[static_cast<size_t>(found.front().node)].label, "layers.5");
}

// Needs MainWindow's scope paths (toggleScope, changeDisplay, undoView, revealCoreNode,
// coreNodesMatching) to accept a package: they return early without a model (doc_) today. Enable
// with that change.
TEST_F(StudioPackageHierarchyTest, OpensALayerAndUndoClosesIt) {
  MainWindow& w = *window_;
  const int layer = shown(0).scope;
  const size_t closed = w.displayGraph()->nodes.size();
  w.toggleScope(layer, /*now=*/true);
  EXPECT_EQ(shown(0).label, "attention");  // layers.0's own scopes are boxes in its frame
  EXPECT_GT(w.displayGraph()->nodes.size(), closed);
  bool framed = false;
  for (const DisplayScopeFrame& f : w.displayGraph()->open_scopes) framed |= f.scope == layer;
  EXPECT_TRUE(framed);
  w.undoView(/*now=*/true);
  EXPECT_EQ(shown(0).kind, DisplayNodeKind::kScope);
  EXPECT_EQ(w.displayGraph()->nodes.size(), closed);

  // A compiled node hidden in a closed layer is found by name, revealed and selected.
  const QList<NodeId> hits = w.coreNodesMatching(QStringLiteral("/encoder/layers.5/norm/"));
  ASSERT_FALSE(hits.isEmpty());
  EXPECT_EQ(shown(hits.back()).kind, DisplayNodeKind::kScope);
  w.revealCoreNode(hits.back(), /*now=*/true);
  EXPECT_EQ(shown(hits.back()).kind, DisplayNodeKind::kOp);
  EXPECT_EQ(w.graphView()->selectedNode(), w.displayGraph()->display_node_of(hits.back()));
}

TEST(StudioShortcuts, HelpListsTheKeys) {
  const QString html = MainWindow::keyboardShortcutsHtml();
  for (const char* key : {"Ctrl+F", "F3 / Shift+F3", "Ctrl+Z / Ctrl+Shift+Z", "Ctrl+E"})
    EXPECT_NE(html.indexOf(QString::fromLatin1(key)), -1) << key;
}

}  // namespace
}  // namespace sod2::studio
