#include "app/studio/graph/graph_legend.h"

#include <QPainter>

#include "app/studio/graph/graph_style.h"

namespace sod2::studio {
namespace {

constexpr int kPad = 6;
constexpr int kSwatch = 12;

}  // namespace

GraphLegend::GraphLegend(QWidget* parent) : QWidget(parent) {
  setAttribute(Qt::WA_TransparentForMouseEvents);  // never steals a click from the graph
  resize(sizeHint());
}

QSize GraphLegend::sizeHint() const {
  const QFontMetrics fm(font());
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

}  // namespace sod2::studio
