// The shapes table on a corpus model: one row per main-graph value, numbers that follow the
// binding, numeric sorting and CSV.
#include <gtest/gtest.h>

#include <QSignalSpy>

#include "app/studio/plan/shapes_table_model.h"
#include "core/onnx/onnx_import.h"
#include "core/rdp/binding.h"
#include "plan_test_support.h"

namespace sod2::studio {
namespace {

struct Loaded {
  Model model;
  RdpResult rdp;
  sod2::testing::CorpusModel corpus;
};

std::unique_ptr<Loaded> load(const std::string& name) {
  auto found = sod2::testing::find_corpus_model(SOD2_SHARED_DIR "/models", name);
  EXPECT_TRUE(found.ok()) << found.status().to_string();
  if (!found.ok()) return nullptr;
  auto l = std::make_unique<Loaded>();
  l->corpus = *found;
  auto model = import_onnx_file(found->file.string());
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok()) return nullptr;
  l->model = std::move(*model);
  auto rdp = run_rdp(l->model, found->options);
  EXPECT_TRUE(rdp.ok()) << rdp.status().to_string();
  if (!rdp.ok()) return nullptr;
  l->rdp = std::move(*rdp);
  return l;
}

TEST(ShapesTableModel, RowsNumbersSortingAndCsv) {
  auto l = load("bert_tiny");
  ASSERT_TRUE(l);
  ShapesTableModel table(l->model, l->rdp);
  const int rows = static_cast<int>(l->model.graph->num_values());
  ASSERT_EQ(table.rowCount(), rows);
  ASSERT_EQ(table.columnCount(), ShapesTableModel::kColumnCount);

  // Symbolic dims mention the input symbols; without a binding their bytes are unknown.
  const ValueId input = l->model.graph->inputs().front();
  const int in_row = table.row_of_value(input);
  EXPECT_EQ(table.index(in_row, ShapesTableModel::kDims).data().toString(), "[batch, seq]");
  EXPECT_EQ(table.index(in_row, ShapesTableModel::kClass).data().toString(), "input");
  EXPECT_FALSE(table.bytes_at(in_row).has_value());

  QSignalSpy changed(&table, &QAbstractItemModel::dataChanged);
  auto small = make_binding(l->rdp, l->corpus.bindings[0]);
  auto large = make_binding(l->rdp, l->corpus.bindings[2]);
  ASSERT_TRUE(small.ok() && large.ok());
  table.set_binding(*small);
  EXPECT_EQ(changed.count(), 1);
  std::vector<std::optional<int64_t>> at_small(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) at_small[static_cast<size_t>(r)] = table.bytes_at(r);
  // input_ids is int64 [batch, seq].
  const auto& b0 = l->corpus.bindings[0];
  EXPECT_EQ(table.bytes_at(in_row), b0.at("batch") * b0.at("seq") * 8);
  EXPECT_EQ(table.index(in_row, ShapesTableModel::kDimsAt).data().toString(),
            QString("[%1, %2]").arg(b0.at("batch")).arg(b0.at("seq")));
  table.set_binding(*large);
  EXPECT_EQ(changed.count(), 2);
  int grew = 0;
  for (int r = 0; r < rows; ++r) {
    const auto now = table.bytes_at(r);
    if (now && at_small[static_cast<size_t>(r)] && *now > *at_small[static_cast<size_t>(r)]) ++grew;
  }
  EXPECT_GT(grew, 10);
  // Node outputs name their producer and its class.
  int produced = 0;
  for (int r = 0; r < rows; ++r) {
    if (table.index(r, ShapesTableModel::kProducer).data().toString().isEmpty()) continue;
    ++produced;
    EXPECT_FALSE(table.index(r, ShapesTableModel::kClass).data().toString().isEmpty());
  }
  EXPECT_GT(produced, 100);

  // Sorting by bytes is numeric through the proxy.
  QSortFilterProxyModel* proxy = make_shapes_proxy(&table, &table);
  proxy->sort(ShapesTableModel::kBytes, Qt::DescendingOrder);
  int64_t previous = INT64_MAX;
  for (int r = 0; r < proxy->rowCount(); ++r) {
    const int64_t v =
        proxy->index(r, ShapesTableModel::kBytes).data(ShapesTableModel::kSortRole).toLongLong();
    ASSERT_LE(v, previous) << r;
    previous = v;
  }
  proxy->setFilterFixedString("LAYERNORM");
  EXPECT_GT(proxy->rowCount(), 0);
  EXPECT_LT(proxy->rowCount(), rows);

  // CSV: a header and one line per row; a selection gives its rows once each.
  const QString csv = table.to_csv();
  QStringList lines = csv.split('\n', Qt::SkipEmptyParts);
  ASSERT_EQ(lines.size(), rows + 1);
  EXPECT_EQ(lines[0], "name,dtype,rank,dims,dims at binding,bytes,producer,class");
  EXPECT_TRUE(
      lines[in_row + 1].startsWith(QString::fromStdString(l->model.graph->value(input).name)))
      << lines[in_row + 1].toStdString();
  EXPECT_TRUE(lines[in_row + 1].contains("\"[batch, seq]\"")) << lines[in_row + 1].toStdString();
  const QModelIndexList picked = {table.index(5, 0), table.index(2, 3), table.index(5, 1)};
  const QStringList sel = table.to_csv(&picked).split('\n', Qt::SkipEmptyParts);
  ASSERT_EQ(sel.size(), 3);
  EXPECT_EQ(sel[1], lines[3]);
  EXPECT_EQ(sel[2], lines[6]);
}

}  // namespace
}  // namespace sod2::studio
