#include "app/studio/widgets/sweep_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/studio/widgets/on_screen.h"
#include "core/opt/model_work.h"
#include "core/status/byte_size.h"

namespace sod2::studio {
namespace {

const QColor kOpsColor(214, 120, 30);
const QColor kMeasuredColor(40, 150, 70);
const QColor kFailedColor(200, 40, 40);

}  // namespace

// The drawing: x is the swept symbol, y bytes from 0 to the largest arena (left scale) and the
// model's operations from 0 to their largest (right scale).
class SweepPlot : public QWidget {
 public:
  explicit SweepPlot(SweepView* view) : QWidget(view), view_(view) {
    setMinimumHeight(120);
    setMouseTracking(false);
  }
  QSize sizeHint() const override { return {640, 240}; }

  QRect area() const { return rect().adjusted(64, 10, -72, -28); }
  double x_of(int64_t v, const pipeline::PlanSweep& s) const {
    const QRect a = area();
    const double span = static_cast<double>(std::max<int64_t>(s.hi - s.lo, 1));
    return a.left() + (static_cast<double>(v - s.lo) / span) * a.width();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    const QRect a = area();
    const QPalette pal = palette();
    p.fillRect(rect(), pal.base());
    p.setPen(pal.color(QPalette::Mid));
    p.drawRect(a);
    const pipeline::PlanSweep* s = view_->sweep();
    if (!s || s->points.empty()) return;
    int64_t top = 1;
    for (const auto& pt : s->points)
      if (pt.at) top = std::max(top, std::max(pt.at->arena_bytes, pt.at->lower_bound_bytes));
    auto y_of = [&](int64_t b) {
      return a.bottom() - static_cast<double>(b) / static_cast<double>(top) * a.height();
    };
    // Where the layout that runs changes.
    QPen change(pal.color(QPalette::Mid), 1, Qt::DashLine);
    p.setPen(change);
    for (const auto& c : s->changes) {
      const double x = x_of(c.at, *s);
      p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
    }
    // The lower bound, then the arena.
    auto curve = [&](bool arena) {
      QPainterPath path;
      bool open = false;
      for (const auto& pt : s->points) {
        if (!pt.at) {
          open = false;
          continue;
        }
        const QPointF q(x_of(pt.value, *s),
                        y_of(arena ? pt.at->arena_bytes : pt.at->lower_bound_bytes));
        if (open) {
          path.lineTo(q);
        } else {
          path.moveTo(q);
          open = true;
        }
      }
      return path;
    };
    // The operations a run does at each point, on their own scale: where the arena grows
    // faster than the work, memory rather than compute is what a larger input costs.
    int64_t top_ops = 0;
    for (const auto& pt : s->points)
      if (pt.ops) top_ops = std::max(top_ops, *pt.ops);
    if (top_ops > 0) {
      QPainterPath ops;
      bool open = false;
      for (const auto& pt : s->points) {
        if (!pt.ops) {
          open = false;
          continue;
        }
        const QPointF q(
            x_of(pt.value, *s),
            a.bottom() - static_cast<double>(*pt.ops) / static_cast<double>(top_ops) * a.height());
        if (open) {
          ops.lineTo(q);
        } else {
          ops.moveTo(q);
          open = true;
        }
      }
      p.setPen(QPen(kOpsColor, 1.5, Qt::DashDotLine));
      p.drawPath(ops);
      p.drawText(QRect(a.right() + 4, a.top() - 2, 68, p.fontMetrics().height()), Qt::AlignLeft,
                 QString::fromStdString(opt::human_ops(static_cast<double>(top_ops))));
    }
    p.setPen(QPen(pal.color(QPalette::Mid), 1.5, Qt::DotLine));
    p.drawPath(curve(false));
    p.setPen(QPen(pal.color(QPalette::Highlight), 2));
    p.drawPath(curve(true));
    // The latency measured on a device (p50 per point), on its own scale below the operations':
    // where it climbs faster than the work, a kernel falls off the roofline as the size grows.
    if (const profiling::ProfileSweep* m = view_->measured()) {
      double top_ms = 0;
      for (const auto& pt : m->points)
        if (pt.result) top_ms = std::max(top_ms, pt.result->stats.p50_ms);
      QPainterPath ms;
      bool open = false;
      for (const auto& pt : m->points) {
        if (pt.value < s->lo || pt.value > s->hi) continue;
        const double x = x_of(pt.value, *s);
        if (!pt.result || top_ms <= 0) {
          // A point that failed on the device: a cross at the top, its reason in the caption.
          p.setPen(QPen(kFailedColor, 2));
          p.drawLine(QPointF(x - 4, a.top() + 2), QPointF(x + 4, a.top() + 10));
          p.drawLine(QPointF(x - 4, a.top() + 10), QPointF(x + 4, a.top() + 2));
          open = false;
          continue;
        }
        const QPointF q(x, a.bottom() - pt.result->stats.p50_ms / top_ms * a.height());
        if (open) {
          ms.lineTo(q);
        } else {
          ms.moveTo(q);
          open = true;
        }
        p.setPen(Qt::NoPen);
        p.setBrush(kMeasuredColor);
        p.drawEllipse(q, 3, 3);
        p.setBrush(Qt::NoBrush);
      }
      if (top_ms > 0) {
        p.setPen(QPen(kMeasuredColor, 1.5));
        p.drawPath(ms);
        p.drawText(
            QRect(a.right() + 4, a.top() + p.fontMetrics().height(), 68, p.fontMetrics().height()),
            Qt::AlignLeft, QString::number(top_ms, 'g', 3) + " ms");
      }
    }
    // Points that cannot be planned, on the axis.
    p.setPen(QPen(kFailedColor, 2));
    for (const auto& pt : s->points) {
      if (pt.at) continue;
      const double x = x_of(pt.value, *s);
      p.drawLine(QPointF(x - 3, a.bottom() - 3), QPointF(x + 3, a.bottom() + 3));
      p.drawLine(QPointF(x - 3, a.bottom() + 3), QPointF(x + 3, a.bottom() - 3));
    }
    // The current binding.
    if (const auto c = view_->cursor(); c && *c >= s->lo && *c <= s->hi) {
      p.setPen(QPen(pal.color(QPalette::Text), 1));
      const double x = x_of(*c, *s);
      p.drawLine(QPointF(x, a.top()), QPointF(x, a.bottom()));
    }
    // Axes: the symbol's ends, bytes at the top.
    p.setPen(pal.color(QPalette::Text));
    const QFontMetrics fm = p.fontMetrics();
    p.drawText(QRect(0, a.top() - 2, a.left() - 4, fm.height()), Qt::AlignRight,
               QString::fromStdString(human_bytes(top)));
    p.drawText(QRect(0, a.bottom() - fm.height() + 2, a.left() - 4, fm.height()), Qt::AlignRight,
               "0");
    p.drawText(QRect(a.left(), a.bottom() + 4, a.width() / 2, fm.height()), Qt::AlignLeft,
               QString::number(s->lo));
    p.drawText(QRect(a.left() + a.width() / 2, a.bottom() + 4, a.width() / 2, fm.height()),
               Qt::AlignRight, QString::fromStdString(s->symbol) + " " + QString::number(s->hi));
  }

  void mousePressEvent(QMouseEvent* e) override {
    const auto v = view_->valueAt(static_cast<int>(e->position().x()));
    if (v) emit view_->valueChosen(view_->symbol(), *v);
  }

 private:
  SweepView* view_;
};

SweepView::SweepView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* row = new QHBoxLayout();
  row->addWidget(new QLabel(tr("Sweep"), this));
  symbol_box_ = new QComboBox(this);
  symbol_box_->setAccessibleName(tr("Swept symbol"));
  row->addWidget(symbol_box_);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  row->addWidget(caption_, 1);
  measure_button_ = new QPushButton(tr("Measure on device"), this);
  measure_button_->setToolTip(
      tr("Run the package on the device selected in the Devices dock at up to %1 of these "
         "points (one package, one agent; each point is recorded in the history) and draw the "
         "measured latency over the plan")
          .arg(kMaxMeasuredPoints));
  row->addWidget(measure_button_);
  connect(measure_button_, &QPushButton::clicked, this, [this] {
    if (!sweep_) return;
    // The measured points are a subset of the drawn ones: the same lo, hi and a step on them.
    const int64_t n = static_cast<int64_t>(sweep_->points.size());
    const int64_t stride =
        std::max<int64_t>(1, (n + kMaxMeasuredPoints - 2) / (kMaxMeasuredPoints - 1));
    emit measureRequested(QString::fromStdString(sweep_->symbol), sweep_->lo, sweep_->hi,
                          sweep_->step * stride);
  });
  layout->addLayout(row);
  plot_ = new SweepPlot(this);
  plot_->setToolTip(
      tr("Arena (solid) and lower bound (dotted) of the plan that runs, against the swept "
         "symbol (left scale); the model's operations (dash-dot, right scale: a multiply-add "
         "counts 2); the p50 latency measured on a device (green, its own scale; red crosses "
         "at the top: points that failed there); dashed lines: the layout changes; crosses on "
         "the axis: sizes that cannot be planned. Click to set the binding."));
  layout->addWidget(plot_, 1);
  connect(symbol_box_, &QComboBox::currentTextChanged, this, [this] {
    stale_ = true;
    resweep();
  });
}

SweepView::~SweepView() = default;

QWidget* SweepView::plot() const { return plot_; }

void SweepView::setDatabase(const std::string& path) {
  db_path_ = path;
  stale_ = true;
  resweep();
}

void SweepView::setMeasured(std::shared_ptr<const profiling::ProfileSweep> measured) {
  measured_ = std::move(measured);
  measured_error_.clear();
  caption_->setText(caption());
  plot_->update();
}

const profiling::ProfileSweep* SweepView::measured() const {
  if (!measured_ || !sweep_ || measured_->symbol != sweep_->symbol) return nullptr;
  if (measured_->held != held()) return nullptr;
  return measured_.get();
}

void SweepView::loadMeasured() {
  measured_.reset();
  measured_error_.clear();
  if (!doc_ || !sweep_) return;
  const std::string path = db_path_.empty() ? store::ProfileStore::default_path() : db_path_;
  // No store yet is no measurement, not an error (and opening would create the file).
  if (!std::filesystem::exists(path)) return;
  // The file's hash once per document: a binding change must not read a large model again.
  if (model_sha256_.empty()) {
    Expected<std::string> sha = profiling::model_file_sha256(doc_->path());
    if (!sha.ok()) {
      measured_error_ = QString::fromStdString(sha.status().message());
      return;
    }
    model_sha256_ = *sha;
  }
  auto found = profiling::latest_recorded_sweep(path, model_sha256_, sweep_->symbol, held());
  if (!found.ok()) {
    measured_error_ = QString::fromStdString(found.status().message());
  } else if (*found) {
    measured_ = std::make_shared<const profiling::ProfileSweep>(std::move(**found));
  }
}

void SweepView::setDocument(std::shared_ptr<const StudioDocument> doc,
                            const sym::Binding& binding) {
  doc_ = std::move(doc);
  binding_ = binding;
  sweep_.reset();
  measured_.reset();
  model_sha256_.clear();
  swept_with_.clear();
  error_.clear();
  {
    const QSignalBlocker block(symbol_box_);
    symbol_box_->clear();
    if (doc_) {
      for (const SymbolControl& c : doc_->symbols())
        if (!c.execution && c.hi > c.lo) symbol_box_->addItem(QString::fromStdString(c.name));
    }
  }
  stale_ = true;
  resweep();
}

void SweepView::setBinding(const sym::Binding& binding) {
  binding_ = binding;
  if (held() != swept_with_) stale_ = true;
  resweep();
}

void SweepView::setSymbol(const QString& name) { symbol_box_->setCurrentText(name); }

QString SweepView::symbol() const { return symbol_box_->currentText(); }

std::map<std::string, int64_t> SweepView::held() const {
  std::map<std::string, int64_t> out;
  if (!doc_) return out;
  const std::string swept = symbol().toStdString();
  for (const SymbolControl& c : doc_->symbols()) {
    if (c.execution || c.name == swept) continue;
    for (const auto& [s, v] : binding_)
      if (s.name() == c.name) out[c.name] = v;
  }
  return out;
}

void SweepView::refreshIfStale() {
  if (stale_) resweep();
}

void SweepView::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  resweep();
}

void SweepView::resweep() {
  cursor_.reset();
  const std::string swept = symbol().toStdString();
  for (const auto& [s, v] : binding_)
    if (s.name() == swept) cursor_ = v;
  // Sweeping costs a plan instantiation per point: only for a view someone can see.
  if (stale_ && doc_ && !swept.empty() && on_screen(*this)) {
    pipeline::SweepRequest request;
    request.symbol = swept;
    request.max_points = kMaxPoints;
    request.held = held();
    auto s = pipeline::sweep_plan(doc_->compiled(), request);
    swept_with_ = request.held;
    stale_ = false;
    if (s.ok()) {
      sweep_ = std::move(*s);
      error_.clear();
    } else {
      sweep_.reset();
      error_ = QString::fromStdString(s.status().message());
    }
    loadMeasured();
  }
  measure_button_->setEnabled(sweep_.has_value());
  caption_->setText(caption());
  plot_->update();
}

QString SweepView::caption() const {
  if (!error_.isEmpty()) return error_;
  if (!sweep_) return doc_ ? tr("No input symbol with more than one value") : QString();
  const pipeline::PlanSweep& s = *sweep_;
  QString held_text;
  for (const auto& [k, v] : s.held)
    held_text +=
        (held_text.isEmpty() ? "" : ", ") + QString::fromStdString(k) + "=" + QString::number(v);
  QString text = tr("%1 = %2..%3 step %4 (%5 points)")
                     .arg(QString::fromStdString(s.symbol))
                     .arg(s.lo)
                     .arg(s.hi)
                     .arg(s.step)
                     .arg(s.points.size());
  if (!held_text.isEmpty()) text += tr("; held %1").arg(held_text);
  text += tr("; worst arena/LB %1 at %2").arg(s.worst_ratio, 0, 'f', 3).arg(s.worst_at);
  if (!s.changes.empty())
    text += tr("; layout changes %n time(s)", "", static_cast<int>(s.changes.size()));
  if (s.failed) text += tr("; %n point(s) cannot be planned", "", static_cast<int>(s.failed));
  if (!measured_error_.isEmpty())
    text += tr("; measured sweeps unreadable: %1").arg(measured_error_);
  if (const profiling::ProfileSweep* m = measured()) {
    double lo_ms = 0, hi_ms = 0;
    bool any = false;
    QString failures;
    for (const auto& pt : m->points) {
      if (!pt.result) {
        failures += tr("; %1=%2 failed: %3")
                        .arg(QString::fromStdString(m->symbol))
                        .arg(pt.value)
                        .arg(QString::fromStdString(pt.error));
        continue;
      }
      const double v = pt.result->stats.p50_ms;
      lo_ms = any ? std::min(lo_ms, v) : v;
      hi_ms = any ? std::max(hi_ms, v) : v;
      any = true;
    }
    const size_t measured_points = m->points.size() - m->failed;
    text += tr("\nMeasured (sweep %1%2): p50 %3..%4 ms at %5 point(s)")
                .arg(m->sweep_id)
                .arg(m->points.empty() || !m->points.front().result
                         ? QString()
                         : tr(" on %1").arg(
                               QString::fromStdString(m->points.front().result->device.id)))
                .arg(lo_ms, 0, 'f', 3)
                .arg(hi_ms, 0, 'f', 3)
                .arg(measured_points);
    text += m->arena_mismatches == 0
                ? tr("; the device's arena is the plan's at every one")
                : tr("; the device ran in another arena than the plan at %n point(s)", "",
                     static_cast<int>(m->arena_mismatches));
    text += failures;
  }
  return text;
}

std::optional<int64_t> SweepView::valueAt(int plot_x) const {
  if (!sweep_ || sweep_->points.empty()) return std::nullopt;
  std::optional<int64_t> best;
  double best_d = 0;
  for (const auto& pt : sweep_->points) {
    const double d = std::abs(plot_->x_of(pt.value, *sweep_) - plot_x);
    if (!best || d < best_d) {
      best = pt.value;
      best_d = d;
    }
  }
  return best;
}

void SweepView::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                const std::shared_ptr<const BoundDocument>& bound,
                                const TimelineModel*) {
  // A sweep evaluates a model's plan program: a package has none to offer.
  setDocument(doc ? doc->model() : nullptr, bound ? bound->binding() : sym::Binding{});
}

void SweepView::bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                               const TimelineModel*) {
  setBinding(bound->binding());
}

}  // namespace sod2::studio
