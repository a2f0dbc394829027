// A person's first minutes with the studio, on a real X server (ctest runs it under xvfb-run):
// open a scoped transformer through the asynchronous File > Open path, find a node with Ctrl+F
// and step through the matches with F3 / Shift+F3, double-click a closed layer to open it, undo
// that with Ctrl+Z, drag an input-size slider, and export the drawing as SVG; then profile a
// model with integer inputs typed into the Devices dock (Ctrl+P). Input goes through
// Qt's event delivery to the widgets (QTest key and mouse events), not through the methods those
// events call.
#include <gtest/gtest.h>

#include <QApplication>
#include <QFile>
#include <QLineEdit>
#include <QSignalSpy>
#include <QSlider>
#include <QTest>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "../test_home.h"
#include "app/studio/device/device_panel.h"
#include "app/studio/device/profile_table_model.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/bindings_bar.h"
#include "app/studio/widgets/find_bar.h"
#include "app/studio/widgets/main_window.h"
#include "tests/bench/synthetic_models.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_walkthrough_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

// The point inside display node `id` (a few pixels in from its top-left corner), in the graph
// view's viewport.
QPoint inside(const MainWindow& w, NodeId core_node) {
  const auto at = w.graphView()->viewPositionOf(core_node);
  return at ? (*at + QPointF(12, 12)).toPoint() : QPoint(-1, -1);
}

TEST(StudioWalkthrough, OpenFindOpenALayerUndoDragASliderExport) {
  app();
  ASSERT_NE(QApplication::platformName(), QStringLiteral("offscreen"))
      << "run under a display (ctest uses xvfb-run)";
  const auto dir = std::filesystem::temp_directory_path() / "sod2_studio_walkthrough";
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "scoped_transformer.onnx").string();
  std::ofstream(model, std::ios::binary) << bench::transformer_like(1500).SerializeAsString();

  MainWindow w;
  w.resize(1400, 900);
  w.show();
  w.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));

  // Open: the worker path, with its progress dialog, then the layout on another worker.
  QSignalSpy opened(&w, &MainWindow::openFinished);
  w.openModel(QString::fromStdString(model));
  ASSERT_TRUE(opened.wait(60000));
  ASSERT_TRUE(opened.front().front().toBool()) << opened.front().back().toString().toStdString();
  QTRY_VERIFY_WITH_TIMEOUT(w.displayGraph() != nullptr, 30000);
  GraphView* view = w.graphView();
  view->finishPopulating();
  const size_t closed = w.displayGraph()->nodes.size();
  EXPECT_LE(closed, GraphHierarchy::kDefaultItems + 2);

  // Find: Ctrl+F, type, F3 twice, Shift+F3 once.
  QTest::keyClick(&w, Qt::Key_F, Qt::ControlModifier);
  QTRY_VERIFY(w.findBar()->isVisible());
  QTest::keyClicks(w.findBar()->queryEdit(), QStringLiteral("layers.1"));
  QTRY_VERIFY(!w.findBar()->matches().empty());
  QTest::keyClick(w.findBar()->queryEdit(), Qt::Key_F3);
  const int first = w.findBar()->currentMatch();
  QTest::keyClick(w.findBar()->queryEdit(), Qt::Key_F3);
  EXPECT_EQ(w.findBar()->currentMatch(), first + 1);
  QTest::keyClick(w.findBar()->queryEdit(), Qt::Key_F3, Qt::ShiftModifier);
  EXPECT_EQ(w.findBar()->currentMatch(), first);
  QTest::keyClick(w.findBar()->queryEdit(), Qt::Key_Escape);
  QTRY_VERIFY(!w.findBar()->isVisible());

  // Open layer 0 by double-clicking its box; it opens downwards from where its box was.
  ASSERT_EQ(w.displayGraph()->nodes[static_cast<size_t>(w.displayGraph()->display_node_of(0))].kind,
            DisplayNodeKind::kScope);
  view->selectNode(w.displayGraph()->display_node_of(0), true);
  const auto before = view->viewPositionOf(0);
  ASSERT_TRUE(before);
  QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, inside(w, 0));
  QTRY_VERIFY_WITH_TIMEOUT(w.displayGraph()->nodes.size() > closed, 30000);
  view->finishPopulating();
  const auto after = view->viewPositionOf(0);
  ASSERT_TRUE(after);
  EXPECT_GE(after->y(), before->y() - 1.0);  // below its frame's title
  EXPECT_LE(after->y(), before->y() + 60.0);
  EXPECT_TRUE(w.drawingIsIncremental());

  // Ctrl+Z closes it again.
  const size_t open = w.displayGraph()->nodes.size();
  view->setFocus();
  QTest::keyClick(view, Qt::Key_Z, Qt::ControlModifier);
  QTRY_VERIFY_WITH_TIMEOUT(w.displayGraph()->nodes.size() < open, 30000);
  EXPECT_EQ(w.displayGraph()->nodes.size(), closed);

  // Drag the first input symbol's slider to the right: the binding follows.
  QList<QSlider*> sliders = w.findChildren<QSlider*>();
  QSlider* slider = nullptr;
  for (QSlider* s : sliders)
    if (s->isVisible() && s->window() == &w && s->maximum() > s->minimum()) slider = s;
  ASSERT_NE(slider, nullptr);
  const int start = slider->value();
  const QPoint handle(slider->width() * (start - slider->minimum()) /
                          std::max(1, slider->maximum() - slider->minimum()),
                      slider->height() / 2);
  const auto binding_before = w.currentBinding();
  QTest::mousePress(slider, Qt::LeftButton, {}, QPoint(std::max(2, handle.x()), handle.y()));
  QTest::mouseMove(slider, QPoint(slider->width() / 2, handle.y()));
  QTest::mouseRelease(slider, Qt::LeftButton, {}, QPoint(slider->width() / 2, handle.y()));
  QTRY_VERIFY(slider->value() != start);
  QTRY_VERIFY(w.currentBinding() != binding_before);

  // Export what is drawn.
  const QString svg = QString::fromStdString((dir / "walkthrough.svg").string());
  ASSERT_FALSE(w.exportGraph(svg, /*whole=*/true));
  QFile f(svg);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  EXPECT_TRUE(f.readAll().contains("layers.0"));
}

// Export & profile with integer inputs typed into the Devices dock: bert_tiny's token ids follow
// the seq slider ("input_ids=0:seq"), Ctrl+P runs it on this machine's agent, and the profile
// view shows the run.
TEST(StudioWalkthrough, ProfileWithIntegerInputRanges) {
  app();
  ASSERT_NE(QApplication::platformName(), QStringLiteral("offscreen"));
  const auto dir = std::filesystem::temp_directory_path() / "sod2_studio_walkthrough_profile";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ::setenv("SOD2_PLUGIN_DIR", SOD2_BINARY_DIR "/lib/sod2/plugins", 1);
  ::setenv("SOD2_AGENT", SOD2_BINARY_DIR "/bin/sod2-agent", 1);
  ::setenv("SOD2_AGENT_DIR", (dir / "agent").c_str(), 1);

  MainWindow w;
  w.setProfileDatabase((dir / "profiles.db").string());
  w.resize(1400, 900);
  w.show();
  w.activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  OpenOptions options;
  options.rdp.ranges["batch"] = {1, 16, 1};
  options.rdp.ranges["seq"] = {1, 512, 1};
  QSignalSpy opened(&w, &MainWindow::openFinished);
  w.openModel(QStringLiteral(SOD2_SHARED_DIR "/models/bert_tiny/model.onnx"), options);
  ASSERT_TRUE(opened.wait(60000));
  ASSERT_TRUE(opened.front().front().toBool());
  ASSERT_TRUE(w.applyBinding({{"batch", 1}, {"seq", 16}}));

  auto* ints = w.devicePanel()->findChild<QLineEdit*>(QStringLiteral("int_inputs"));
  ASSERT_NE(ints, nullptr);
  ints->clear();
  QTest::keyClicks(ints, QStringLiteral("input_ids=0:seq, attention_mask=1"));
  EXPECT_EQ(w.devicePanel()->intInputRanges(), QStringLiteral("input_ids=0:seq, attention_mask=1"));
  QTest::keyClick(&w, Qt::Key_P, Qt::ControlModifier);
  QTRY_VERIFY_WITH_TIMEOUT(w.profileView()->model()->result() != nullptr, 120000);
  EXPECT_EQ(w.profileView()->model()->result()->bindings, "batch=1,seq=16");
}

}  // namespace
}  // namespace sod2::studio
