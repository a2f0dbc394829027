#include "app/studio/ofa/demo_timeline.h"

#include <QPainter>
#include <algorithm>

#include "app/studio/ofa/variants_chart.h"

namespace sod2::studio {

DemoTimeline::DemoTimeline(QWidget* parent) : QWidget(parent) { setMinimumHeight(160); }

void DemoTimeline::start(double duration_s, double budget_ms, std::optional<rt::LoadSchedule> load,
                         QStringList variant_names) {
  points_.clear();
  points_.reserve(8192);
  duration_s_ = std::max(duration_s, 1e-3);
  budget_ms_ = budget_ms;
  load_ = load;
  names_ = std::move(variant_names);
  update();
}

void DemoTimeline::add(const rt::DemoPoint& p) {
  points_.push_back(p);
  update();
}

void DemoTimeline::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QPalette pal = palette();
  p.fillRect(rect(), pal.base());
  const QRectF area = QRectF(rect()).adjusted(50, 22, -12, -26);
  double max_ms = budget_ms_ * 2;
  for (const rt::DemoPoint& d : points_) max_ms = std::max(max_ms, d.latency_ms);
  max_ms = std::max(max_ms * 1.05, 1e-3);
  auto x_of = [&](double t) { return area.left() + area.width() * std::min(t / duration_s_, 1.0); };
  auto y_of = [&](double ms) { return area.bottom() - area.height() * std::min(ms / max_ms, 1.0); };
  if (load_) {
    QColor shade = pal.color(QPalette::Mid);
    shade.setAlpha(60);
    p.fillRect(QRectF(QPointF(x_of(load_->start_s), area.top()),
                      QPointF(x_of(load_->stop_s), area.bottom())),
               shade);
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QPointF(x_of(load_->start_s) + 4, area.top() + 12),
               tr("load: %1 busy processes").arg(load_->threads));
  }
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(area.bottomLeft(), area.bottomRight());
  p.drawLine(area.bottomLeft(), area.topLeft());
  p.setPen(pal.color(QPalette::Text));
  for (int k = 0; k <= 4; ++k) {
    const double t = duration_s_ * k / 4, ms = max_ms * k / 4;
    p.drawText(QRectF(x_of(t) - 30, area.bottom() + 4, 60, 16), Qt::AlignCenter,
               QString::number(t, 'f', 1) + " s");
    p.drawText(QRectF(0, y_of(ms) - 8, 46, 16), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(ms, 'f', 0) + " ms");
  }
  if (budget_ms_ > 0) {
    p.setPen(QPen(QColor(0xc0, 0x39, 0x2b), 1.5, Qt::DashLine));
    p.drawLine(QPointF(area.left(), y_of(budget_ms_)), QPointF(area.right(), y_of(budget_ms_)));
  }
  p.setPen(Qt::NoPen);
  for (const rt::DemoPoint& d : points_) {
    p.setBrush(variant_color(d.variant));
    p.drawEllipse(QPointF(x_of(d.t_s), y_of(d.latency_ms)), 2.2, 2.2);
  }
  // Legend along the top.
  double x = area.left();
  for (int i = 0; i < names_.size(); ++i) {
    p.setBrush(variant_color(i));
    p.setPen(Qt::NoPen);
    p.drawEllipse(QPointF(x + 5, 10), 4, 4);
    p.setPen(pal.color(QPalette::Text));
    p.drawText(QPointF(x + 12, 14), names_[i]);
    x += 24 + p.fontMetrics().horizontalAdvance(names_[i]);
  }
  p.drawText(QPointF(x + 8, 14), tr("– – budget %1 ms").arg(budget_ms_, 0, 'f', 1));
}

}  // namespace sod2::studio
