// A sustained run over time (`sod2 profile --duration` in the studio): per window its p50 and p99
// latency, and the hottest thermal zone on a second axis where the device exposes one; a window
// without runs is a gap. Hovering a window names its figures (runs, p50/p90/p99, RSS, the hottest
// zone, the CPUs' frequency). Below it, the cold window beside the last and what the device would
// not let the agent read.
#pragma once

#include <QWidget>
#include <optional>

#include "app/profiling/sustained_report.h"

class QLabel;

namespace sod2::studio {

class SustainedPlot;

class SustainedChart : public QWidget {
  Q_OBJECT

 public:
  explicit SustainedChart(QWidget* parent = nullptr);
  // Hides itself for a run without windows.
  void setRun(std::optional<profiling::SustainedRun> run);
  const std::optional<profiling::SustainedRun>& run() const { return run_; }
  // The caption under the plot: the cold window beside the last, the unread sensors.
  QString captionText() const;
  // What hovering window `index` shows.
  QString windowText(size_t index) const;

 private:
  std::optional<profiling::SustainedRun> run_;
  SustainedPlot* plot_ = nullptr;
  QLabel* caption_ = nullptr;
};

}  // namespace sod2::studio
