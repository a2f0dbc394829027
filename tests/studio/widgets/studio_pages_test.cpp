// The Inspector and Shapes docks as pages (issue #23 item 7), driven only through StudioPage on
// an exporter-style scoped transformer, offscreen, with no window: the inspector shows the
// selected drawn node's report, follows a new binding by itself and forgets a new document's
// predecessor; a name scope's and a shape computation's boxes show what they hold; the shapes
// table is made by prepare() on another thread, belongs to the page's thread once adopted, and
// a cancelled open prepares nothing.
#include <gtest/gtest.h>

#include <QApplication>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "../test_home.h"
#include "app/studio/plan/shapes_table_model.h"
#include "app/studio/widgets/inspector_page.h"
#include "app/studio/widgets/shapes_page.h"
#include "tests/bench/synthetic_models.h"

namespace sod2::studio {
namespace {

QApplication& app() {
  static int argc = 1;
  static char name[] = "studio_pages_test";
  static char* argv[] = {name, nullptr};
  static QApplication* a = (sod2::testing::use_test_home(), new QApplication(argc, argv));
  return *a;
}

class StudioPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app();
    const auto path = std::filesystem::temp_directory_path() / "sod2_studio_pages_test.onnx";
    std::ofstream(path, std::ios::binary) << bench::transformer_like(300).SerializeAsString();
    auto doc = OpenDocument::open(path.string(), {});
    ASSERT_TRUE(doc.ok()) << doc.status().to_string();
    doc_ = *doc;
    hierarchy_ = doc_->build_hierarchy();
    ASSERT_NE(hierarchy_, nullptr);
    values_ = doc_->initial_values();
    bound_ = bind(values_);
    ASSERT_NE(bound_, nullptr);
  }

  std::shared_ptr<const BoundDocument> bind(const std::map<std::string, int64_t>& values) {
    auto b = doc_->bind(values, nullptr);
    EXPECT_TRUE(b.ok()) << b.status().to_string();
    return b.ok() ? std::shared_ptr<const BoundDocument>(std::move(b->document)) : nullptr;
  }
  // The values at another sequence length.
  std::map<std::string, int64_t> other_values() const {
    std::map<std::string, int64_t> values = values_;
    for (const SymbolControl& s : doc_->symbols())
      if (s.name == "seq")
        values["seq"] = values["seq"] + s.multiple <= s.hi ? values["seq"] + s.multiple : s.lo;
    EXPECT_NE(values.at("seq"), values_.at("seq"));
    return values;
  }
  // Drawn with every name scope open, and the shape computations too when `shapes_open`.
  DisplayGraph drawn(bool scopes_open, bool shapes_open) const {
    DisplayState state;
    state.expanded_scopes = hierarchy_->default_expanded;
    if (scopes_open)
      for (size_t s = 1; s < hierarchy_->scopes.size(); ++s)
        state.expanded_scopes.insert(static_cast<int>(s));
    if (shapes_open)
      for (size_t c = 0; c < hierarchy_->shape_clusters.size(); ++c)
        state.expanded_shapes.insert(static_cast<int>(c));
    return doc_->display_graph(hierarchy_.get(), state);
  }
  static const DisplayNode* first(const DisplayGraph& d, DisplayNodeKind kind,
                                  const std::string& op = {}) {
    for (const DisplayNode& n : d.nodes)
      if (n.kind == kind && (op.empty() || n.op == op)) return &n;
    return nullptr;
  }
  // What the window tells the pages when drawn node `n` is selected.
  PageSelection selection_of(const DisplayNode& n) const {
    PageSelection s;
    s.display = &n;
    s.hierarchy = hierarchy_;
    s.nodes = n.members;
    for (NodeId m : n.members) s.names.push_back(doc_->model()->graph().node(m).name);
    return s;
  }

  std::shared_ptr<const OpenDocument> doc_;
  std::shared_ptr<const GraphHierarchy> hierarchy_;
  std::map<std::string, int64_t> values_;
  std::shared_ptr<const BoundDocument> bound_;
};

TEST_F(StudioPagesTest, TheInspectorFollowsTheSelectionAndTheBinding) {
  InspectorPage page;
  page.documentChanged(doc_, bound_, nullptr);
  EXPECT_TRUE(page.toPlainText().isEmpty());
  const DisplayGraph d = drawn(/*scopes_open=*/true, /*shapes_open=*/true);
  const DisplayNode* matmul = first(d, DisplayNodeKind::kOp, "MatMul");
  ASSERT_NE(matmul, nullptr);
  page.selectionChanged(selection_of(*matmul));
  const QString at_first = page.toPlainText();
  EXPECT_EQ(at_first.trimmed(), QString::fromStdString(bound_->node_report(*matmul)).trimmed());
  EXPECT_TRUE(at_first.contains("op       MatMul")) << at_first.toStdString();

  // A new binding alone rewrites the text: the dims at the new sequence length. The page kept
  // its own copy of the drawn node (this drawing may be gone by then).
  const auto other = bind(other_values());
  const std::string expected = other->node_report(*matmul);
  page.bindingChanged(other, nullptr);
  EXPECT_NE(page.toPlainText(), at_first);
  EXPECT_EQ(page.toPlainText().trimmed(), QString::fromStdString(expected).trimmed());

  // A selection the page cannot show (no drawn node) keeps the text; a new document clears it.
  page.selectionChanged(PageSelection{});
  EXPECT_EQ(page.toPlainText().trimmed(), QString::fromStdString(expected).trimmed());
  page.documentChanged(doc_, bound_, nullptr);
  EXPECT_TRUE(page.toPlainText().isEmpty());
  page.bindingChanged(other, nullptr);
  EXPECT_TRUE(page.toPlainText().isEmpty()) << "nothing selected in the new document";
}

TEST_F(StudioPagesTest, TheInspectorSummarisesANameScopeAndAShapeComputation) {
  InspectorPage page;
  page.documentChanged(doc_, bound_, nullptr);
  const DisplayGraph closed = drawn(/*scopes_open=*/false, /*shapes_open=*/false);
  const DisplayNode* scope = first(closed, DisplayNodeKind::kScope);
  ASSERT_NE(scope, nullptr);
  page.selectionChanged(selection_of(*scope));
  const QString text = page.toPlainText();
  const NameScope& s = hierarchy_->scopes[static_cast<size_t>(scope->scope)];
  EXPECT_TRUE(text.startsWith(QStringLiteral("name scope %1\n%2 nodes, %3 inner scopes")
                                  .arg(QString::fromStdString(s.path))
                                  .arg(scope->members.size())
                                  .arg(s.children.size())))
      << text.toStdString();
  EXPECT_TRUE(text.contains("ops      MatMul x")) << text.toStdString();
  EXPECT_TRUE(text.contains("\nclasses ")) << text.toStdString();
  const Node& member = doc_->model()->graph().node(scope->members.front());
  EXPECT_TRUE(text.contains(QString::fromStdString("  " + member.name + "  (" + member.op_type)))
      << text.toStdString();

  const DisplayGraph open = drawn(/*scopes_open=*/true, /*shapes_open=*/false);
  const DisplayNode* shapes = first(open, DisplayNodeKind::kShapes);
  ASSERT_NE(shapes, nullptr);
  page.selectionChanged(selection_of(*shapes));
  EXPECT_TRUE(page.toPlainText().startsWith(
      QStringLiteral("shape computation\n%1 nodes computing small integer tensors")
          .arg(shapes->members.size())))
      << page.toPlainText().toStdString();
  EXPECT_TRUE(page.toPlainText().contains("Shape x")) << page.toPlainText().toStdString();
}

TEST_F(StudioPagesTest, TheShapesTableIsPreparedOnAnotherThreadAndAdoptedByThePage) {
  ShapesPage page;
  EXPECT_EQ(page.model(), nullptr);
  std::unique_ptr<PreparedPageData> prepared;
  const StudioPage& as_page = page;
  std::thread worker([&] { prepared = as_page.prepare(*doc_, bound_.get(), nullptr); });
  worker.join();
  ASSERT_NE(prepared, nullptr);
  page.adoptPrepared(std::move(prepared));
  page.documentChanged(doc_, bound_, nullptr);
  ASSERT_NE(page.model(), nullptr);
  EXPECT_EQ(page.model()->thread(), page.thread()) << "moved to the page's thread";
  EXPECT_GT(page.model()->rowCount(), 0);
  const Graph& g = doc_->model()->graph();
  EXPECT_GE(page.model()->row_of_value(g.node(0).outputs.front()), 0);

  // Cancelled: nothing is made; adopting nothing empties the table.
  std::atomic<bool> cancel{true};
  EXPECT_EQ(as_page.prepare(*doc_, bound_.get(), &cancel), nullptr);
  page.adoptPrepared(nullptr);
  EXPECT_EQ(page.model(), nullptr);
}

}  // namespace
}  // namespace sod2::studio
