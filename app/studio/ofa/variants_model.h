// The variants table of the studio's Dynamic-OFA view: each variant of a family with its MACs,
// parameters, accuracy (when the family file gives it), measured latency and where that came
// from, whether it is on the latency-MACs (or accuracy) Pareto front, and how often the last demo
// ran it. Rows are small to large, as the family session orders them. Headless.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <cmath>
#include <cstdint>
#include <vector>

namespace sod2::studio {

struct VariantRow {
  QString name;
  uint64_t macs = 0, params = 0;
  bool has_accuracy = false;
  double accuracy = 0;
  double latency_ms = std::nan("");  // NaN: not measured yet
  QString source;                    // "profile #12", "warm-up"
  bool on_front = false;
  int64_t demo_runs = 0;
};

class VariantsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kName, kMacs, kParams, kAccuracy, kLatency, kSource, kFront, kDemoRuns, kColumns };

  using QAbstractTableModel::QAbstractTableModel;

  void setVariants(std::vector<VariantRow> rows);
  // One latency per row; recomputes the front (by accuracy when every row has one, else MACs).
  void setLatencies(const std::vector<double>& ms, const std::vector<QString>& sources);
  void setCurrent(int row);  // -1: none
  void setDemoRuns(const std::vector<int64_t>& runs);
  const std::vector<VariantRow>& rows() const { return rows_; }
  int current() const { return current_; }
  bool byAccuracy() const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<VariantRow> rows_;
  int current_ = -1;
};

}  // namespace sod2::studio
