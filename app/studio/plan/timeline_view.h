// The memory-plan timeline widget (DESIGN §8): paints a TimelineModel — one rectangle per tensor
// at (steps it lives) × (bytes it holds), the arena and lower-bound lines, the peak steps as a
// shaded band — and turns input into zoom, pan, hover tooltips and selection. Everything it shows
// comes from the model; the pixel math is TimelineViewport's. Painting walks only the rectangles
// the RectIndex finds in view, so 10,000 tensors repaint in milliseconds.
//
// Input: Ctrl+wheel zooms both axes about the cursor (Ctrl+Shift+wheel steps only, Ctrl+Alt+wheel
// bytes only); wheel pans vertically, Shift+wheel horizontally; dragging pans; a click selects
// the tensor under the cursor; Home or a double click fits the whole plan.
#pragma once

#include <optional>

#include <QPoint>
#include <QRect>
#include <QWidget>

#include "app/studio/document/studio_page.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/plan/timeline_viewport.h"

namespace sod2::studio {

class TimelineView : public QWidget, public StudioPage {
  Q_OBJECT

 public:
  explicit TimelineView(QWidget* parent = nullptr);

  // Not owned; must outlive the view or be replaced first. nullptr shows an empty timeline.
  // Fits the whole plan into view.
  void setModel(const TimelineModel* model);
  const TimelineModel* model() const { return model_; }
  // The model's numbers changed (TimelineModel::rebind): repaint, keeping the zoom.
  void modelUpdated();
  // StudioPage (the Memory plan dock): the window's timeline at each binding.
  void documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                       const std::shared_ptr<const BoundDocument>& bound,
                       const TimelineModel* timeline) override;
  void bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                      const TimelineModel* timeline) override;
  // Highlights the tensor the selected node (a box's last member) writes.
  void selectionChanged(const PageSelection& selection) override;
  // Fitting shows at least this many bytes: two views given the same value draw bytes at the
  // same scale (side-by-side plans). 0: the model's own arena.
  void setFitBytes(int64_t bytes);

  const TimelineViewport& viewport() const { return viewport_; }
  // The plot area inside the widget (axes and labels around it).
  QRect plotRect() const;
  // The tensor under a widget position, if any.
  std::optional<int> tensorAt(QPoint widget_pos) const;
  int selectedTensor() const { return selected_; }
  // How many rectangles the last paint drew (culling keeps this to what is in view).
  int lastPaintedRects() const { return last_painted_; }

  QSize sizeHint() const override { return {800, 400}; }

 public slots:
  // Selects a tensor chosen in another view and brings it into view; -1 clears the selection.
  void highlightTensor(int tensor);
  void fitToView();
  // Zooms by `factor` about the plot's centre (toolbar buttons, tests).
  void zoomBy(double factor_x, double factor_y);

 signals:
  void tensorClicked(int tensor, sod2::NodeId producer);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;
  bool event(QEvent* event) override;

 private:
  void syncViewportSize();
  // The room left of the plot for the byte labels: the widest one that can show, measured.
  int byteAxisWidth() const;
  int64_t fitBytes() const;

  const TimelineModel* model_ = nullptr;
  TimelineViewport viewport_;
  int selected_ = -1;
  int hovered_ = -1;
  int64_t fit_bytes_ = 0;
  bool fitted_ = false;  // showing the whole plan: a resize fits again
  bool dragging_ = false;
  bool moved_ = false;
  QPoint press_pos_;
  QPoint last_pos_;
  int last_painted_ = 0;
};

}  // namespace sod2::studio
