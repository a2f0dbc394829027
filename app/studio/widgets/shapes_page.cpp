#include "app/studio/widgets/shapes_page.h"

#include <QApplication>
#include <QClipboard>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTimer>
#include <QVBoxLayout>

#include "app/studio/plan/shapes_table_view.h"
#include "app/studio/widgets/on_screen.h"

namespace sod2::studio {
namespace {

struct PreparedShapes : PreparedPageData {
  std::unique_ptr<ShapesTableModel> model;
};

}  // namespace

ShapesPage::ShapesPage(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* filter_row = new QHBoxLayout();
  filter_ = new QLineEdit(this);
  filter_->setPlaceholderText(tr("Filter values by name, dims or producer"));
  filter_->setClearButtonEnabled(true);
  auto* copy = new QPushButton(tr("Copy as CSV"), this);
  filter_row->addWidget(filter_);
  filter_row->addWidget(copy);
  layout->addLayout(filter_row);
  view_ = new ShapesTableView(this);
  layout->addWidget(view_);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setSortRole(Qt::UserRole);
  view_->setModel(proxy_);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(copy, &QPushButton::clicked, this, [this] {
    if (!model_) return;
    QModelIndexList rows;
    for (int r = 0; r < proxy_->rowCount(); ++r)
      rows.push_back(proxy_->mapToSource(proxy_->index(r, 0)));
    QApplication::clipboard()->setText(model_->to_csv(&rows));
    emit copied(static_cast<int>(rows.size()));
  });
  connect(view_, &QTableView::clicked, this, [this](const QModelIndex& index) {
    if (!model_) return;
    const QVariant producer = proxy_->mapToSource(index).data(ShapesTableModel::kProducerRole);
    if (producer.isValid() && producer.toInt() >= 0) emit producerChosen(producer.toInt());
  });
}

ShapesPage::~ShapesPage() = default;

std::unique_ptr<PreparedPageData> ShapesPage::prepare(const OpenDocument& doc,
                                                      const BoundDocument* bound,
                                                      const std::atomic<bool>* cancel) const {
  // The table is built on RDP's facts, which a package does not carry: its dims show on the
  // edges and in the inspector instead.
  const auto model = doc.model();
  if (!model || (cancel && *cancel)) return nullptr;
  auto out = std::make_unique<PreparedShapes>();
  out->model = std::make_unique<ShapesTableModel>(model->model(), model->rdp());
  out->model->set_binding(bound ? bound->binding() : sym::Binding{});
  // Made on a worker, used by this page: its events belong to the page's thread.
  out->model->moveToThread(thread());
  return out;
}

void ShapesPage::adoptPrepared(std::unique_ptr<PreparedPageData> data) {
  auto* prepared = dynamic_cast<PreparedShapes*>(data.get());
  std::unique_ptr<ShapesTableModel> model = prepared ? std::move(prepared->model) : nullptr;
  // The view lets go of the old model before it goes; a table no one sees is not sorted now.
  if (!on_screen(*view_)) proxy_->sort(-1);
  proxy_->setSourceModel(model.get());
  model_ = std::move(model);
}

ValueId ShapesPage::selectedValue() const {
  const QModelIndexList rows = view_->selectionModel()->selectedRows();
  if (rows.isEmpty()) return kNoValue;
  const QVariant v = rows.front().data(ShapesTableModel::kValueIdRole);
  return v.isValid() ? static_cast<ValueId>(v.toInt()) : kNoValue;
}

void ShapesPage::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                 const std::shared_ptr<const BoundDocument>&,
                                 const TimelineModel*) {
  doc_ = doc;
}

void ShapesPage::bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                                const TimelineModel*) {
  if (model_) model_->set_binding(bound->binding());
}

void ShapesPage::selectionChanged(const PageSelection& selection) {
  const auto model = doc_ ? doc_->model() : nullptr;
  if (!model_ || !model || selection.nodes.empty()) return;
  // The row of the node's (a box's last member's) first output.
  const Node& core = model->graph().node(selection.nodes.back());
  const int row = core.outputs.empty() ? -1 : model_->row_of_value(core.outputs.front());
  if (row < 0) return;
  const QModelIndex index = proxy_->mapFromSource(model_->index(row, 0));
  if (!index.isValid()) return;
  const QSignalBlocker block(view_);
  view_->selectRow(index.row());
  view_->scrollTo(index);
}

void ShapesPage::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  // After the layout has given the table its place on screen.
  QTimer::singleShot(0, this, [this] {
    view_->fitColumnsIfPending();
    const QHeaderView* header = view_->horizontalHeader();
    if (proxy_->sortColumn() < 0 && view_->isSortingEnabled())
      view_->sortByColumn(header->sortIndicatorSection(), header->sortIndicatorOrder());
  });
}

}  // namespace sod2::studio
