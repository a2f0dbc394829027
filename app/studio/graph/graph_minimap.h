// The whole drawing in miniature over the graph view's bottom-right corner (issue #23: a
// minimap), with the part in view outlined; a click or drag there moves the view. Drawn from the
// layout's boxes straight into an image once per graph (50,000 nodes in a few milliseconds, no
// scene rendering), so it costs nothing while panning.
#pragma once

#include <QImage>
#include <QRectF>
#include <QWidget>
#include <functional>

#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"

namespace sod2::studio {

class GraphMinimap : public QWidget {
  Q_OBJECT

 public:
  explicit GraphMinimap(QWidget* parent = nullptr);

  // The drawing: every node's box in `fill(node)`; an empty graph hides the map.
  void setGraph(const DisplayGraph& graph, const GraphLayout& layout,
                const std::function<QColor(const DisplayNode&)>& fill);
  // The part of the scene in view, outlined.
  void setVisibleArea(const QRectF& scene_rect);
  // Scene point <-> map point (tests).
  QPointF toMap(const QPointF& scene) const;
  QPointF toScene(const QPointF& map) const;
  bool hasGraph() const { return !image_.isNull(); }

 signals:
  // A click or drag on the map: centre the view on this scene point.
  void centreRequested(QPointF scene);

 protected:
  void paintEvent(QPaintEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;

 private:
  static constexpr int kMaxSide = 180;
  QImage image_;
  QRectF scene_;  // what the image covers
  double scale_ = 1;
  QRectF visible_;
};

}  // namespace sod2::studio
