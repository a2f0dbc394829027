#include "app/studio/device/profile_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QToolTip>
#include <QVBoxLayout>

#include "app/studio/device/sustained_chart.h"
#include "core/status/byte_size.h"

namespace sod2::studio {

// The time column as a bar (its length: the group's share of the slowest group), coloured by
// the group's operator class, with the number over it.
class GroupBarDelegate : public QStyledItemDelegate {
 public:
  using QStyledItemDelegate::QStyledItemDelegate;
  void paint(QPainter* p, const QStyleOptionViewItem& option,
             const QModelIndex& index) const override {
    const double share = index.data(ProfileTableModel::kShareRole).toDouble();
    QColor c = index.data(ProfileTableModel::kColorRole).value<QColor>();
    c.setAlpha(170);
    QRectF bar = option.rect.adjusted(2, 3, -2, -3);
    bar.setWidth(bar.width() * std::clamp(share, 0.0, 1.0));
    p->fillRect(bar, c);
    QStyledItemDelegate::paint(p, option, index);
  }
};

// One measured run laid out in time: every group a block from its start to its end, coloured by
// class. Hovering names the group; clicking picks it.
class RunTimeline : public QWidget {
 public:
  explicit RunTimeline(ProfileView* view) : QWidget(view), view_(view) {
    setMinimumHeight(46);
    setMouseTracking(true);
  }
  void set(const ProfileTableModel* model) {
    model_ = model;
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    const profiling::ProfileResult* r = model_ ? model_->result() : nullptr;
    const device::RunSample* run = last_measured(r);
    if (!run) {
      p.setPen(palette().color(QPalette::PlaceholderText));
      p.drawText(rect(), Qt::AlignCenter, tr("Export & profile a model to see a run here"));
      return;
    }
    const double total = std::max(run->latency_ms, 1e-9);
    const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -18);
    for (size_t g = 0; g < run->group_ms.size(); ++g) {
      const double x0 = area.left() + area.width() * run->group_start_ms[g] / total;
      const double w = std::max(1.0, area.width() * run->group_ms[g] / total);
      p.fillRect(QRectF(x0, area.top(), w, area.height()),
                 model_->data(group_index(static_cast<int>(g)), ProfileTableModel::kColorRole)
                     .value<QColor>());
    }
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), 14), Qt::AlignLeft, tr("0 ms"));
    p.drawText(QRectF(area.left(), area.bottom() + 2, area.width(), 14), Qt::AlignRight,
               tr("%1 ms (last measured run)").arg(run->latency_ms, 0, 'f', 3));
  }
  void mouseMoveEvent(QMouseEvent* e) override {
    const int g = group_at(e->position().x());
    if (g < 0) return QToolTip::hideText();
    QToolTip::showText(e->globalPosition().toPoint(),
                       model_->data(group_index(g), Qt::ToolTipRole).toString(), this);
  }
  void mousePressEvent(QMouseEvent* e) override {
    const int g = group_at(e->position().x());
    if (g >= 0)
      emit view_->groupActivated(
          QString::fromStdString(model_->result()->groups[static_cast<size_t>(g)].name));
  }

 private:
  // The table's row of group g: body rows lie between groups' rows.
  QModelIndex group_index(int g) const { return model_->index(model_->rowOfGroup(g), 0); }
  static const device::RunSample* last_measured(const profiling::ProfileResult* r) {
    if (!r) return nullptr;
    for (auto it = r->report.runs.rbegin(); it != r->report.runs.rend(); ++it)
      if (!it->warmup) return &*it;
    return nullptr;
  }
  int group_at(double x) const {
    const device::RunSample* run = last_measured(model_ ? model_->result() : nullptr);
    if (!run) return -1;
    const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -18);
    const double t = (x - area.left()) / area.width() * run->latency_ms;
    for (size_t g = 0; g < run->group_ms.size(); ++g)
      if (t >= run->group_start_ms[g] && t <= run->group_start_ms[g] + run->group_ms[g])
        return static_cast<int>(g);
    return -1;
  }
  ProfileView* view_;
  const ProfileTableModel* model_ = nullptr;
};

ProfileView::ProfileView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  summary_ = new QLabel(tr("No profile yet: pick a device and press Export & profile."), this);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  timeline_ = new RunTimeline(this);
  timeline_->set(&model_);
  layout->addWidget(timeline_);
  sustained_ = new SustainedChart(this);
  layout->addWidget(sustained_);
  proxy_ = new ProfileSortProxy(this);
  proxy_->setSourceModel(&model_);
  proxy_->setSortRole(Qt::UserRole);
  table_ = new QTableView(this);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(ProfileTableModel::kIndex, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->setItemDelegateForColumn(ProfileTableModel::kMs, new GroupBarDelegate(table_));
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  table_->setColumnWidth(ProfileTableModel::kOps, 160);
  table_->setColumnWidth(ProfileTableModel::kMs, 140);
  layout->addWidget(table_, 1);
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            if (selecting_ || !current.isValid()) return;
            // A body node's row selects its If/Loop/Scan: the graph shows main-graph nodes.
            emit groupActivated(model_.activationName(proxy_->mapToSource(current).row()));
          });
}

void ProfileView::setResult(std::shared_ptr<const profiling::ProfileResult> result,
                            std::function<QColor(const profiling::GroupProfile&)> color_of) {
  if (result && !result->report.windows.empty())
    sustained_->setRun(profiling::sustained_from(*result));
  else
    sustained_->setRun(std::nullopt);
  model_.setResult(std::move(result), std::move(color_of));
  table_->resizeColumnToContents(ProfileTableModel::kIndex);
  summary_->setText(summaryText());
  timeline_->update();
}

QString ProfileView::summaryText() const {
  const profiling::ProfileResult* r = model_.result();
  if (!r) return summary_->text();
  const profiling::LatencyStats& s = r->stats;
  const int64_t arena = r->report.runs.empty() ? 0 : r->report.runs.back().arena_bytes;
  return tr("<b>%1</b> on <b>%2</b> (%3, %4 cores), %5, %6 threads<br>"
            "latency: avg <b>%7 ms</b>, std %8, first %9, warm-up avg %10, min %11, max %12 "
            "(%13 runs)<br>memory: arena %14, agent peak RSS %15%16")
      .arg(QString::fromStdString(r->model_name), QString::fromStdString(r->device.id),
           QString::fromStdString(r->device.model))
      .arg(r->agent.cores)
      .arg(QString::fromStdString(r->bindings.empty() ? "no symbols" : r->bindings))
      .arg(r->report.threads)
      .arg(s.avg_ms, 0, 'f', 3)
      .arg(s.std_ms, 0, 'f', 3)
      .arg(s.first_ms, 0, 'f', 3)
      .arg(s.warmup_avg_ms, 0, 'f', 3)
      .arg(s.min_ms, 0, 'f', 3)
      .arg(s.max_ms, 0, 'f', 3)
      .arg(s.count)
      .arg(QString::fromStdString(human_bytes(arena)),
           QString::fromStdString(human_bytes(r->report.peak_rss_bytes)),
           r->run_id > 0 ? tr("; recorded as run %1").arg(r->run_id) : QString());
}

bool ProfileView::selectNode(const std::string& node_name) {
  const int row = model_.rowOfNode(node_name);
  if (row < 0) return false;
  selecting_ = true;
  const QModelIndex at = proxy_->mapFromSource(model_.index(row, 0));
  table_->selectRow(at.row());
  table_->scrollTo(at);
  selecting_ = false;
  return true;
}

void ProfileView::selectionChanged(const PageSelection& selection) {
  for (const std::string& n : selection.names)
    if (selectNode(n)) return;
}

}  // namespace sod2::studio
