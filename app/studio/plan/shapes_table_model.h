// The shapes table (DESIGN §8): every value of the main graph with its rank, symbolic dims, dims
// and bytes at the current binding, producer and producer class. Qt item model without widgets;
// a new binding re-evaluates numbers only (the symbolic columns never change).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <QAbstractTableModel>
#include <QModelIndexList>
#include <QSortFilterProxyModel>
#include <QString>

#include "core/ir/model.h"
#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"

namespace sod2::studio {

class ShapesTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column : int {
    kName,
    kDtype,
    kRank,
    kDims,
    kDimsAt,
    kBytes,
    kProducer,
    kClass,
    kColumnCount,
  };
  // Qt::UserRole: a number for numeric columns (rank, bytes; -1 when unknown) and the text for
  // the others, so a proxy sorting by it orders 1000 after 999.
  static constexpr int kSortRole = Qt::UserRole;
  // Qt::UserRole + 1: the row's ValueId (for selection in other views).
  static constexpr int kValueIdRole = Qt::UserRole + 1;
  // Qt::UserRole + 2: the producer's NodeId, -1 for graph inputs and initializers.
  static constexpr int kProducerRole = Qt::UserRole + 2;

  // Copies what it shows: the model and RDP result may go away afterwards.
  ShapesTableModel(const Model& model, const RdpResult& rdp, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

  // Evaluates dims and bytes at `binding` (an empty binding clears them) and emits dataChanged
  // for those two columns only.
  void set_binding(const sym::Binding& binding);
  const sym::Binding& binding() const { return binding_; }

  // The row of a value, -1 if the graph has no such value.
  int row_of_value(ValueId value) const;
  // bytes at the binding; nullopt when unknown (a dim unknown or unbound, a string tensor).
  std::optional<int64_t> bytes_at(int row) const;

  // A header line, then one line per row (all rows, or the rows of `rows` — indexes of this
  // model, any column — in ascending order, each once). Fields are quoted as RFC 4180 asks.
  QString to_csv(const QModelIndexList* rows = nullptr) const;

 private:
  struct Row {
    ValueId value = kNoValue;
    QString name;
    QString dtype;
    int64_t rank = -1;  // -1: unknown
    QString dims;       // "[batch, seq+1, 128]"
    std::optional<DimList> dim_exprs;
    size_t element_bytes = 0;  // 0: no fixed size (string, undefined)
    NodeId producer = kNoNode;
    QString producer_name;
    QString producer_class;
    // Numbers at the binding, evaluated when first read at it (`evaluated` == generation_): a
    // new binding of a 50,000-value model costs nothing until rows are drawn, sorted or copied.
    mutable QString dims_at;
    mutable std::optional<int64_t> bytes;
    mutable uint32_t evaluated = 0;
  };
  void evaluate_row(const Row& row) const;
  // The row with its numbers at the current binding.
  const Row& row_at(size_t r) const;
  QString cell_text(const Row& row, int column) const;

  std::vector<Row> rows_;
  sym::Binding binding_;
  uint32_t generation_ = 1;  // of binding_: rows evaluated at an older one are stale
};

// A proxy that sorts numerically (kSortRole) and filters case-insensitively on every column:
// what a table view of the shapes wants. Owned by `parent`.
QSortFilterProxyModel* make_shapes_proxy(ShapesTableModel* source, QObject* parent);

}  // namespace sod2::studio
