// The history dock: runs from the profile store, newest first; pick two and compare them group
// by group (the same comparison as `sod2 history --compare`).
#pragma once

#include <QWidget>
#include <string>

#include "app/studio/device/history_model.h"

class QLabel;
class QPushButton;
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

 public slots:
  void refresh();

 private:
  void compareSelected();

  std::string db_path_;
  HistoryModel runs_;
  RunCompareModel compare_;
  QLabel* state_ = nullptr;
  QTableView* runs_view_ = nullptr;
  QTableView* compare_view_ = nullptr;
  QPushButton* compare_button_ = nullptr;
};

}  // namespace sod2::studio
