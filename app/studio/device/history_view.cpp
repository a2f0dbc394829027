#include "app/studio/device/history_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace sod2::studio {

HistoryView::HistoryView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  state_ = new QLabel(this);
  state_->setWordWrap(true);
  auto* refresh = new QPushButton(tr("Refresh"), this);
  compare_button_ = new QPushButton(tr("Compare selected"), this);
  compare_button_->setToolTip(tr("Select two runs (Ctrl+click) to compare them group by group"));
  show_button_ = new QPushButton(tr("Show on graph"), this);
  show_button_->setToolTip(
      tr("Colour the graph's nodes by how much their group's time changed from run A to run B "
         "(red slower, blue faster)"));
  show_button_->setEnabled(false);
  top->addWidget(state_, 1);
  top->addWidget(compare_button_);
  top->addWidget(show_button_);
  top->addWidget(refresh);
  layout->addLayout(top);
  auto* split = new QSplitter(Qt::Vertical, this);
  runs_view_ = new QTableView(split);
  runs_view_->setModel(&runs_);
  runs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runs_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  runs_view_->horizontalHeader()->setStretchLastSection(true);
  runs_view_->verticalHeader()->hide();
  runs_view_->verticalHeader()->setDefaultSectionSize(runs_view_->fontMetrics().height() + 6);
  compare_view_ = new QTableView(split);
  compare_view_->setModel(&compare_);
  compare_view_->horizontalHeader()->setStretchLastSection(true);
  compare_view_->verticalHeader()->hide();
  compare_view_->verticalHeader()->setDefaultSectionSize(compare_view_->fontMetrics().height() + 6);
  layout->addWidget(split, 1);
  connect(refresh, &QPushButton::clicked, this, &HistoryView::refresh);
  connect(compare_button_, &QPushButton::clicked, this, &HistoryView::compareSelected);
  connect(show_button_, &QPushButton::clicked, this, &HistoryView::showChangeOnGraph);
}

void HistoryView::setDatabase(const std::string& path) {
  db_path_ = path.empty() ? store::ProfileStore::default_path() : path;
  refresh();
}

void HistoryView::refresh() {
  if (db_path_.empty()) db_path_ = store::ProfileStore::default_path();
  auto db = store::ProfileStore::open(db_path_);
  if (!db.ok()) {
    state_->setText(QString::fromStdString(db.status().message()));
    runs_.setRuns({});
    return;
  }
  auto runs = (*db)->runs({"", "", 500});
  if (!runs.ok()) {
    state_->setText(QString::fromStdString(runs.status().message()));
    return;
  }
  state_->setText(tr("%n run(s) in %1", nullptr, static_cast<int>(runs->size()))
                      .arg(QString::fromStdString(db_path_)));
  runs_.setRuns(std::move(*runs));
  runs_view_->resizeColumnsToContents();
}

void HistoryView::compareSelected() {
  const QModelIndexList rows = runs_view_->selectionModel()->selectedRows();
  if (rows.size() != 2) {
    state_->setText(tr("Select exactly two runs to compare (Ctrl+click)."));
    return;
  }
  // The older run is A.
  int64_t a = runs_.runIdAt(rows[0].row()), b = runs_.runIdAt(rows[1].row());
  if (a > b) std::swap(a, b);
  compare(a, b);
}

bool HistoryView::compare(int64_t a, int64_t b) {
  auto db = store::ProfileStore::open(db_path_);
  if (!db.ok()) {
    state_->setText(QString::fromStdString(db.status().message()));
    return false;
  }
  auto ra = (*db)->run(a);
  auto rb = (*db)->run(b);
  for (const auto* r : {&ra, &rb}) {
    if (!r->ok()) {
      state_->setText(QString::fromStdString(r->status().message()));
      return false;
    }
    if (!(*r)->ok) {
      state_->setText(tr("Run %1 failed (%2): it has no timings to compare.")
                          .arg((*r)->id)
                          .arg(QString::fromStdString((*r)->failure)));
      return false;
    }
  }
  compare_.setRows(profiling::compare_groups(*ra, *rb));
  compared_.emplace(*ra, *rb);
  show_button_->setEnabled(true);
  const double pct = ra->avg_ms > 0 ? 100.0 * (rb->avg_ms - ra->avg_ms) / ra->avg_ms : 0;
  state_->setText(
      tr("A: run %1 (%2, %3, %4)  B: run %5 (%6, %7, %8)  latency %9 → %10 ms (%11%)")
          .arg(ra->id)
          .arg(QString::fromStdString(ra->model_name), QString::fromStdString(ra->device.device_id),
               QString::fromStdString(ra->bindings))
          .arg(rb->id)
          .arg(QString::fromStdString(rb->model_name), QString::fromStdString(rb->device.device_id),
               QString::fromStdString(rb->bindings))
          .arg(ra->avg_ms, 0, 'f', 3)
          .arg(rb->avg_ms, 0, 'f', 3)
          .arg(pct, 0, 'f', 1));
  compare_view_->resizeColumnsToContents();
  return true;
}

}  // namespace sod2::studio
