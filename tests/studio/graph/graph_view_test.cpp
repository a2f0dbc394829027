// The GraphView offscreen: a corpus model's layout shown, a node found by search and selected
// (nodeSelected carries its id), arrow keys walk edges, double-click on a box asks to expand it.
#include <gtest/gtest.h>

#include <QApplication>
#include <QGraphicsScene>
#include <QSignalSpy>
#include <QTest>
#include <cstdlib>

#include "app/studio/graph/graph_view.h"
#include "corpus_graphs.h"

namespace sod2::studio {
namespace {

// With SOD2_GRAPH_SHOTS=dir set, the tests save what they painted there, to look at by eye.
void save_shot(QWidget* w, const char* name) {
  const char* dir = std::getenv("SOD2_GRAPH_SHOTS");
  if (dir) w->grab().save(QString::fromUtf8(dir) + "/" + QString::fromLatin1(name) + ".png");
}

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_graph_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = new QApplication(argc, argv);
  return *a;
}

// A corpus model with at least one collapsed group, shown in a view.
class GraphViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& c : testing::corpus_graphs()) {
      DisplayGraph d = build_display_graph(*c.model, *c.rdp, &c.fusion, {});
      bool has_box = false;
      for (const DisplayNode& n : d.nodes) has_box = has_box || n.is_group_box;
      if (!has_box) continue;
      corpus_ = &c;
      display_ = std::move(d);
      break;
    }
    ASSERT_NE(corpus_, nullptr) << "no corpus model has a fused group";
    auto layout = layout_graph(display_);
    ASSERT_TRUE(layout.ok()) << layout.status().to_string();
    layout_ = std::move(*layout);
    view_.resize(800, 600);
    view_.setGraph(&display_, &layout_);
    view_.show();
    view_.fitAll();
    QApplication::processEvents();
  }

  QApplication& app_ = app();  // first: every QWidget needs it
  const testing::CorpusGraph* corpus_ = nullptr;
  DisplayGraph display_;
  GraphLayout layout_;
  GraphView view_;
};

TEST_F(GraphViewTest, ShowsEveryNodeEdgeAndTheLegend) {
  EXPECT_EQ(view_.nodeCount(), static_cast<int>(display_.nodes.size()));
  EXPECT_GE(view_.scene()->items().size(),
            static_cast<qsizetype>(display_.nodes.size() + display_.edges.size()));
  const auto legend = GraphView::legend();
  EXPECT_EQ(legend.size(), 6);
  EXPECT_EQ(legend.front().first, QStringLiteral("ISDO"));
  EXPECT_LE(view_.zoomFactor(), 1.5);
  save_shot(&view_, "corpus_fitted");
  view_.selectNode(static_cast<int>(display_.nodes.size() / 2), true);
  save_shot(&view_, "corpus_zoomed");
}

TEST_F(GraphViewTest, SearchAndSelectEmitsNodeSelected) {
  // Search by op, case-insensitively.
  const QString op = QString::fromStdString(display_.nodes[display_.nodes.size() / 2].op);
  const QList<int> hits = view_.findNodes(op.toUpper());
  ASSERT_FALSE(hits.isEmpty()) << op.toStdString();
  for (int id : hits) {
    const DisplayNode& n = display_.nodes[static_cast<size_t>(id)];
    const QString text = QString::fromStdString(n.label + "\n" + n.op).toLower();
    EXPECT_TRUE(text.contains(op.toLower()));
  }
  EXPECT_TRUE(view_.findNodes(QStringLiteral("no such node, surely")).isEmpty());
  EXPECT_TRUE(view_.findNodes(QString()).isEmpty());

  QSignalSpy spy(&view_, &GraphView::nodeSelected);
  view_.selectNode(hits.front(), true);
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.takeFirst().at(0).toInt(), hits.front());
  EXPECT_EQ(view_.selectedNode(), hits.front());
  EXPECT_GE(view_.zoomFactor(), 0.59);  // centred at a readable zoom

  // By name: a node's exact name finds it.
  const DisplayNode& named = display_.nodes[static_cast<size_t>(hits.back())];
  EXPECT_TRUE(view_.findNodes(QString::fromStdString(named.label)).contains(named.id));

  view_.selectNode(-1, false);
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.takeFirst().at(0).toInt(), -1);
  EXPECT_EQ(view_.selectedNode(), -1);
}

TEST_F(GraphViewTest, ArrowKeysFollowEdges) {
  const DisplayEdge& e = display_.edges.front();
  view_.selectNode(e.from, true);
  QSignalSpy spy(&view_, &GraphView::nodeSelected);
  QTest::keyClick(&view_, Qt::Key_Down);
  ASSERT_EQ(spy.count(), 1);
  const int next = spy.takeFirst().at(0).toInt();
  bool is_successor = false;
  for (const DisplayEdge& f : display_.edges) is_successor |= f.from == e.from && f.to == next;
  EXPECT_TRUE(is_successor) << "moved from " << e.from << " to " << next;
  QTest::keyClick(&view_, Qt::Key_Up);
  ASSERT_EQ(spy.count(), 1);
  const int back = spy.takeFirst().at(0).toInt();
  bool is_predecessor = false;
  for (const DisplayEdge& f : display_.edges) is_predecessor |= f.to == next && f.from == back;
  EXPECT_TRUE(is_predecessor);
}

TEST_F(GraphViewTest, ZoomKeysAndLabelToggle) {
  const double before = view_.zoomFactor();
  QTest::keyClick(&view_, Qt::Key_Plus);
  EXPECT_GT(view_.zoomFactor(), before);
  QTest::keyClick(&view_, Qt::Key_Minus);
  QTest::keyClick(&view_, Qt::Key_Minus);
  EXPECT_LT(view_.zoomFactor(), before);
  EXPECT_TRUE(view_.edgeLabelsVisible());
  view_.setEdgeLabelsVisible(false);
  EXPECT_FALSE(view_.edgeLabelsVisible());
}

TEST_F(GraphViewTest, DoubleClickOnAGroupBoxAsksToExpandIt) {
  int box = -1;
  for (const DisplayNode& n : display_.nodes)
    if (n.is_group_box) box = box < 0 ? n.id : box;
  ASSERT_GE(box, 0);
  view_.selectNode(box, true);  // centred, so it is on screen
  QApplication::processEvents();
  const NodeBox& b = layout_.nodes[static_cast<size_t>(box)];
  const QPoint at = view_.mapFromScene(QPointF(b.x, b.y));
  QSignalSpy spy(&view_, &GraphView::groupActivated);
  QTest::mouseDClick(view_.viewport(), Qt::LeftButton, Qt::NoModifier, at);
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.takeFirst().at(0).toInt(), display_.nodes[static_cast<size_t>(box)].group);
  // Enter on the selected box does the same.
  view_.selectNode(box, false);
  QTest::keyClick(&view_, Qt::Key_Return);
  ASSERT_EQ(spy.count(), 1);
}

TEST_F(GraphViewTest, ExpandedGroupsAreFramed) {
  const std::set<int> all = testing::all_multi_node_groups(corpus_->fusion);
  const DisplayGraph expanded =
      build_display_graph(*corpus_->model, *corpus_->rdp, &corpus_->fusion, all);
  auto layout = layout_graph(expanded);
  ASSERT_TRUE(layout.ok());
  view_.setGraph(&expanded, &*layout);
  EXPECT_EQ(view_.scene()->items().size(),
            static_cast<qsizetype>(expanded.nodes.size() + expanded.edges.size() + all.size()));
  view_.setGraph(nullptr, nullptr);
  EXPECT_EQ(view_.nodeCount(), 0);
  EXPECT_TRUE(view_.scene()->items().isEmpty());
}

TEST(GraphViewBig, TenThousandNodesBuildAndPaint) {
  app();
  const DisplayGraph d = testing::synthetic_transformer(10000);
  auto layout = layout_graph(d);
  ASSERT_TRUE(layout.ok());
  GraphView view;
  view.resize(1000, 700);
  const auto t = std::chrono::steady_clock::now();
  view.setGraph(&d, &*layout);
  view.finishPopulating();
  view.show();
  view.fitAll();
  const QPixmap frame = view.viewport()->grab();  // one full paint, fitted (lowest detail)
  view.selectNode(5000, true);
  const QPixmap zoomed = view.viewport()->grab();
  save_shot(&view, "big_zoomed");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  std::printf("GraphView: 10k-node scene built and painted twice in %.3f s\n", s);
  EXPECT_FALSE(frame.isNull());
  EXPECT_FALSE(zoomed.isNull());
}

// A big graph enters the scene in slices on the event loop, so the window keeps repainting;
// search sees the whole graph meanwhile, and selecting completes it first.
TEST(GraphViewBig, ABigGraphIsPopulatedInSlicesThatSearchAndSelectionSee) {
  app();
  const DisplayGraph d = testing::synthetic_transformer(10000);
  auto layout = layout_graph(d);
  ASSERT_TRUE(layout.ok());
  GraphView view;
  QSignalSpy done(&view, &GraphView::populated);
  view.setGraph(&d, &*layout);
  EXPECT_TRUE(view.isPopulating());
  EXPECT_LT(view.nodeCount(), static_cast<int>(d.nodes.size()));
  const int last = static_cast<int>(d.nodes.size()) - 1;
  EXPECT_TRUE(view.findNodes(QString::fromStdString(d.nodes.back().label)).contains(last));
  // The event loop adds the rest.
  EXPECT_TRUE(done.wait(60000));
  EXPECT_FALSE(view.isPopulating());
  EXPECT_EQ(view.nodeCount(), static_cast<int>(d.nodes.size()));

  view.setGraph(&d, &*layout);
  ASSERT_TRUE(view.isPopulating());
  view.selectNode(last, true);
  EXPECT_FALSE(view.isPopulating());
  EXPECT_EQ(view.selectedNode(), last);
}

}  // namespace
}  // namespace sod2::studio
