#include "app/studio/plan/timeline_view.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include <QEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QImage>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

namespace sod2::studio {
namespace {

// Room around the plot for the step labels (bottom) and the line labels; the byte labels' room
// (left) is measured (TimelineView::byteAxisWidth).
constexpr int kTickLength = 4;
constexpr int kLabelGap = 6;  // between a byte label and its tick
constexpr int kRightMargin = 12;
constexpr int kTopMargin = 8;
constexpr int kBottomMargin = 22;
constexpr int kClickSlop = 3;  // pixels a press may move and still count as a click
constexpr double kWheelZoomPerNotch = 1.25;

// Pixel coordinates are clamped a little outside the plot before they become ints: far zoomed
// in, a tensor's edge can lie billions of pixels away.
int clamp_px(double v, double lo, double hi) {
  return static_cast<int>(std::lround(std::clamp(v, lo - 16, hi + 16)));
}

// Golden-angle hues: neighbours in index (usually neighbours in the graph) differ clearly. The
// 360 colours are made once: QColor's HSV conversions cost ~2 us, 100 ms over 50,000 tensors.
struct TensorColours {
  std::array<QColor, 360> fill, tiny;
  TensorColours() {
    for (int hue = 0; hue < 360; ++hue) {
      fill[static_cast<size_t>(hue)] = QColor::fromHsv(hue, 80, 235);
      tiny[static_cast<size_t>(hue)] = fill[static_cast<size_t>(hue)].darker(115);
    }
  }
};
const TensorColours& tensor_colours() {
  static const TensorColours colours;
  return colours;
}
size_t hue_of(int tensor) {
  return static_cast<size_t>((static_cast<int64_t>(tensor) * 137) % 360);
}
const QColor& fill_of(int tensor) { return tensor_colours().fill[hue_of(tensor)]; }
// A box too small for a border: a darker fill stands out from the background.
const QColor& tiny_fill_of(int tensor) { return tensor_colours().tiny[hue_of(tensor)]; }

// A tick spacing from 1, 2, 5 × 10^k at least `min` apart.
double nice_step_spacing(double min) {
  double p = std::pow(10.0, std::floor(std::log10(std::max(min, 1e-12))));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= min) return m * p;
  return 10 * p;
}

// A byte spacing that is a power of two (labels come out as round KiB/MiB).
double nice_byte_spacing(double min) {
  return std::pow(2.0, std::ceil(std::log2(std::max(min, 1.0))));
}

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setAttribute(Qt::WA_OpaquePaintEvent);
  syncViewportSize();
}

int TimelineView::byteAxisWidth() const {
  // The widest label the axis shows: that of the plan's largest byte count (an arena of
  // 433152.0 TiB had its labels clipped by a fixed 72 px), or one just below a unit's end. From
  // the model only, so panning does not move the plot.
  const QFontMetrics fm(font());
  const int widest = std::max(fm.horizontalAdvance(QString::fromStdString(human_bytes(fitBytes()))),
                              fm.horizontalAdvance(QStringLiteral("1023.9 MiB")));
  return widest + kLabelGap + kTickLength;
}

QRect TimelineView::plotRect() const {
  const int left = byteAxisWidth();
  return QRect(left, kTopMargin, std::max(1, width() - left - kRightMargin),
               std::max(1, height() - kTopMargin - kBottomMargin));
}

void TimelineView::syncViewportSize() {
  const QRect plot = plotRect();
  viewport_.resize(plot.width(), plot.height());
}

int64_t TimelineView::fitBytes() const {
  if (!model_) return std::max<int64_t>(fit_bytes_, 1);
  return std::max({model_->arena_bytes(), model_->lower_bound_bytes(), model_->peak_live_bytes(),
                   fit_bytes_, int64_t{1}});
}

void TimelineView::setFitBytes(int64_t bytes) {
  fit_bytes_ = std::max<int64_t>(bytes, 0);
  fitToView();
}

void TimelineView::setModel(const TimelineModel* model) {
  model_ = model;
  selected_ = -1;
  hovered_ = -1;
  fitToView();
}

void TimelineView::modelUpdated() {
  if (model_ && selected_ >= static_cast<int>(model_->rects().size())) selected_ = -1;
  hovered_ = -1;
  // New sizes may need a wider byte axis: the plot narrows, and a fitted view fits again.
  if (plotRect().width() != viewport_.width) {
    syncViewportSize();
    if (fitted_) viewport_.fit(model_ ? model_->num_steps() : 1, fitBytes());
  }
  update();
}

void TimelineView::fitToView() {
  syncViewportSize();
  viewport_.fit(model_ ? model_->num_steps() : 1, fitBytes());
  fitted_ = true;
  update();
}

void TimelineView::zoomBy(double factor_x, double factor_y) {
  fitted_ = false;
  viewport_.zoom_at(viewport_.width / 2, viewport_.height / 2, factor_x, factor_y);
  update();
}

std::optional<int> TimelineView::tensorAt(QPoint widget_pos) const {
  if (!model_) return std::nullopt;
  const QRect plot = plotRect();
  if (!plot.contains(widget_pos)) return std::nullopt;
  const double x = widget_pos.x() - plot.left() + 0.5;
  const double y = widget_pos.y() - plot.top() + 0.5;
  return model_->hit(viewport_.step_at(x), viewport_.offset_at(y));
}

void TimelineView::highlightTensor(int tensor) {
  selected_ =
      model_ && tensor >= 0 && tensor < static_cast<int>(model_->rects().size()) ? tensor : -1;
  if (selected_ >= 0) {
    // Bring it into view, centred, at the current zoom.
    const TimelineRect& r = model_->rects()[static_cast<size_t>(selected_)];
    const double mid_step = (static_cast<double>(r.first_step) + r.last_step + 1) / 2;
    const double mid_offset = static_cast<double>(r.offset) + static_cast<double>(r.size) / 2;
    const bool visible = mid_step >= viewport_.first_visible_step() &&
                         mid_step <= viewport_.last_visible_step() &&
                         mid_offset >= viewport_.lowest_visible_offset() &&
                         mid_offset <= viewport_.highest_visible_offset();
    if (!visible) {
      fitted_ = false;
      viewport_.pan_pixels(viewport_.width / 2 - viewport_.x_of(mid_step),
                           viewport_.height / 2 - viewport_.y_of(mid_offset));
    }
  }
  update();
}

void TimelineView::paintEvent(QPaintEvent* /*event*/) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  const QRect plot = plotRect();
  last_painted_ = 0;
  if (!model_) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No memory plan"));
    return;
  }
  const TimelineViewport& vp = viewport_;
  const double w = vp.width, h = vp.height;
  const QFontMetrics fm(font());

  p.save();
  p.setClipRect(plot);
  p.translate(plot.topLeft());

  // The peak steps: contiguous runs drawn as one band each, under the tensors.
  const std::vector<int64_t>& peaks = model_->peak_steps();
  const QColor peak_color(255, 120, 100, 60);
  // Runs that meet on screen are merged first: zoomed out, thousands of peak steps a few steps
  // apart each cost a translucent full-height fill (~150 ms at 50,000 steps).
  int band_x0 = -1, band_x1 = -1;
  auto flush_band = [&] {
    if (band_x0 >= 0) p.fillRect(QRect(band_x0, 0, band_x1 - band_x0, plot.height()), peak_color);
  };
  for (size_t i = 0; i < peaks.size();) {
    size_t j = i;
    while (j + 1 < peaks.size() && peaks[j + 1] == peaks[j] + 1) ++j;
    const int x0 = clamp_px(vp.x_of(static_cast<double>(peaks[i])), 0, w);
    const int x1 = std::max(x0 + 1, clamp_px(vp.x_of(static_cast<double>(peaks[j] + 1)), 0, w));
    i = j + 1;
    if (x1 < 0 || x0 > w) continue;
    if (band_x0 >= 0 && x0 <= band_x1) {
      band_x1 = std::max(band_x1, x1);
      continue;
    }
    flush_band();
    band_x0 = x0;
    band_x1 = x1;
  }
  flush_band();

  // The tensors in view only. Tiny ones still get one pixel so a zoomed-out plan shows its shape.
  const QColor border(60, 60, 60);
  const auto& rects = model_->rects();
  auto box_of = [&](const TimelineRect& r) {
    const int x0 = clamp_px(vp.x_of(static_cast<double>(r.first_step)), 0, w);
    const int x1 = clamp_px(vp.x_of(static_cast<double>(r.last_step + 1)), 0, w);
    const int y0 = clamp_px(vp.y_of(static_cast<double>(r.offset + r.size)), 0, h);
    const int y1 = clamp_px(vp.y_of(static_cast<double>(r.offset)), 0, h);
    return QRect(x0, y0, std::max(1, x1 - x0), std::max(1, y1 - y0));
  };
  // Zoomed out, tens of thousands of tensors are a pixel wide: those are written straight into
  // one image, drawn under the others (50,000 one-pixel QPainter fills took ~130 ms; tensors
  // never share bytes while both are live, so only rounding makes boxes overlap).
  const int grid_w = std::max(0, static_cast<int>(w)), grid_h = std::max(0, static_cast<int>(h));
  QImage tiny(grid_w, grid_h, QImage::Format_ARGB32_Premultiplied);
  tiny.fill(Qt::transparent);
  auto is_tiny = [](const QRect& box) { return box.width() <= 4 || box.height() <= 4; };
  const auto visit = [&](const std::function<void(int, const QRect&)>& paint) {
    model_->index().visit_in(vp.first_visible_step(), vp.last_visible_step(),
                             vp.lowest_visible_offset(), vp.highest_visible_offset(),
                             [&](int t) { paint(t, box_of(rects[static_cast<size_t>(t)])); });
  };
  visit([&](int t, const QRect& box) {
    ++last_painted_;
    if (!is_tiny(box) || tiny.isNull()) return;
    const QRgb colour = tiny_fill_of(t).rgba();
    const QRect clipped = box.intersected(QRect(0, 0, grid_w, grid_h));
    for (int y = clipped.top(); y <= clipped.bottom(); ++y) {
      auto* line = reinterpret_cast<QRgb*>(tiny.scanLine(y));
      std::fill(line + clipped.left(), line + clipped.right() + 1, colour);
    }
  });
  if (!tiny.isNull()) p.drawImage(0, 0, tiny);
  visit([&](int t, const QRect& box) {
    if (is_tiny(box)) return;
    const TimelineRect& r = rects[static_cast<size_t>(t)];
    p.fillRect(box, border);
    p.fillRect(box.adjusted(1, 1, -1, -1), fill_of(t));
    if (box.width() > 60 && box.height() > fm.height() + 2) {
      p.setPen(Qt::black);
      // Names differ at their end ("/encoder/layers.3/..."): elided in the middle.
      p.drawText(box.adjusted(3, 1, -3, -1), Qt::AlignLeft | Qt::AlignVCenter,
                 fm.elidedText(QString::fromStdString(r.name), Qt::ElideMiddle, box.width() - 6));
    }
  });

  // Hovered and selected tensors on top, outlined.
  for (const auto& [t, color, width] : {std::tuple{hovered_, QColor(30, 30, 30), 1},
                                        std::tuple{selected_, QColor(0, 90, 255), 2}}) {
    if (t < 0 || t >= static_cast<int>(rects.size())) continue;
    p.setPen(QPen(color, width));
    p.setBrush(Qt::NoBrush);
    p.drawRect(box_of(rects[static_cast<size_t>(t)]).adjusted(0, 0, -1, -1));
  }

  // The arena size and the lower bound, labelled at the right end of the line.
  // A fitted plan has its arena at the plot's top edge: a label that has no room above its line
  // goes below it, and a label that would cover the previous one moves down past it.
  QRect previous_label;
  auto hline = [&](int64_t bytes, const QColor& color, const QString& label, bool above) {
    const int y = clamp_px(vp.y_of(static_cast<double>(bytes)), 0, h);
    p.setPen(QPen(color, 1, Qt::DashLine));
    p.drawLine(0, y, plot.width(), y);
    const QString text = label + " " + QString::fromStdString(human_bytes(bytes));
    const int tw = fm.horizontalAdvance(text);
    int ty = above ? y - fm.descent() - 2 : y + fm.ascent() + 2;
    if (ty - fm.ascent() < 0) ty = y + fm.ascent() + 2;
    QRect box(plot.width() - tw - 8, ty - fm.ascent(), tw + 4, fm.height());
    if (box.intersects(previous_label)) box.moveTop(previous_label.bottom() + 1);
    previous_label = box;
    p.fillRect(box, QColor(255, 255, 255, 200));
    p.setPen(color);
    p.drawText(plot.width() - tw - 6, box.top() + fm.ascent(), text);
  };
  hline(model_->arena_bytes(), QColor(200, 30, 30), tr("arena"), true);
  hline(model_->lower_bound_bytes(), QColor(20, 120, 20), tr("lower bound"), false);
  p.restore();

  // Axes: steps below the plot, bytes to its left.
  p.setPen(palette().color(QPalette::Text));
  p.drawRect(plot.adjusted(0, 0, -1, -1));
  const double step_tick = nice_step_spacing(std::max(1.0, 70 / vp.px_per_step));
  for (double s = std::ceil(vp.first_visible_step() / step_tick) * step_tick;
       s <= vp.last_visible_step(); s += step_tick) {
    const int x = plot.left() + clamp_px(vp.x_of(s), 0, w);
    p.drawLine(x, plot.bottom(), x, plot.bottom() + 4);
    p.drawText(x + 2, plot.bottom() + 4 + fm.ascent(), QString::number(static_cast<int64_t>(s)));
  }
  const double byte_tick = nice_byte_spacing(std::max(1.0, 2.5 * fm.height() / vp.px_per_byte));
  for (double b = std::max(0.0, std::ceil(vp.lowest_visible_offset() / byte_tick) * byte_tick);
       b <= vp.highest_visible_offset(); b += byte_tick) {
    const int y = plot.top() + clamp_px(vp.y_of(b), 0, h);
    p.drawLine(plot.left() - kTickLength, y, plot.left(), y);
    const QString label = QString::fromStdString(human_bytes(static_cast<int64_t>(b)));
    p.drawText(QRect(0, y - fm.height() / 2, plot.left() - kLabelGap, fm.height()),
               Qt::AlignRight | Qt::AlignVCenter, label);
  }
}

void TimelineView::resizeEvent(QResizeEvent* /*event*/) {
  // A view still showing the whole plan keeps showing it: docks are laid out after setModel, so
  // the first fit usually happens at a placeholder size.
  const bool refit = fitted_ || viewport_.width <= 1;
  syncViewportSize();
  if (refit) viewport_.fit(model_ ? model_->num_steps() : 1, fitBytes());
}

void TimelineView::wheelEvent(QWheelEvent* event) {
  const QRect plot = plotRect();
  const QPointF pos = event->position() - QPointF(plot.topLeft());
  const QPoint delta = event->angleDelta();
  const Qt::KeyboardModifiers mods = event->modifiers();
  if (mods & Qt::ControlModifier) {
    const double notches = (delta.y() != 0 ? delta.y() : delta.x()) / 120.0;
    const double f = std::pow(kWheelZoomPerNotch, notches);
    const bool steps_only = mods & Qt::ShiftModifier;
    const bool bytes_only = mods & Qt::AltModifier;
    fitted_ = false;
    viewport_.zoom_at(pos.x(), pos.y(), bytes_only ? 1 : f, steps_only ? 1 : f);
  } else if ((mods & Qt::ShiftModifier) || delta.x() != 0) {
    fitted_ = false;
    viewport_.pan_pixels(delta.x() != 0 ? delta.x() / 2.0 : delta.y() / 2.0, 0);
  } else {
    fitted_ = false;
    viewport_.pan_pixels(0, delta.y() / 2.0);
  }
  event->accept();
  update();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return QWidget::mousePressEvent(event);
  dragging_ = true;
  moved_ = false;
  press_pos_ = last_pos_ = event->position().toPoint();
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (dragging_) {
    if ((pos - press_pos_).manhattanLength() > kClickSlop) moved_ = true;
    if (moved_) {
      fitted_ = false;
      viewport_.pan_pixels(pos.x() - last_pos_.x(), pos.y() - last_pos_.y());
      setCursor(Qt::ClosedHandCursor);
    }
    last_pos_ = pos;
    update();
    return;
  }
  const int hovered = tensorAt(pos).value_or(-1);
  if (hovered != hovered_) {
    hovered_ = hovered;
    update();
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !dragging_) return QWidget::mouseReleaseEvent(event);
  dragging_ = false;
  unsetCursor();
  if (moved_) return;
  const std::optional<int> hit = tensorAt(event->position().toPoint());
  selected_ = hit.value_or(-1);
  update();
  if (hit) emit tensorClicked(*hit, model_->rects()[static_cast<size_t>(*hit)].producer);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* /*event*/) { fitToView(); }

void TimelineView::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Home: fitToView(); return;
    case Qt::Key_Plus:
    case Qt::Key_Equal: zoomBy(kWheelZoomPerNotch, kWheelZoomPerNotch); return;
    case Qt::Key_Minus: zoomBy(1 / kWheelZoomPerNotch, 1 / kWheelZoomPerNotch); return;
    default: QWidget::keyPressEvent(event);
  }
}

void TimelineView::leaveEvent(QEvent* event) {
  if (hovered_ >= 0) {
    hovered_ = -1;
    update();
  }
  QWidget::leaveEvent(event);
}

bool TimelineView::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const std::optional<int> hit = tensorAt(help->pos());
    if (hit && model_) {
      QToolTip::showText(help->globalPos(), QString::fromStdString(model_->tooltip_text(*hit)),
                         this);
    } else {
      QToolTip::hideText();
      event->ignore();
    }
    return true;
  }
  return QWidget::event(event);
}

void TimelineView::documentChanged(const std::shared_ptr<const OpenDocument>&,
                                   const std::shared_ptr<const BoundDocument>&,
                                   const TimelineModel* timeline) {
  setModel(timeline);
}

void TimelineView::bindingChanged(const std::shared_ptr<const BoundDocument>&,
                                  const TimelineModel* timeline) {
  // The same model rebound in place keeps the view's zoom and scroll.
  if (timeline == model())
    modelUpdated();
  else
    setModel(timeline);
}

void TimelineView::selectionChanged(const PageSelection& selection) {
  if (!model_ || selection.nodes.empty()) return;
  const NodeId last = selection.nodes.back();
  for (size_t r = 0; r < model_->rects().size(); ++r) {
    if (model_->rects()[r].producer == last) {
      highlightTensor(static_cast<int>(r));
      return;
    }
  }
}

}  // namespace sod2::studio
