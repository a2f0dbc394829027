// The colour key drawn over the graph view's top-left corner. A widget on top of the viewport
// rather than a scene item, so it stays put and readable while the scene pans and zooms.
#pragma once

#include <QWidget>

namespace sod2::studio {

class GraphLegend : public QWidget {
  Q_OBJECT

 public:
  explicit GraphLegend(QWidget* parent = nullptr);
  QSize sizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* e) override;
};

}  // namespace sod2::studio
