// A profile's fused groups as a table (the studio's profile view): one row per group in
// execution order with its time, share, achieved GOP/s and output, and a colour for its operator
// class so the bars read like the graph.
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <functional>
#include <memory>

#include "app/profiling/profile_job.h"

namespace sod2::studio {

class ProfileTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kIndex, kOps, kNodes, kMs, kPercent, kGops, kOutput, kShape, kName, kColumns };
  // The role of kMs cells holding the share of the run (0..1) that the bar delegate draws.
  static constexpr int kShareRole = Qt::UserRole + 1;
  static constexpr int kColorRole = Qt::UserRole + 2;
  using QAbstractTableModel::QAbstractTableModel;

  // `color_of` gives a group's colour (its operator class); null: one neutral colour.
  void setResult(std::shared_ptr<const profiling::ProfileResult> result,
                 std::function<QColor(const profiling::GroupProfile&)> color_of = {});
  const profiling::ProfileResult* result() const { return result_.get(); }
  // The row of the group whose nodes include `node_name`; -1 when none.
  int rowOfNode(const std::string& node_name) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::shared_ptr<const profiling::ProfileResult> result_;
  std::vector<QColor> colors_;
  double max_ms_ = 0;
};

}  // namespace sod2::studio
