#include "app/studio/ofa/variants_chart.h"

#include <QPainter>
#include <QPainterPath>
#include <algorithm>
#include <cmath>

namespace sod2::studio {

QColor variant_color(int index) {
  static const QColor kColors[] = {QColor(0x2e, 0x86, 0xc1), QColor(0x28, 0xb4, 0x63),
                                   QColor(0xf3, 0x9c, 0x12), QColor(0xc0, 0x39, 0x2b),
                                   QColor(0x8e, 0x44, 0xad), QColor(0x16, 0xa0, 0x85),
                                   QColor(0xd3, 0x54, 0x00), QColor(0x7f, 0x8c, 0x8d)};
  return kColors[static_cast<size_t>(index) % (sizeof kColors / sizeof kColors[0])];
}

VariantsChart::VariantsChart(const VariantsModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
  setMinimumSize(280, 200);
  connect(model_, &QAbstractItemModel::dataChanged, this, [this] { update(); });
  connect(model_, &QAbstractItemModel::modelReset, this, [this] { update(); });
}

void VariantsChart::setBudget(double ms) {
  budget_ms_ = ms;
  update();
}

void VariantsChart::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QPalette pal = palette();
  p.fillRect(rect(), pal.base());
  const auto& rows = model_->rows();
  const bool accuracy = model_->byAccuracy();
  auto value = [&](const VariantRow& r) {
    return accuracy ? r.accuracy : static_cast<double>(r.macs) / 1e6;
  };
  const QRectF area = QRectF(rect()).adjusted(58, 16, -18, -40);
  p.setPen(pal.color(QPalette::Text));
  std::vector<const VariantRow*> measured;
  for (const VariantRow& r : rows)
    if (!std::isnan(r.latency_ms)) measured.push_back(&r);
  if (measured.empty()) {
    p.drawText(rect(), Qt::AlignCenter,
               rows.empty() ? tr("Open a family (package or variants.json)")
                            : tr("Measure the variants, or run the demo,\nto place them here"));
    return;
  }
  double max_x = budget_ms_, max_y = 0;
  for (const VariantRow* r : measured) {
    max_x = std::max(max_x, r->latency_ms);
    max_y = std::max(max_y, value(*r));
  }
  max_x *= 1.15;
  max_y *= 1.15;
  auto at = [&](double x, double y) {
    return QPointF(area.left() + area.width() * x / max_x,
                   area.bottom() - area.height() * y / max_y);
  };
  // Axes and ticks.
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(area.bottomLeft(), area.bottomRight());
  p.drawLine(area.bottomLeft(), area.topLeft());
  p.setPen(pal.color(QPalette::Text));
  for (int k = 0; k <= 4; ++k) {
    const double x = max_x * k / 4, y = max_y * k / 4;
    p.drawText(QRectF(at(x, 0).x() - 30, area.bottom() + 4, 60, 16), Qt::AlignCenter,
               QString::number(x, 'f', 1));
    p.drawText(QRectF(2, at(0, y).y() - 8, 52, 16), Qt::AlignRight | Qt::AlignVCenter,
               QString::number(y, 'f', accuracy ? 3 : 0));
  }
  p.drawText(QRectF(area.left(), area.bottom() + 20, area.width(), 18), Qt::AlignCenter,
             tr("latency (ms)"));
  p.save();
  p.translate(12, area.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-80, -10, 160, 16), Qt::AlignCenter, accuracy ? tr("accuracy") : tr("MMACs"));
  p.restore();
  if (budget_ms_ > 0) {
    p.setPen(QPen(QColor(0xc0, 0x39, 0x2b), 1.5, Qt::DashLine));
    p.drawLine(at(budget_ms_, 0), at(budget_ms_, max_y));
    p.drawText(at(budget_ms_, max_y) + QPointF(4, 12),
               tr("budget %1 ms").arg(budget_ms_, 0, 'f', 1));
  }
  // The front, left to right.
  std::vector<const VariantRow*> front;
  for (const VariantRow* r : measured)
    if (r->on_front) front.push_back(r);
  std::sort(front.begin(), front.end(),
            [](const VariantRow* a, const VariantRow* b) { return a->latency_ms < b->latency_ms; });
  if (front.size() > 1) {
    QPainterPath path(at(front[0]->latency_ms, value(*front[0])));
    for (size_t i = 1; i < front.size(); ++i)
      path.lineTo(at(front[i]->latency_ms, value(*front[i])));
    p.setPen(QPen(pal.color(QPalette::Highlight), 2));
    p.drawPath(path);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const VariantRow& r = rows[i];
    if (std::isnan(r.latency_ms)) continue;
    const QPointF c = at(r.latency_ms, value(r));
    p.setPen(Qt::NoPen);
    p.setBrush(variant_color(static_cast<int>(i)));
    p.drawEllipse(c, 6, 6);
    if (static_cast<int>(i) == model_->current()) {
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(pal.color(QPalette::Text), 2));
      p.drawEllipse(c, 11, 11);
    }
    p.setPen(pal.color(QPalette::Text));
    p.drawText(c + QPointF(10, -8), r.name);
  }
}

}  // namespace sod2::studio
