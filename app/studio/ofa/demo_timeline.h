// The live timeline of a Dynamic-OFA demo run: every inference a dot at its time and latency,
// coloured by variant, over the budget line and the shaded interval of the competing load.
#pragma once

#include <QWidget>
#include <optional>
#include <vector>

#include "runtime/family/family_demo.h"

namespace sod2::studio {

class DemoTimeline : public QWidget {
  Q_OBJECT

 public:
  explicit DemoTimeline(QWidget* parent = nullptr);
  void start(double duration_s, double budget_ms, std::optional<rt::LoadSchedule> load,
             QStringList variant_names);
  void add(const rt::DemoPoint& p);
  const std::vector<rt::DemoPoint>& points() const { return points_; }
  QSize sizeHint() const override { return {700, 220}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  std::vector<rt::DemoPoint> points_;
  double duration_s_ = 1, budget_ms_ = 0;
  std::optional<rt::LoadSchedule> load_;
  QStringList names_;
};

}  // namespace sod2::studio
