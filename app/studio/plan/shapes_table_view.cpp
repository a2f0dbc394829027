#include "app/studio/plan/shapes_table_view.h"

#include <QHeaderView>
#include <QResizeEvent>
#include <QScrollBar>
#include <algorithm>

#include "app/studio/plan/shapes_table_model.h"
#include "app/studio/widgets/on_screen.h"

namespace sod2::studio {
namespace {

// Of the width the short columns leave: the value's name, the rest to its producer.
constexpr double kNameShare = 0.55;
// A short column (dims of a rank-6 tensor) takes at most this share of the view.
constexpr double kShortColumnMaxShare = 0.22;

bool is_name_column(int column) {
  return column == ShapesTableModel::kName || column == ShapesTableModel::kProducer;
}

}  // namespace

ShapesTableView::ShapesTableView(QWidget* parent) : QTableView(parent) {
  setTextElideMode(Qt::ElideMiddle);
  setSortingEnabled(true);
  setSelectionBehavior(QAbstractItemView::SelectRows);
  setWordWrap(false);
  verticalHeader()->hide();
  QHeaderView* header = horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setStretchLastSection(false);
  header->setTextElideMode(Qt::ElideMiddle);
  connect(header, &QHeaderView::sectionResized, this, [this] {
    if (!fitting_) user_sized_ = true;
  });
}

void ShapesTableView::setModel(QAbstractItemModel* model) {
  if (model == this->model()) return;
  QObject::disconnect(refit_on_reset_);
  QTableView::setModel(model);
  if (!model) return;
  // A proxy given a new source resets: a new document, fitted afresh.
  refit_on_reset_ = connect(model, &QAbstractItemModel::modelReset, this, [this] {
    user_sized_ = false;
    if (on_screen(*this))
      fitColumns();
    else
      fit_pending_ = true;
  });
  user_sized_ = false;
  fitColumns();
}

void ShapesTableView::fitColumnsIfPending() {
  if (fit_pending_) fitColumns();
}

void ShapesTableView::fitColumns() {
  fit_pending_ = false;
  if (!model()) return;
  fitting_ = true;
  const int columns = model()->columnCount();
  const int width = viewport()->width();
  int used = 0;
  for (int c = 0; c < columns; ++c) {
    if (is_name_column(c)) continue;
    resizeColumnToContents(c);  // the larger of its cells (sampled) and its header
    const int cap = std::max(horizontalHeader()->sectionSizeHint(c),
                             static_cast<int>(width * kShortColumnMaxShare));
    if (columnWidth(c) > cap) setColumnWidth(c, cap);
    used += columnWidth(c);
  }
  const int left = width - used;
  const int name_min = horizontalHeader()->sectionSizeHint(ShapesTableModel::kName);
  const int producer_min = horizontalHeader()->sectionSizeHint(ShapesTableModel::kProducer);
  if (ShapesTableModel::kName < columns)
    setColumnWidth(ShapesTableModel::kName,
                   std::max(name_min, static_cast<int>(left * kNameShare)));
  if (ShapesTableModel::kProducer < columns)
    setColumnWidth(ShapesTableModel::kProducer,
                   std::max(producer_min, left - columnWidth(ShapesTableModel::kName)));
  fitting_ = false;
}

void ShapesTableView::resizeEvent(QResizeEvent* event) {
  QTableView::resizeEvent(event);
  if (!user_sized_ && on_screen(*this)) fitColumns();
}

}  // namespace sod2::studio
