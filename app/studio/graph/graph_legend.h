// The colour key drawn over the graph view's top-left corner: the classes, or an overlay's scale. A
// widget on top of the viewport rather than a scene item, so it stays put and readable while the
// scene pans and zooms.
#pragma once

#include <QWidget>
#include <memory>

#include "app/studio/graph/node_overlay.h"

namespace sod2::studio {

class GraphLegend : public QWidget {
  Q_OBJECT

 public:
  explicit GraphLegend(QWidget* parent = nullptr);
  QSize sizeHint() const override;
  // With an overlay the key is its colour scale (title, ends, "not in this run"); without, the
  // classes.
  void setOverlay(std::shared_ptr<const NodeOverlay> overlay);

 protected:
  void paintEvent(QPaintEvent* e) override;

 private:
  void paintOverlay(QPainter& p);
  std::shared_ptr<const NodeOverlay> overlay_;
};

}  // namespace sod2::studio
