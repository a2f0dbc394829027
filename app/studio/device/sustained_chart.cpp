#include "app/studio/device/sustained_chart.h"

#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/status/byte_size.h"
#include "core/text/text_table.h"

namespace sod2::studio {
namespace {

const QColor kP50(0x2b, 0x6c, 0xb0);
const QColor kP99(0x8e, 0x44, 0xad);
const QColor kHeat(0xd3, 0x54, 0x00);

// A round step for an axis covering [0, hi]: about four ticks.
double tick_step(double hi) {
  if (hi <= 0) return 1;
  const double raw = hi / 4;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

QString percent_text(double from, double to) {
  return QString::fromStdString(text::percent_change(from, to));
}

}  // namespace

class SustainedPlot : public QWidget {
 public:
  explicit SustainedPlot(SustainedChart* chart) : QWidget(chart), chart_(chart) {
    setMinimumHeight(150);
    setMouseTracking(true);
  }

 protected:
  QRectF area() const { return QRectF(rect()).adjusted(52, 10, -52, -26); }

  double end_s() const {
    const auto& run = chart_->run();
    if (!run || run->windows.empty()) return 1;
    return std::max({run->windows.back().end_s, run->duration_s, 1e-3});
  }

  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    const auto& run = chart_->run();
    if (!run || run->windows.empty()) return;
    const QRectF a = area();
    double hi_ms = 0, lo_c = 1e9, hi_c = -1e9;
    bool heat = false;
    for (const store::WindowRecord& w : run->windows) {
      if (w.runs > 0) hi_ms = std::max(hi_ms, w.p99_ms);
      const profiling::WindowSensors s = profiling::window_sensors(w);
      if (!s.hottest.empty()) {
        heat = true;
        lo_c = std::min(lo_c, s.hottest_max_c);
        hi_c = std::max(hi_c, s.hottest_max_c);
      }
    }
    const double ms_step = tick_step(hi_ms * 1.1);
    const double ms_top = std::max(ms_step, std::ceil(hi_ms * 1.1 / ms_step) * ms_step);
    // Temperatures on their own axis, from a round value below the coolest.
    const double c_lo = heat ? std::floor(lo_c / 5) * 5 - 5 : 0;
    const double c_hi = heat ? std::ceil(hi_c / 5) * 5 + 5 : 1;
    const double t_end = end_s();
    const auto x_of = [&](double t) { return a.left() + a.width() * t / t_end; };
    const auto y_ms = [&](double v) { return a.bottom() - a.height() * v / ms_top; };
    const auto y_c = [&](double v) { return a.bottom() - a.height() * (v - c_lo) / (c_hi - c_lo); };

    const QColor text = palette().color(QPalette::Text);
    const QColor grid = palette().color(QPalette::Mid);
    p.setFont(font());
    for (double v = 0; v <= ms_top + 1e-9; v += ms_step) {
      p.setPen(QPen(grid, 0, Qt::DotLine));
      p.drawLine(QPointF(a.left(), y_ms(v)), QPointF(a.right(), y_ms(v)));
      p.setPen(text);
      p.drawText(QRectF(0, y_ms(v) - 8, a.left() - 4, 16), Qt::AlignRight | Qt::AlignVCenter,
                 QString::number(v, 'g', 4));
    }
    p.drawText(QRectF(0, a.top() - 10, a.left(), 12), Qt::AlignLeft, tr("ms"));
    if (heat) {
      p.setPen(kHeat);
      for (double v = c_lo; v <= c_hi + 1e-9; v += std::max(5.0, tick_step(c_hi - c_lo)))
        p.drawText(QRectF(a.right() + 4, y_c(v) - 8, 48, 16), Qt::AlignLeft | Qt::AlignVCenter,
                   tr("%1 °C").arg(v, 0, 'f', 0));
    }
    p.setPen(text);
    p.drawText(QRectF(a.left(), a.bottom() + 8, a.width(), 16), Qt::AlignLeft, tr("0 s"));
    p.drawText(QRectF(a.left(), a.bottom() + 8, a.width(), 16), Qt::AlignRight,
               tr("%1 s").arg(t_end, 0, 'f', t_end < 10 ? 1 : 0));

    // Each series steps across its window; a window without runs breaks the latency lines.
    const auto series = [&](auto value, auto y, bool (*has)(const store::WindowRecord&),
                            const QPen& pen) {
      QPainterPath path;
      bool open = false;
      for (const store::WindowRecord& w : run->windows) {
        if (!has(w)) {
          open = false;
          continue;
        }
        const double v = y(value(w));
        if (!open)
          path.moveTo(x_of(w.start_s), v);
        else
          path.lineTo(x_of(w.start_s), v);
        path.lineTo(x_of(w.end_s), v);
        open = true;
      }
      p.setPen(pen);
      p.setBrush(Qt::NoBrush);
      p.drawPath(path);
    };
    const auto ran = [](const store::WindowRecord& w) { return w.runs > 0; };
    series([](const store::WindowRecord& w) { return w.p99_ms; }, y_ms, +ran,
           QPen(kP99, 1.5, Qt::DashLine));
    series([](const store::WindowRecord& w) { return w.p50_ms; }, y_ms, +ran, QPen(kP50, 2));
    if (heat) {
      series(
          [](const store::WindowRecord& w) { return profiling::window_sensors(w).hottest_max_c; },
          y_c,
          +[](const store::WindowRecord& w) {
            return !profiling::window_sensors(w).hottest.empty();
          },
          QPen(kHeat, 1.5));
    }
    // Legend, top left inside the plot.
    double lx = a.left() + 6;
    const auto legend = [&](const QColor& c, const QString& label, Qt::PenStyle style) {
      p.setPen(QPen(c, 2, style));
      p.drawLine(QPointF(lx, a.top() + 8), QPointF(lx + 16, a.top() + 8));
      p.setPen(text);
      const double w = p.fontMetrics().horizontalAdvance(label);
      p.drawText(QRectF(lx + 20, a.top(), w + 4, 16), Qt::AlignLeft | Qt::AlignVCenter, label);
      lx += 20 + w + 14;
    };
    legend(kP50, tr("p50"), Qt::SolidLine);
    legend(kP99, tr("p99"), Qt::DashLine);
    if (heat) legend(kHeat, tr("hottest zone"), Qt::SolidLine);
  }

  bool event(QEvent* e) override {
    if (e->type() != QEvent::ToolTip) return QWidget::event(e);
    auto* help = static_cast<QHelpEvent*>(e);
    const auto& run = chart_->run();
    const QRectF a = area();
    if (!run || !a.contains(help->pos())) {
      QToolTip::hideText();
      return true;
    }
    const double t = (help->pos().x() - a.left()) / a.width() * end_s();
    for (size_t i = 0; i < run->windows.size(); ++i) {
      const store::WindowRecord& w = run->windows[i];
      if (t >= w.start_s && t <= w.end_s) {
        QToolTip::showText(help->globalPos(), chart_->windowText(i), this);
        return true;
      }
    }
    QToolTip::hideText();
    return true;
  }

 private:
  SustainedChart* chart_;
};

SustainedChart::SustainedChart(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  plot_ = new SustainedPlot(this);
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  caption_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(plot_, 1);
  layout->addWidget(caption_);
  hide();
}

void SustainedChart::setRun(std::optional<profiling::SustainedRun> run) {
  run_ = std::move(run);
  const bool shown = run_ && !run_->windows.empty();
  setVisible(shown);
  caption_->setText(shown ? captionText() : QString());
  plot_->update();
}

QString SustainedChart::windowText(size_t index) const {
  if (!run_ || index >= run_->windows.size()) return {};
  const store::WindowRecord& w = run_->windows[index];
  QString s = tr("window %1: %2–%3 s, %4 runs")
                  .arg(index)
                  .arg(w.start_s, 0, 'f', 1)
                  .arg(w.end_s, 0, 'f', 1)
                  .arg(w.runs);
  if (w.runs > 0)
    s += tr("\np50 %1 ms, p90 %2, p99 %3, max %4")
             .arg(w.p50_ms, 0, 'f', 3)
             .arg(w.p90_ms, 0, 'f', 3)
             .arg(w.p99_ms, 0, 'f', 3)
             .arg(w.max_ms, 0, 'f', 3);
  s += tr("\nagent RSS %1").arg(QString::fromStdString(human_bytes(w.rss_bytes)));
  const profiling::WindowSensors sensors = profiling::window_sensors(w);
  if (!sensors.hottest.empty())
    s += tr("\nhottest: %1 at %2 °C (mean %3)")
             .arg(QString::fromStdString(sensors.hottest))
             .arg(sensors.hottest_max_c, 0, 'f', 1)
             .arg(sensors.hottest_mean_c, 0, 'f', 1);
  if (sensors.cpus > 0)
    s += tr("\nCPU %1 MHz mean over %2 CPUs (%3–%4)")
             .arg(sensors.cpu_mean_mhz, 0, 'f', 0)
             .arg(sensors.cpus)
             .arg(sensors.cpu_min_mhz, 0, 'f', 0)
             .arg(sensors.cpu_max_mhz, 0, 'f', 0);
  return s;
}

QString SustainedChart::captionText() const {
  if (!run_ || run_->windows.empty()) return {};
  QString s = tr("<b>Sustained run</b>: %1 s of %2 s, %3 windows, %4 runs%5")
                  .arg(run_->windows.back().end_s, 0, 'f', 1)
                  .arg(run_->duration_s, 0, 'f', 1)
                  .arg(run_->windows.size())
                  .arg(run_->total_runs())
                  .arg(run_->stopped_early ? tr(" (stopped early)") : QString());
  const auto [first, last] = run_->cold_and_last();
  if (first) {
    s += tr("<br>cold → last window: p50 %1 → %2 ms (%3), p99 %4 → %5 ms (%6)")
             .arg(first->p50_ms, 0, 'f', 3)
             .arg(last->p50_ms, 0, 'f', 3)
             .arg(percent_text(first->p50_ms, last->p50_ms))
             .arg(first->p99_ms, 0, 'f', 3)
             .arg(last->p99_ms, 0, 'f', 3)
             .arg(percent_text(first->p99_ms, last->p99_ms));
    const profiling::WindowSensors a = profiling::window_sensors(*first);
    const profiling::WindowSensors b = profiling::window_sensors(*last);
    if (!a.hottest.empty() && !b.hottest.empty())
      s += tr(", hottest %1 → %2 °C")
               .arg(a.hottest_max_c, 0, 'f', 1)
               .arg(b.hottest_max_c, 0, 'f', 1);
    if (a.cpus > 0 && b.cpus > 0)
      s += tr(", CPU %1 → %2 MHz").arg(a.cpu_mean_mhz, 0, 'f', 0).arg(b.cpu_mean_mhz, 0, 'f', 0);
    const std::vector<profiling::GroupDrift> drift = profiling::group_drift(*run_);
    if (!drift.empty() && drift.front().delta_ms() > 0)
      s += tr("; slowed most: %1 (%2)")
               .arg(QString::fromStdString(drift.front().label).toHtmlEscaped())
               .arg(percent_text(drift.front().first_ms, drift.front().last_ms));
  }
  if (!run_->unreadable_sensors.empty()) {
    QStringList notes;
    for (const std::string& u : run_->unreadable_sensors)
      notes << QString::fromStdString(u).toHtmlEscaped();
    s += tr("<br>not read on this device: %1").arg(notes.join("; "));
  }
  return s;
}

}  // namespace sod2::studio
