// The find bar (issue #23): GraphFindIndex on a hand-made graph (what each kind of match finds,
// which node it selects, in which order), then the bar in the studio window on the bundled
// sample model, offscreen: typing searches, F3 / Shift+F3 / Enter step and wrap, a symbolic
// shape finds the nodes producing it, a results row selects its node, Escape hides the bar.
#include <gtest/gtest.h>

#include <QAction>
#include <QApplication>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QTest>
#include <algorithm>
#include <cstdlib>
#include <memory>

#include "../test_home.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/find_bar.h"
#include "app/studio/widgets/main_window.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_find_bar_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

DisplayNode node(int id, DisplayNodeKind kind, std::string label, std::string op) {
  DisplayNode n;
  n.id = id;
  n.kind = kind;
  n.label = std::move(label);
  n.op = std::move(op);
  return n;
}

// image -> stem (Conv) -> act (Relu) -> out, edges labelled with their shapes.
DisplayGraph small_graph() {
  DisplayGraph g;
  g.nodes.push_back(node(0, DisplayNodeKind::kGraphInput, "image", "input"));
  g.nodes.push_back(node(1, DisplayNodeKind::kOp, "stem", "Conv"));
  g.nodes.push_back(node(2, DisplayNodeKind::kOp, "act", "Relu"));
  g.nodes.push_back(node(3, DisplayNodeKind::kGraphOutput, "out", "output"));
  g.edges.push_back({0, 1, "[1,3,height,width]", kNoValue});
  g.edges.push_back({1, 2, "[1,16,floordiv(height,4),floordiv(width,4)]", kNoValue});
  g.edges.push_back({2, 3, "[1,16,floordiv(height,4),floordiv(width,4)]", kNoValue});
  return g;
}

std::vector<int> nodes_of(const std::vector<FindMatch>& matches) {
  std::vector<int> ids;
  for (const FindMatch& m : matches) ids.push_back(m.node);
  return ids;
}

TEST(GraphFindIndex, FindsNamesOpsTensorsAndShapesCaseInsensitively) {
  const GraphFindIndex index(small_graph());
  auto m = index.find(QStringLiteral("STEM"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].node, 1);
  EXPECT_EQ(m[0].kind, FindMatchKind::kNode);

  m = index.find(QStringLiteral("relu"));
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].node, 2);
  EXPECT_EQ(m[0].kind, FindMatchKind::kOp);
  EXPECT_EQ(m[0].text, QStringLiteral("Relu"));

  // A graph input's tensor: its own node by name, and the node reading it.
  m = index.find(QStringLiteral(" Image "));
  EXPECT_EQ(nodes_of(m), (std::vector<int>{0, 1}));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].kind, FindMatchKind::kNode);
  EXPECT_EQ(m[1].kind, FindMatchKind::kTensor);

  // A shape belongs to the node producing the value: stem and act, not the output box.
  m = index.find(QStringLiteral("floordiv(HEIGHT,4)"));
  EXPECT_EQ(nodes_of(m), (std::vector<int>{1, 2}));
  for (const FindMatch& f : m) EXPECT_EQ(f.kind, FindMatchKind::kShape);

  // "height" is in every edge's shape; the input is found once however many edges it has.
  EXPECT_EQ(nodes_of(index.find(QStringLiteral("height"))), (std::vector<int>{0, 1, 2}));
  // The input/output boxes are not found by their pseudo-ops.
  EXPECT_TRUE(index.find(QStringLiteral("output")).empty());
  EXPECT_TRUE(index.find(QStringLiteral("   ")).empty());
  EXPECT_TRUE(index.find(QStringLiteral("no such thing")).empty());
  EXPECT_TRUE(GraphFindIndex().find(QStringLiteral("stem")).empty());
}

// A new graph under an open bar (a group opened, ids moved): the rows are remade for it, and
// nothing is chosen until the user steps again.
TEST(FindBar, ANewGraphRemakesTheRowsWithoutChoosingOne) {
  app();
  FindBar bar(nullptr);
  bar.setGraph(std::make_shared<DisplayGraph>(small_graph()));
  bar.activate();
  QTest::keyClicks(bar.queryEdit(), QStringLiteral("floordiv"));
  EXPECT_EQ(bar.countText(), QStringLiteral("1 of 2"));
  QTest::keyClick(bar.queryEdit(), Qt::Key_F3);
  EXPECT_EQ(bar.countText(), QStringLiteral("2 of 2"));
  bar.setGraph(std::make_shared<DisplayGraph>(small_graph()));
  EXPECT_EQ(bar.currentMatch(), -1);
  EXPECT_EQ(bar.countText(), QStringLiteral("2 matches"));
  EXPECT_EQ(bar.resultsList()->count(), 2);
  QTest::keyClick(bar.queryEdit(), Qt::Key_F3);
  EXPECT_EQ(bar.countText(), QStringLiteral("1 of 2"));
  bar.setGraph(nullptr);
  EXPECT_EQ(bar.countText(), QStringLiteral("no match"));
  EXPECT_EQ(bar.resultsList()->count(), 0);
}

// With SOD2_GRAPH_SHOTS=dir set, the window is saved there as the test left it, to look at by eye.
void save_shot(QWidget* w, const char* name) {
  const char* dir = std::getenv("SOD2_GRAPH_SHOTS");
  QApplication::processEvents();  // pending layouts, as the event loop would run them
  if (dir) w->grab().save(QString::fromUtf8(dir) + "/" + QString::fromLatin1(name) + ".png");
}

QAction* menu_action(MainWindow& w, const QString& text) {
  for (QAction* a : w.menuBar()->findChildren<QAction*>())
    if (a->text() == text) return a;
  return nullptr;
}

class FindBarWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    window_ = std::make_unique<MainWindow>();
    w().resize(1200, 800);
    w().show();
    const auto error =
        w().openModelNow(QStringLiteral(SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx"));
    ASSERT_FALSE(error.has_value()) << error->toStdString();
    bar_ = w().findBar();
    ASSERT_NE(bar_, nullptr);
    EXPECT_FALSE(bar_->isVisible());
    // Registered once, in the View menu, under Ctrl+F.
    QAction* find = menu_action(w(), QStringLiteral("&Find..."));
    ASSERT_NE(find, nullptr);
    EXPECT_EQ(find->shortcut(), QKeySequence(QKeySequence::Find));
    find->trigger();
    ASSERT_TRUE(bar_->isVisible());
  }

  void type(const QString& query) {
    bar_->queryEdit()->clear();
    QTest::keyClicks(bar_->queryEdit(), query);
  }
  int selected() const { return w().graphView()->selectedNode(); }
  int matchNode(int i) const { return bar_->matches()[static_cast<size_t>(i)].node; }
  QString countOf(int i) const {
    return QStringLiteral("%1 of %2").arg(i + 1).arg(bar_->matches().size());
  }

  MainWindow& w() const { return *window_; }

  std::unique_ptr<MainWindow> window_;  // made once the QApplication is
  FindBar* bar_ = nullptr;
};

TEST_F(FindBarWindow, TypingSearchesAndF3StepsAndWraps) {
  type(QStringLiteral("conv"));
  const int n = static_cast<int>(bar_->matches().size());
  // Every node the graph's own search finds (name or op) is among the bar's matches.
  const QList<int> by_view = w().graphView()->findNodes(QStringLiteral("conv"));
  ASSERT_FALSE(by_view.isEmpty());
  ASSERT_GE(n, 3);
  const std::vector<int> found = nodes_of(bar_->matches());
  for (int id : by_view) EXPECT_NE(std::find(found.begin(), found.end(), id), found.end()) << id;
  EXPECT_EQ(bar_->countText(), countOf(0));
  EXPECT_EQ(selected(), matchNode(0));
  EXPECT_TRUE(bar_->resultsList()->isVisible());
  EXPECT_EQ(bar_->resultsList()->count(), n);

  for (int i = 1; i <= 3; ++i) {
    QTest::keyClick(bar_->queryEdit(), Qt::Key_F3);
    EXPECT_EQ(bar_->currentMatch(), i % n);
    EXPECT_EQ(selected(), matchNode(i % n));
    EXPECT_EQ(bar_->countText(), countOf(i % n));
  }
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3, Qt::ShiftModifier);
  EXPECT_EQ(selected(), matchNode(2));
  EXPECT_EQ(bar_->countText(), countOf(2));
  QTest::keyClick(bar_->queryEdit(), Qt::Key_Return, Qt::ShiftModifier);
  EXPECT_EQ(selected(), matchNode(1));
  QTest::keyClick(bar_->queryEdit(), Qt::Key_Return);
  EXPECT_EQ(selected(), matchNode(2));

  // Back past the first wraps to the last, forward past the last to the first.
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3, Qt::ShiftModifier);
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3, Qt::ShiftModifier);
  EXPECT_EQ(bar_->currentMatch(), 0);
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3, Qt::ShiftModifier);
  EXPECT_EQ(bar_->currentMatch(), n - 1);
  EXPECT_EQ(selected(), matchNode(n - 1));
  EXPECT_EQ(bar_->countText(), countOf(n - 1));
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3);
  EXPECT_EQ(bar_->currentMatch(), 0);
  EXPECT_EQ(selected(), matchNode(0));

  // With the keyboard in the graph, View > Find next / previous (F3, Shift+F3) step the same.
  QAction* next = menu_action(w(), QStringLiteral("Find &next"));
  QAction* previous = menu_action(w(), QStringLiteral("Find pre&vious"));
  ASSERT_TRUE(next && previous);
  EXPECT_EQ(next->shortcut(), QKeySequence(Qt::Key_F3));
  EXPECT_EQ(previous->shortcut(), QKeySequence(Qt::SHIFT | Qt::Key_F3));
  next->trigger();
  EXPECT_EQ(selected(), matchNode(1));
  previous->trigger();
  previous->trigger();
  EXPECT_EQ(selected(), matchNode(n - 1));
}

TEST_F(FindBarWindow, AShapeExpressionFindsTheNodesProducingIt) {
  const QString shape = QStringLiteral("floordiv(height,4)");
  // The sample's edges do show this dim (from its ranges beside it): the query is a real one.
  bool labelled = false;
  for (const DisplayEdge& e : w().displayGraph()->edges)
    labelled = labelled || QString::fromStdString(e.label).contains(shape);
  ASSERT_TRUE(labelled);
  type(shape);
  ASSERT_FALSE(bar_->matches().empty()) << bar_->countText().toStdString();
  for (const FindMatch& m : bar_->matches()) {
    EXPECT_EQ(m.kind, FindMatchKind::kShape);
    EXPECT_TRUE(m.text.contains(shape, Qt::CaseInsensitive)) << m.text.toStdString();
  }
  EXPECT_EQ(selected(), matchNode(0));
  EXPECT_EQ(bar_->countText(), countOf(0));
  EXPECT_TRUE(bar_->resultsList()->item(0)->text().startsWith(QStringLiteral("shape")));
  save_shot(&w(), "find_bar_shape");
}

TEST_F(FindBarWindow, ClickingARowSelectsItsNode) {
  type(QStringLiteral("sigmoid"));
  ASSERT_GE(bar_->matches().size(), 2u);
  QListWidget* list = bar_->resultsList();
  QTest::mouseClick(list->viewport(), Qt::LeftButton, {},
                    list->visualItemRect(list->item(1)).center());
  EXPECT_EQ(bar_->currentMatch(), 1);
  EXPECT_EQ(selected(), matchNode(1));
  EXPECT_EQ(bar_->countText(), countOf(1));
}

TEST_F(FindBarWindow, NoMatchSaysSoAndEscapeHidesTheBar) {
  // Typing selects as it goes ("n", "no" ... match); the last match found stays selected.
  type(QStringLiteral("no node is called this"));
  const int before = selected();
  EXPECT_GE(before, 0);
  EXPECT_EQ(bar_->countText(), QStringLiteral("no match"));
  EXPECT_TRUE(bar_->matches().empty());
  EXPECT_FALSE(bar_->resultsList()->isVisible());
  EXPECT_EQ(QApplication::activeModalWidget(), nullptr);  // no dialog
  QTest::keyClick(bar_->queryEdit(), Qt::Key_F3);         // nothing to step to
  EXPECT_EQ(selected(), before);
  QTest::keyClick(bar_->queryEdit(), Qt::Key_Escape);
  EXPECT_FALSE(bar_->isVisible());
  // Ctrl+F again brings the query back, selected so that typing replaces it.
  bar_->activate();
  EXPECT_TRUE(bar_->isVisible());
  EXPECT_EQ(bar_->queryEdit()->selectedText(), QStringLiteral("no node is called this"));
}

}  // namespace
}  // namespace sod2::studio
