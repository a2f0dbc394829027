// The Backend dock: the table's texts from a hand-made placement, then the sample model placed
// on the Vulkan backend (llvmpipe will do) — one row per node of the session, some on the device,
// every CPU row with its reason — by the placer and through the window, whose rows select nodes
// in the graph. Without a Vulkan device the placing tests skip.
#include <gtest/gtest.h>

#include <QApplication>
#include <QSignalSpy>
#include <QTableView>

#include "../test_home.h"
#include "app/studio/backend/backend_overlay.h"
#include "app/studio/backend/backend_placer.h"
#include "app/studio/backend/backend_table_model.h"
#include "app/studio/backend/backend_view.h"
#include "app/studio/graph/graph_style.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/widgets/main_window.h"
#include "runtime/exec/session.h"

namespace sod2::studio {
namespace {

const char* const kModel = SOD2_SOURCE_DIR "/resources/models/sample_yolo_tiny.onnx";

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_backend_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

backend::BackendPlacement hand_made() {
  backend::BackendPlacement p;
  p.backend = "vulkan (test device)";
  p.rows = {
      {"conv0", "Conv", {}, {}, true, rt::CpuReason::kNone, ""},
      {"ew0",
       "GpuElementwise",
       {"m", "s", "a", "m2"},
       {"Mul", "Sub", "Add", "Mul"},
       true,
       rt::CpuReason::kNone,
       ""},
      {"g0", "Gather", {}, {}, false, rt::CpuReason::kNoShader, "Gather: no hand-written shader"},
      {"g1", "Gather", {}, {}, false, rt::CpuReason::kNoShader, "Gather: no hand-written shader"},
      {"if0",
       "If",
       {},
       {},
       false,
       rt::CpuReason::kControlFlow,
       "If: control flow runs on the CPU"}};
  p.groups = 1;
  p.grouped_nodes = 4;
  p.device_nodes = 1;
  p.cpu_nodes = 3;
  p.why_counts = {{"Gather: no hand-written shader", 2}, {"If: control flow runs on the CPU", 1}};
  p.reason_counts = {{rt::CpuReason::kNoShader, 2}, {rt::CpuReason::kControlFlow, 1}};
  return p;
}

TEST(BackendTableModel, RowsHeaderAndReasons) {
  BackendTableModel m;
  m.setPlacement(hand_made());
  ASSERT_EQ(m.rowCount(), 5);
  auto cell = [&](int r, int c) { return m.data(m.index(r, c), Qt::DisplayRole).toString(); };
  EXPECT_EQ(cell(1, BackendTableModel::kOps), "Mul+Sub+Add+Mul");
  EXPECT_EQ(cell(1, BackendTableModel::kBackend), "Vulkan");
  EXPECT_EQ(cell(2, BackendTableModel::kBackend), "CPU");
  EXPECT_EQ(cell(2, BackendTableModel::kWhy), "Gather: no hand-written shader");
  EXPECT_EQ(m.data(m.index(1, 0), BackendTableModel::kNodesRole).toStringList(),
            QStringList({"m", "s", "a", "m2"}));
  EXPECT_TRUE(m.data(m.index(2, 0), Qt::BackgroundRole).isValid());
  EXPECT_FALSE(m.data(m.index(0, 0), Qt::BackgroundRole).isValid());
  EXPECT_EQ(placement_header(m.placement()),
            "vulkan (test device): 1 groups (4 nodes) and 1 nodes on the device, 3 nodes on the "
            "CPU");
  EXPECT_EQ(placement_reasons(m.placement()),
            "On the CPU, by reason (3 nodes):\n"
            "   2  no shader for the op\n"
            "       2  Gather: no hand-written shader  (e.g. g0, g1)\n"
            "   1  control flow runs on the CPU\n"
            "       1  If: control flow runs on the CPU  (e.g. if0)\n");
}

// #23 item 2: where nodes run as a categorical overlay: one category for the device, one per
// CPU reason present, a generated group's nodes in its row's category, a box over both mixed.
TEST(BackendOverlay, CategoriesPerDeviceAndReasonWithTheRowsNodes) {
  Graph g("main");
  for (const char* name : {"conv0", "m", "s", "a", "m2", "g0", "g1", "if0", "other"})
    g.add_node(Node{name, "Op"});
  const NodeOverlay o = backend_overlay(hand_made(), g);
  ASSERT_TRUE(o.categorical());
  EXPECT_EQ(o.categories,
            (std::vector<std::string>{"vulkan (test device)", "CPU: no shader for the op",
                                      "CPU: control flow runs on the CPU"}));
  auto shown = [&](std::vector<NodeId> members) {
    DisplayNode n;
    n.members = std::move(members);
    return o.value_of(n);
  };
  EXPECT_EQ(shown({0}), 0.0);     // conv0 on the device
  EXPECT_EQ(shown({2, 3}), 0.0);  // two nodes of the generated group
  EXPECT_EQ(shown({5}), 1.0);     // g0: no shader
  EXPECT_EQ(shown({7}), 2.0);     // if0: control flow
  EXPECT_EQ(shown({0, 5}), NodeOverlay::kMixed);
  EXPECT_FALSE(shown({8}).has_value());  // not in the placement
  DisplayNode g0;
  g0.members = {5};
  EXPECT_EQ(o.describe(g0),
            "backend: CPU: no shader for the op (g0: Gather: no hand-written shader)");
  EXPECT_EQ(overlay_value_text(o, NodeOverlay::kMixed), "mixed");
}

class BackendPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = backend::make_backend(backend::BackendChoice{.vulkan = true});
    if (!made.ok()) GTEST_SKIP() << "no Vulkan device: " << made.status().message();
    device_ = *made;
  }
  // The session's main-graph nodes, counted on a session of our own.
  size_t session_nodes(const PlacementSource& source) {
    auto program = program_for_backend(source);
    EXPECT_TRUE(program.ok()) << program.status().message();
    rt::SessionOptions options;
    options.threads = 1;
    options.backend = device_;
    auto session =
        rt::Session::create(std::move(*program), rt::KernelRegistry::standard(), options);
    EXPECT_TRUE(session.ok()) << session.status().message();
    return (*session)->node_backends().size();
  }
  static void expect_sound(const backend::BackendPlacement& p, size_t nodes) {
    EXPECT_EQ(p.rows.size(), nodes);
    int device = 0;
    for (const backend::PlacementRow& r : p.rows) {
      if (r.device) {
        ++device;
      } else {
        EXPECT_FALSE(r.why_cpu.empty()) << r.node;
        EXPECT_NE(r.reason, rt::CpuReason::kNone) << r.node;
        // Every specific reason names its node's op (the typed reason says the kind).
        EXPECT_EQ(r.why_cpu.rfind(r.op + ":", 0), 0u) << r.why_cpu;
      }
    }
    EXPECT_GE(device, 1);
    EXPECT_EQ(p.groups + p.device_nodes, device);
    EXPECT_EQ(p.cpu_nodes, static_cast<int>(nodes) - device);
  }
  std::shared_ptr<rt::DeviceBackend> device_;
};

TEST_F(BackendPlacementTest, PlacerGivesOneRowPerSessionNode) {
  auto doc = StudioDocument::open(kModel, OpenOptions{});
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  PlacementSource source{std::shared_ptr<StudioDocument>(std::move(*doc)), nullptr, true};
  auto placed = place_on_backend(source, device_);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  expect_sound(placed->placement, session_nodes(source));
  EXPECT_GE(placed->placement.groups, 1) << "the model's elementwise tails run as generated groups";
}

TEST_F(BackendPlacementTest, WindowDockPlacesAndSelectsInTheGraph) {
  app();
  MainWindow w;
  ASSERT_FALSE(w.openModelNow(kModel).has_value());
  BackendView* view = w.backendView();
  EXPECT_EQ(view->model()->rowCount(), 0) << "nothing placed before asked";
  auto err = view->placeNow();
  ASSERT_FALSE(err.has_value()) << err->toStdString();
  const BackendTableModel* m = view->model();
  // The same model opened apart compiles to the same program.
  auto doc = StudioDocument::open(kModel, OpenOptions{});
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const size_t nodes =
      session_nodes({std::shared_ptr<StudioDocument>(std::move(*doc)), nullptr, true});
  expect_sound(m->placement(), nodes);
  EXPECT_EQ(static_cast<size_t>(m->rowCount()), nodes);
  EXPECT_TRUE(view->headerText().contains("on the device")) << view->headerText().toStdString();
  if (m->placement().cpu_nodes > 0) {
    EXPECT_TRUE(view->reasonsText().contains("On the CPU, by reason"));
  }

  // Colouring by backend reads this placement: the device's colour on a device row's node.
  ASSERT_TRUE(w.setNodeColouring(MainWindow::NodeColouring::kBackend));
  EXPECT_TRUE(w.statusText().contains("Nodes coloured by backend")) << w.statusText().toStdString();
  ASSERT_TRUE(w.setNodeColouring(MainWindow::NodeColouring::kClass));

  // "CPU only" leaves the CPU rows.
  auto* table = view->findChild<QTableView*>();
  ASSERT_NE(table, nullptr);
  view->setCpuOnly(true);
  EXPECT_EQ(table->model()->rowCount(), m->placement().cpu_nodes);
  view->setCpuOnly(false);
  EXPECT_EQ(table->model()->rowCount(), m->rowCount());

  // Picking a row selects its node in the graph.
  QSignalSpy picked(w.graphView(), &GraphView::nodeSelected);
  table->selectRow(0);
  EXPECT_GE(picked.count(), 1);

  // Selecting a node in the graph selects its row: the first one the CPU runs.
  int cpu_row = -1;
  for (int r = 0; r < m->rowCount() && cpu_row < 0; ++r)
    if (!m->placement().rows[static_cast<size_t>(r)].device) cpu_row = r;
  ASSERT_GE(cpu_row, 0);
  const std::string cpu_node = m->placement().rows[static_cast<size_t>(cpu_row)].node;
  const Graph& g = w.document()->graph();
  for (size_t i = 0; i < g.num_nodes(); ++i)
    if (g.node(static_cast<NodeId>(i)).name == cpu_node) w.selectCoreNode(static_cast<NodeId>(i));
  ASSERT_TRUE(table->currentIndex().isValid());
  EXPECT_EQ(table->currentIndex().siblingAtColumn(BackendTableModel::kNode).data().toString(),
            QString::fromStdString(cpu_node));
}

// Asked before the Backend dock placed anything, colouring by backend places in the background
// and colours when the placement lands, as a person picking the menu item sees it.
TEST_F(BackendPlacementTest, ColouringByBackendPlacesFirstAndColoursWhenPlaced) {
  app();
  MainWindow w;
  ASSERT_FALSE(w.openModelNow(kModel).has_value());
  QSignalSpy placed(w.backendView(), &BackendView::placementChanged);
  ASSERT_TRUE(w.setNodeColouring(MainWindow::NodeColouring::kBackend));
  EXPECT_TRUE(w.statusText().contains("Placing the model on Vulkan"))
      << w.statusText().toStdString();
  ASSERT_TRUE(placed.wait(120000));
  EXPECT_EQ(w.nodeColouring(), MainWindow::NodeColouring::kBackend);
  EXPECT_TRUE(w.statusText().contains("Nodes coloured by backend")) << w.statusText().toStdString();
  // A drawn node whose group runs on the device wears the device's colour.
  const backend::BackendPlacement& p = w.backendView()->model()->placement();
  const NodeOverlay o = backend_overlay(p, w.document()->graph());
  bool checked = false;
  const DisplayGraph& shown = *w.displayGraph();
  for (size_t id = 0; id < shown.nodes.size() && !checked; ++id) {
    const std::optional<double> v = o.value_of(shown.nodes[id]);
    if (!v || *v != 0.0) continue;
    EXPECT_EQ(w.graphView()->nodeFill(static_cast<int>(id)), overlay_category_fill(0.0));
    checked = true;
  }
  EXPECT_TRUE(checked) << "no drawn node runs on the device";
}

}  // namespace
}  // namespace sod2::studio
