#include "app/studio/graph/graph_minimap.h"

#include <QMouseEvent>
#include <QPainter>
#include <algorithm>
#include <cmath>

namespace sod2::studio {

GraphMinimap::GraphMinimap(QWidget* parent) : QWidget(parent) {
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("The whole graph; click or drag to move the view (View > Minimap hides it)"));
  hide();
}

void GraphMinimap::setGraph(const DisplayGraph& graph, const GraphLayout& layout,
                            const std::function<QColor(const DisplayNode&)>& fill) {
  image_ = QImage();
  if (layout.nodes.empty() || layout.nodes.size() != graph.nodes.size() || !(layout.width > 0) ||
      !(layout.height > 0)) {
    hide();
    return;
  }
  scene_ = QRectF(0, 0, layout.width, layout.height);
  scale_ = static_cast<double>(kMaxSide) / std::max(layout.width, layout.height);
  const int w = std::max(8, static_cast<int>(std::ceil(layout.width * scale_)));
  const int h = std::max(8, static_cast<int>(std::ceil(layout.height * scale_)));
  image_ = QImage(w, h, QImage::Format_ARGB32_Premultiplied);
  image_.fill(palette().color(QPalette::Base));
  // Each box at least a pixel, written directly: QPainter per box is ~2 us, too slow at 50,000.
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    const NodeBox& b = layout.nodes[i];
    const QRgb colour = fill(graph.nodes[i]).rgb();
    const int x0 = std::clamp(static_cast<int>((b.x - b.w / 2) * scale_), 0, w - 1);
    const int y0 = std::clamp(static_cast<int>((b.y - b.h / 2) * scale_), 0, h - 1);
    const int x1 = std::clamp(static_cast<int>((b.x + b.w / 2) * scale_), x0, w - 1);
    const int y1 = std::clamp(static_cast<int>((b.y + b.h / 2) * scale_), y0, h - 1);
    for (int y = y0; y <= y1; ++y) {
      auto* line = reinterpret_cast<QRgb*>(image_.scanLine(y));
      std::fill(line + x0, line + x1 + 1, colour);
    }
  }
  setFixedSize(w + 2, h + 2);
  show();
  update();
}

void GraphMinimap::setVisibleArea(const QRectF& scene_rect) {
  visible_ = scene_rect;
  update();
}

QPointF GraphMinimap::toMap(const QPointF& scene) const {
  return QPointF(1 + (scene.x() - scene_.left()) * scale_, 1 + (scene.y() - scene_.top()) * scale_);
}

QPointF GraphMinimap::toScene(const QPointF& map) const {
  return QPointF(scene_.left() + (map.x() - 1) / scale_, scene_.top() + (map.y() - 1) / scale_);
}

void GraphMinimap::paintEvent(QPaintEvent*) {
  if (image_.isNull()) return;
  QPainter p(this);
  p.drawImage(1, 1, image_);
  p.setPen(palette().color(QPalette::Mid));
  p.drawRect(rect().adjusted(0, 0, -1, -1));
  // The part in view, clipped to the map: a view larger than the drawing outlines all of it.
  const QRectF in_view =
      QRectF(toMap(visible_.topLeft()), toMap(visible_.bottomRight())).intersected(rect());
  if (in_view.isEmpty()) return;
  QColor outline(0x1f, 0x6f, 0xeb);
  p.setPen(QPen(outline, 1.5));
  outline.setAlpha(40);
  p.setBrush(outline);
  p.drawRect(in_view.adjusted(0.5, 0.5, -0.5, -0.5));
}

void GraphMinimap::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton || image_.isNull()) return QWidget::mousePressEvent(e);
  emit centreRequested(toScene(e->position()));
  e->accept();
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton) || image_.isNull()) return QWidget::mouseMoveEvent(e);
  emit centreRequested(toScene(e->position()));
  e->accept();
}

}  // namespace sod2::studio
