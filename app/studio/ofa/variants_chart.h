// The variants as points: measured latency across, MACs (or accuracy) up; the Pareto front joined
// by a line, the current variant ringed, the budget as a vertical line.
#pragma once

#include <QWidget>

#include "app/studio/ofa/variants_model.h"

namespace sod2::studio {

class VariantsChart : public QWidget {
  Q_OBJECT

 public:
  explicit VariantsChart(const VariantsModel* model, QWidget* parent = nullptr);
  void setBudget(double ms);  // <= 0: none
  QSize sizeHint() const override { return {420, 300}; }

 protected:
  void paintEvent(QPaintEvent*) override;

 private:
  const VariantsModel* model_;
  double budget_ms_ = 0;
};

// A stable colour per variant index, shared by the chart, the timeline and the table.
QColor variant_color(int index);

}  // namespace sod2::studio
