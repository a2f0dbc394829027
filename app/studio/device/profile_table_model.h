// A profile's fused groups as a table (the studio's profile view): one row per group in
// execution order with its time, share, achieved GOP/s and output, and a colour for its operator
// class so the bars read like the graph. An If/Loop/Scan group's body nodes follow it as rows of
// their own, indented by depth like `sod2 profile`'s table: ms per run, % of the node holding
// them (not of the run), and calls per run in the nodes column ("x0.5": a branch taken half the
// time).
#pragma once

#include <QAbstractTableModel>
#include <QColor>
#include <QSortFilterProxyModel>
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
  // The row of the group whose nodes include `node_name`; -1 when none (body nodes are not
  // main-graph nodes, so never their rows).
  int rowOfNode(const std::string& node_name) const;
  // Which group a row shows or lies under (its position in result()->groups); -1 off the rows.
  int groupOfRow(int row) const;
  // The row of result()->groups[group] itself; -1 when none.
  int rowOfGroup(int group) const;
  // A row of a body node inside its group (not the group's own row).
  bool isBodyRow(int row) const;
  // The body node a row shows; null for a group's own row.
  const profiling::BodyNodeProfile* bodyAt(int row) const;
  // What picking a row selects in the graph: the group's anchor node, for a body row its
  // group's (the graph shows main-graph nodes; a body node is found through its If/Loop/Scan).
  QString activationName(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Row {
    int group = 0;
    int body = -1;  // into the group's body; -1: the group's own row
  };
  QVariant bodyData(const Row& row, int column, int role) const;

  std::shared_ptr<const profiling::ProfileResult> result_;
  std::vector<Row> rows_;
  std::vector<QColor> colors_;  // per group
  double max_ms_ = 0;
};

// Sorts the profile table by a column while body rows stay under their group: groups are ordered
// by their own values, each followed by its body rows in depth-first order whichever way the
// column sorts (a body node's time ranked among groups would say nothing: it is part of its
// group's). Equal groups keep execution order.
class ProfileSortProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

}  // namespace sod2::studio
