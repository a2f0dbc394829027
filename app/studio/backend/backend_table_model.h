// A backend placement as the Backend dock's table: one row per main-graph node of the session in
// execution order (a generated elementwise group is one row), where it runs and, on the CPU, why.
// Also the dock's header line and its summary of the CPU's reasons, in the words of `sod2 plan
// --backend vulkan`.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>

#include "app/backend/backend_placement.h"

namespace sod2::studio {

class BackendTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kStep, kNode, kOps, kBackend, kWhy, kColumns };
  static constexpr int kSortRole = Qt::UserRole;
  // The graph nodes a row stands for (a group's or fused kernel's members, else the node).
  static constexpr int kNodesRole = Qt::UserRole + 1;
  static constexpr int kOnDeviceRole = Qt::UserRole + 2;
  using QAbstractTableModel::QAbstractTableModel;

  void setPlacement(backend::BackendPlacement placement);
  const backend::BackendPlacement& placement() const { return placement_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  backend::BackendPlacement placement_;
};

// "Mul+Sub+Add+Mul" for a generated group; "FusedConv (Conv+Relu)" for a CPU fused kernel.
QString placement_ops_text(const backend::PlacementRow& row);
// "vulkan (llvmpipe ...): 5 groups (21 nodes) and 12 nodes on the device, 9 nodes on the CPU".
QString placement_header(const backend::BackendPlacement& p);
// Per reason, most nodes first: its count, the reason and up to two example nodes.
QString placement_reasons(const backend::BackendPlacement& p);

}  // namespace sod2::studio
