#include "app/studio/graph/graph_legend.h"

#include <QPainter>
#include <algorithm>

#include "app/studio/graph/graph_style.h"

namespace sod2::studio {
namespace {

constexpr int kPad = 6;
constexpr int kSwatch = 12;
constexpr int kScaleWidth = 160;

}  // namespace

GraphLegend::GraphLegend(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);  // never steals a click from the graph
  resize(sizeHint());
}

void GraphLegend::setOverlay(std::shared_ptr<const NodeOverlay> overlay) {
  overlay_ = std::move(overlay);
  resize(sizeHint());
  update();
}

QSize GraphLegend::sizeHint() const {
  const QFontMetrics fm(font());
  if (overlay_) {
    const int line = std::max(fm.height(), kSwatch) + 2;
    int w = std::max({kScaleWidth, fm.horizontalAdvance(QString::fromStdString(overlay_->title)),
                      kSwatch + 6 + fm.horizontalAdvance(tr("not in this run"))});
    if (overlay_->categorical()) {
      for (const std::string& c : overlay_->categories)
        w = std::max(w, kSwatch + 6 + fm.horizontalAdvance(QString::fromStdString(c)));
      // Title, each category, mixed, not in this run.
      return {2 * kPad + w, 2 * kPad + (3 + static_cast<int>(overlay_->categories.size())) * line};
    }
    return {2 * kPad + w, 2 * kPad + 4 * line};
  }
  int w = 0;
  const auto entries = graph_legend_entries();
  for (const auto& [name, colour] : entries) w = std::max(w, fm.horizontalAdvance(name));
  const int line = std::max(fm.height(), kSwatch) + 2;
  return {2 * kPad + kSwatch + 6 + w, 2 * kPad + line * static_cast<int>(entries.size())};
}

void GraphLegend::paintEvent(QPaintEvent*) {
  QPainter p(this);
  QColor back = palette().color(QPalette::Window);
  back.setAlpha(220);
  p.setPen(palette().color(QPalette::Mid));
  p.setBrush(back);
  p.drawRoundedRect(rect().adjusted(0, 0, -1, -1), 4, 4);
  if (overlay_) return paintOverlay(p);
  const QFontMetrics fm(font());
  const int line = std::max(fm.height(), kSwatch) + 2;
  int y = kPad;
  for (const auto& [name, colour] : graph_legend_entries()) {
    p.setPen(colour.darker(150));
    p.setBrush(colour);
    p.drawRect(kPad, y + (line - kSwatch) / 2, kSwatch, kSwatch);
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(kPad + kSwatch + 6, y, width(), line), Qt::AlignVCenter | Qt::AlignLeft, name);
    y += line;
  }
}

void GraphLegend::paintOverlay(QPainter& p) {
  const QFontMetrics fm(font());
  const int line = std::max(fm.height(), kSwatch) + 2;
  const int w = width() - 2 * kPad;
  const QColor text = palette().color(QPalette::WindowText);
  p.setPen(text);
  p.drawText(QRect(kPad, kPad, w, line), Qt::AlignVCenter | Qt::AlignLeft,
             QString::fromStdString(overlay_->title));
  auto swatch = [&](int y, const QColor& fill, const QString& name) {
    p.setPen(fill.darker(150));
    p.setBrush(fill);
    p.drawRect(kPad, y + (line - kSwatch) / 2, kSwatch, kSwatch);
    p.setPen(text);
    p.drawText(QRect(kPad + kSwatch + 6, y, w, line), Qt::AlignVCenter | Qt::AlignLeft, name);
  };
  if (overlay_->categorical()) {
    int y = kPad + line;
    for (size_t k = 0; k < overlay_->categories.size(); ++k, y += line)
      swatch(y, overlay_category_fill(static_cast<double>(k)),
             QString::fromStdString(overlay_->categories[k]));
    swatch(y, overlay_category_fill(NodeOverlay::kMixed), tr("mixed (a box over several)"));
    swatch(y + line, overlay_missing_fill(), tr("not placed"));
    return;
  }
  const double top = overlay_->max_abs();
  const double lo = overlay_->diverging ? -top : 0;
  const QRect bar(kPad, kPad + line + 2, w, kSwatch);
  for (int x = 0; x < bar.width(); ++x) {
    const double v = lo + (top - lo) * (x + 0.5) / bar.width();
    p.setPen(overlay_fill(v, top, overlay_->diverging));
    p.drawLine(bar.left() + x, bar.top(), bar.left() + x, bar.bottom());
  }
  p.setPen(text);
  const int ends = kPad + 2 * line;
  p.drawText(QRect(kPad, ends, w, line), Qt::AlignVCenter | Qt::AlignLeft,
             QString::fromStdString(overlay_value_text(*overlay_, lo)));
  p.drawText(QRect(kPad, ends, w, line), Qt::AlignVCenter | Qt::AlignRight,
             QString::fromStdString(overlay_value_text(*overlay_, top)));
  swatch(ends + line, overlay_missing_fill(), tr("not in this run"));
}

}  // namespace sod2::studio
