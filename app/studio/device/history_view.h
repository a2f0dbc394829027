// The history dock: runs from the profile store, newest first; pick two and compare them group
// by group (the same comparison as `sod2 history --compare`), and show the change on the graph.
// Its Sweeps tab lists the measured sweeps and compares two point by point (`sod2 history
// --compare-sweeps`); a point's two runs open group by group.
#pragma once

#include <QWidget>
#include <optional>
#include <string>
#include <utility>

#include "app/studio/device/history_model.h"

class QLabel;
class QPushButton;
class QTabWidget;
class QTableView;

namespace sod2::studio {

class HistoryView : public QWidget {
  Q_OBJECT

 public:
  explicit HistoryView(QWidget* parent = nullptr);

  // The store to read ("" : the default one). Errors show in the view.
  void setDatabase(const std::string& path);
  const std::string& database() const { return db_path_; }
  const HistoryModel* model() const { return &runs_; }
  const RunCompareModel* compareModel() const { return &compare_; }
  // Compares two runs by id; false (and the reason shown) when one cannot be.
  bool compare(int64_t a, int64_t b);
  const SweepListModel* sweepsModel() const { return &sweeps_; }
  const SweepCompareModel* sweepCompareModel() const { return &sweep_compare_; }
  // Compares two measured sweeps of one symbol point by point (the Sweeps tab); false (and the
  // reason shown) when they cannot be: unknown ids, or different symbols.
  bool compareSweeps(int64_t a, int64_t b);
  // Compares the two runs of row `row` of the sweep comparison group by group (the Runs tab);
  // false when the point did not succeed in both sweeps.
  bool compareSweepPoint(int row);
  // The two runs compared last (A, B), with their groups; empty before a comparison.
  const std::optional<std::pair<store::RunRecord, store::RunRecord>>& compared() const {
    return compared_;
  }

 signals:
  // "Show on graph": colour the graph by the change from A to B of the last comparison.
  void showChangeOnGraph();

 public slots:
  void refresh();

 private:
  void compareSelected();
  void compareSelectedSweeps();

  std::string db_path_;
  HistoryModel runs_;
  RunCompareModel compare_;
  QLabel* state_ = nullptr;
  QTableView* runs_view_ = nullptr;
  QTableView* compare_view_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  SweepListModel sweeps_;
  SweepCompareModel sweep_compare_;
  QTableView* sweeps_view_ = nullptr;
  QTableView* sweep_compare_view_ = nullptr;
  QPushButton* compare_button_ = nullptr;
  QPushButton* show_button_ = nullptr;
  std::optional<std::pair<store::RunRecord, store::RunRecord>> compared_;
};

}  // namespace sod2::studio
