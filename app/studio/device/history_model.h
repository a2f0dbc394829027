// The profile store's runs as a table, and two runs compared group by group (the studio's
// history view). Reading the store is quick (indexed, newest first), so it happens on the GUI
// thread when the view is refreshed.
#pragma once

#include <QAbstractTableModel>
#include <vector>

#include "app/profiling/run_compare.h"
#include "core/store/profile_store.h"

namespace sod2::studio {

class HistoryModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kRun,
    kWhen,
    kDevice,
    kModel,
    kBinding,
    kThreads,
    kAvg,
    kStd,
    kArena,
    kRss,
    kStatus,
    kColumns
  };
  using QAbstractTableModel::QAbstractTableModel;

  void setRuns(std::vector<store::RunRecord> runs);
  const std::vector<store::RunRecord>& runs() const { return runs_; }
  int64_t runIdAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<store::RunRecord> runs_;
};

// Two runs group by group, largest change first; a control-flow group both runs broke down is
// followed by its body nodes (GroupDelta::body), indented by depth and drawn lighter as in the
// profile view, their calls per run in the tooltip.
class RunCompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kOps, kA, kB, kDelta, kPercent, kGroup, kColumns };
  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::vector<profiling::GroupDelta> rows);
  const std::vector<profiling::GroupDelta>& rows() const { return rows_; }
  // Which group a table row shows or lies under (its position in rows()); -1 off the rows.
  int groupOfRow(int row) const;
  // The body node a table row shows; null for a group's own row.
  const profiling::BodyDelta* bodyAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Row {
    int group = 0;
    int body = -1;  // into the group's body; -1: the group's own row
  };
  QVariant bodyData(const profiling::BodyDelta& b, int column, int role) const;

  std::vector<profiling::GroupDelta> rows_;
  std::vector<Row> table_;  // the rows shown: each group, then its body nodes
};

// The store's measured sweeps (`sod2 history --sweeps`), newest first.
class SweepListModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kSweep,
    kWhen,
    kDevice,
    kModel,
    kSymbol,
    kValues,
    kHeld,
    kPoints,
    kFailed,
    kColumns
  };
  using QAbstractTableModel::QAbstractTableModel;

  void setSweeps(std::vector<store::SweepRecord> sweeps);
  const std::vector<store::SweepRecord>& sweeps() const { return sweeps_; }
  int64_t sweepIdAt(int row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<store::SweepRecord> sweeps_;
};

// Two sweeps of one symbol point by point (`sod2 history --compare-sweeps`): each side's p50 and
// arena at every value either measured, the change, and why a side's point failed.
class SweepCompareModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kValue, kA, kB, kDelta, kArenaA, kArenaB, kNote, kColumns };
  using QAbstractTableModel::QAbstractTableModel;

  void setRows(std::string symbol, std::vector<profiling::SweepPointDelta> rows);
  const std::vector<profiling::SweepPointDelta>& rows() const { return rows_; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::string symbol_ = "value";
  std::vector<profiling::SweepPointDelta> rows_;
};

}  // namespace sod2::studio
