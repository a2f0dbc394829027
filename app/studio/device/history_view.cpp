#include "app/studio/device/history_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
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
  compare_button_->setToolTip(
      tr("Select two runs (Ctrl+click) to compare them group by group, or two sweeps of one "
         "symbol (Sweeps tab) to compare them point by point"));
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
  tabs_ = new QTabWidget(this);
  const auto table = [this](QWidget* parent, QAbstractItemModel* model) {
    auto* t = new QTableView(parent);
    t->setModel(model);
    t->horizontalHeader()->setStretchLastSection(true);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    return t;
  };
  auto* split = new QSplitter(Qt::Vertical, tabs_);
  runs_view_ = table(split, &runs_);
  runs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runs_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  compare_view_ = table(split, &compare_);
  tabs_->addTab(split, tr("Runs"));
  auto* sweep_split = new QSplitter(Qt::Vertical, tabs_);
  sweeps_view_ = table(sweep_split, &sweeps_);
  sweeps_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  sweeps_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  sweep_compare_view_ = table(sweep_split, &sweep_compare_);
  sweep_compare_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  tabs_->addTab(sweep_split, tr("Sweeps"));
  layout->addWidget(tabs_, 1);
  connect(sweep_compare_view_, &QTableView::doubleClicked, this,
          [this](const QModelIndex& at) { compareSweepPoint(at.row()); });
  connect(refresh, &QPushButton::clicked, this, &HistoryView::refresh);
  connect(compare_button_, &QPushButton::clicked, this, [this] {
    if (tabs_->currentIndex() == 1)
      compareSelectedSweeps();
    else
      compareSelected();
  });
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
  auto sweeps = (*db)->sweeps({"", "", 500});
  if (!sweeps.ok()) {
    state_->setText(QString::fromStdString(sweeps.status().message()));
    return;
  }
  state_->setText(tr("%n run(s)", nullptr, static_cast<int>(runs->size())) + tr(" and ") +
                  tr("%n sweep(s) in %1", nullptr, static_cast<int>(sweeps->size()))
                      .arg(QString::fromStdString(db_path_)));
  runs_.setRuns(std::move(*runs));
  runs_view_->resizeColumnsToContents();
  sweeps_.setSweeps(std::move(*sweeps));
  sweeps_view_->resizeColumnsToContents();
}

void HistoryView::compareSelectedSweeps() {
  const QModelIndexList rows = sweeps_view_->selectionModel()->selectedRows();
  if (rows.size() != 2) {
    state_->setText(tr("Select exactly two sweeps to compare (Ctrl+click)."));
    return;
  }
  int64_t a = sweeps_.sweepIdAt(rows[0].row()), b = sweeps_.sweepIdAt(rows[1].row());
  if (a > b) std::swap(a, b);
  compareSweeps(a, b);
}

bool HistoryView::compareSweeps(int64_t a, int64_t b) {
  auto db = store::ProfileStore::open(db_path_);
  if (!db.ok()) {
    state_->setText(QString::fromStdString(db.status().message()));
    return false;
  }
  auto wa = (*db)->sweep(a);
  auto wb = (*db)->sweep(b);
  for (const auto* w : {&wa, &wb}) {
    if (!w->ok()) {
      state_->setText(QString::fromStdString(w->status().message()));
      return false;
    }
  }
  if (wa->symbol != wb->symbol) {
    state_->setText(tr("Sweep %1 varies %2 and sweep %3 varies %4: their points are not the same "
                       "sizes.")
                        .arg(a)
                        .arg(QString::fromStdString(wa->symbol))
                        .arg(b)
                        .arg(QString::fromStdString(wb->symbol)));
    return false;
  }
  sweep_compare_.setRows(wa->symbol, profiling::compare_sweeps(*wa, *wb));
  sweep_compare_view_->resizeColumnsToContents();
  tabs_->setCurrentIndex(1);
  QString text =
      tr("A: sweep %1 (%2, %3, held %4)  B: sweep %5 (%6, %7, held %8)")
          .arg(a)
          .arg(QString::fromStdString(wa->model_name), QString::fromStdString(wa->device_id),
               QString::fromStdString(wa->held.empty() ? "nothing" : wa->held))
          .arg(b)
          .arg(QString::fromStdString(wb->model_name), QString::fromStdString(wb->device_id),
               QString::fromStdString(wb->held.empty() ? "nothing" : wb->held));
  // Unlike the CLI (which wants --force), the studio compares them and says so.
  if (wa->model_name != wb->model_name || wa->held != wb->held)
    text += tr("; different models or held values: points pair by %1 only")
                .arg(QString::fromStdString(wa->symbol));
  state_->setText(text);
  return true;
}

bool HistoryView::compareSweepPoint(int row) {
  if (row < 0 || row >= sweep_compare_.rowCount()) return false;
  const profiling::SweepPointDelta& d = sweep_compare_.rows()[static_cast<size_t>(row)];
  if (!d.in_both()) {
    state_->setText(tr("At %1 the point did not succeed in both sweeps: nothing to compare group "
                       "by group.")
                        .arg(d.value));
    return false;
  }
  if (!compare(d.a_run, d.b_run)) return false;
  tabs_->setCurrentIndex(0);
  return true;
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
