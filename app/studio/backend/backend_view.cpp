#include "app/studio/backend/backend_view.h"

#include <QCheckBox>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

BackendView::BackendView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* top = new QHBoxLayout();
  header_ = new QLabel(this);
  header_->setWordWrap(true);
  header_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cpu_only_ = new QCheckBox(tr("CPU only"), this);
  place_ = new QPushButton(tr("Place on Vulkan"), this);
  top->addWidget(header_, 1);
  top->addWidget(cpu_only_);
  top->addWidget(place_);
  layout->addLayout(top);

  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(&model_);
  proxy_->setSortRole(BackendTableModel::kSortRole);
  proxy_->setFilterKeyColumn(BackendTableModel::kBackend);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(BackendTableModel::kStep, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->horizontalHeader()->setStretchLastSection(true);

  reasons_ = new QPlainTextEdit(this);
  reasons_->setReadOnly(true);
  reasons_->setLineWrapMode(QPlainTextEdit::NoWrap);
  reasons_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  reasons_->setPlaceholderText(tr("Why the CPU runs the other nodes shows here."));

  auto* split = new QSplitter(Qt::Vertical, this);
  split->addWidget(table_);
  split->addWidget(reasons_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 1);
  layout->addWidget(split, 1);
  showMessage(tr("Open a model, then place it on Vulkan to see where each node runs."), false);

  connect(place_, &QPushButton::clicked, this, &BackendView::place);
  connect(cpu_only_, &QCheckBox::toggled, this, &BackendView::setCpuOnly);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (!current.isValid() || selecting_) return;
            emit nodesActivated(current.data(BackendTableModel::kNodesRole).toStringList());
          });
  connect(&watcher_, &QFutureWatcher<Outcome>::finished, this, [this] {
    adopt(watcher_.result());
    if (stale_) place();
  });
}

BackendView::~BackendView() { watcher_.waitForFinished(); }

void BackendView::setCpuOnly(bool on) {
  if (cpu_only_->isChecked() != on) cpu_only_->setChecked(on);
  // "Vulkan" does not contain "CPU": a fixed string on the backend column is the filter.
  proxy_->setFilterFixedString(on ? QStringLiteral("CPU") : QString());
}

bool BackendView::selectNode(const std::string& node_name) {
  const QString name = QString::fromStdString(node_name);
  for (int r = 0; r < model_.rowCount(); ++r) {
    const QModelIndex src = model_.index(r, 0);
    if (!src.data(BackendTableModel::kNodesRole).toStringList().contains(name) &&
        src.siblingAtColumn(BackendTableModel::kNode).data().toString() != name)
      continue;
    const QModelIndex at = proxy_->mapFromSource(src);
    if (!at.isValid()) return false;  // filtered out
    selecting_ = true;
    table_->selectRow(at.row());
    table_->scrollTo(at, QAbstractItemView::PositionAtCenter);
    selecting_ = false;
    return true;
  }
  return false;
}

void BackendView::setSource(PlacementSource source) {
  source_ = std::move(source);
  model_.setPlacement({});
  reasons_->clear();
  if (source_.empty()) {
    showMessage(tr("Open a model, then place it on Vulkan to see where each node runs."), false);
    return;
  }
  if (placed_once_) {
    place();
  } else {
    showMessage(tr("Place on Vulkan to see where each node runs."), false);
  }
}

BackendView::Outcome BackendView::run(const PlacementSource& source,
                                      std::shared_ptr<rt::DeviceBackend> device) {
  Outcome o;
  if (!device) {
    auto made = backend::make_backend(backend::BackendChoice{.vulkan = true});
    if (!made.ok()) {
      o.result = made.status();
      return o;
    }
    device = *made;
  }
  o.device = device;
  o.result = place_on_backend(source, device);
  return o;
}

void BackendView::place() {
  if (source_.empty()) {
    showMessage(tr("Open a model or a package first."), true);
    return;
  }
  placed_once_ = true;
  if (watcher_.isRunning()) {
    stale_ = true;
    return;
  }
  stale_ = false;
  place_->setEnabled(false);
  showMessage(tr("Compiling shaders and placing the nodes..."), false);
  watcher_.setFuture(
      QtConcurrent::run([source = source_, device = device_] { return run(source, device); }));
}

std::optional<QString> BackendView::placeNow() {
  watcher_.waitForFinished();
  if (source_.empty()) {
    showMessage(tr("Open a model or a package first."), true);
    return tr("nothing is open");
  }
  placed_once_ = true;
  stale_ = false;
  Outcome o = run(source_, device_);
  const std::optional<QString> error =
      o.result.ok() ? std::nullopt : std::optional(qs(o.result.status().message()));
  adopt(std::move(o));
  return error;
}

void BackendView::adopt(Outcome outcome) {
  place_->setEnabled(true);
  if (outcome.device) device_ = outcome.device;
  if (stale_) return;  // placed for what is no longer open: placed again next
  if (!outcome.result.ok()) {
    model_.setPlacement({});
    reasons_->clear();
    showMessage(tr("Cannot place on Vulkan: %1").arg(qs(outcome.result.status().message())), true);
    emit placementChanged();
    return;
  }
  PlacementResult& r = *outcome.result;
  QString reasons = placement_reasons(r.placement);
  if (!r.note.empty()) reasons = tr("Note: %1\n\n").arg(qs(r.note)) + reasons;
  showMessage(placement_header(r.placement), false);
  model_.setPlacement(std::move(r.placement));
  reasons_->setPlainText(reasons);
  table_->resizeColumnsToContents();
  // The reason column takes what is left; long op chains must not push it out of sight.
  const int ops_width = std::min(table_->columnWidth(BackendTableModel::kOps), 320);
  table_->setColumnWidth(BackendTableModel::kOps, ops_width);
  emit placementChanged();
}

void BackendView::showMessage(const QString& text, bool error) {
  header_->setText(text);
  QPalette p = header_->palette();
  p.setColor(QPalette::WindowText,
             error ? QColor(200, 40, 40) : palette().color(QPalette::WindowText));
  header_->setPalette(p);
}

QString BackendView::headerText() const { return header_->text(); }

QString BackendView::reasonsText() const { return reasons_->toPlainText(); }

void BackendView::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                  const std::shared_ptr<const BoundDocument>&,
                                  const TimelineModel*) {
  setSource(doc ? doc->placement_source() : PlacementSource{});
}

void BackendView::selectionChanged(const PageSelection& selection) {
  for (const std::string& n : selection.names)
    if (selectNode(n)) return;
}

}  // namespace sod2::studio
