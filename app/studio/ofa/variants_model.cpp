#include "app/studio/ofa/variants_model.h"

#include <QFont>
#include <algorithm>

#include "app/ofa/family_profile.h"

namespace sod2::studio {

void VariantsModel::setVariants(std::vector<VariantRow> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  current_ = -1;
  endResetModel();
}

bool VariantsModel::byAccuracy() const {
  return !rows_.empty() && std::all_of(rows_.begin(), rows_.end(),
                                       [](const VariantRow& r) { return r.has_accuracy; });
}

void VariantsModel::setLatencies(const std::vector<double>& ms,
                                 const std::vector<QString>& sources) {
  std::vector<double> latency, value;
  for (size_t i = 0; i < rows_.size() && i < ms.size(); ++i) {
    rows_[i].latency_ms = ms[i];
    rows_[i].source = i < sources.size() ? sources[i] : QString();
  }
  const bool accuracy = byAccuracy();
  for (const VariantRow& r : rows_) {
    latency.push_back(std::isnan(r.latency_ms) ? 1e300 : r.latency_ms);
    value.push_back(accuracy ? r.accuracy : static_cast<double>(r.macs));
  }
  const std::vector<bool> front = ofa::pareto_front(latency, value);
  for (size_t i = 0; i < rows_.size(); ++i)
    rows_[i].on_front = front[i] && !std::isnan(rows_[i].latency_ms);
  if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1));
}

void VariantsModel::setCurrent(int row) {
  if (row == current_) return;
  current_ = row;
  if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kColumns - 1));
}

void VariantsModel::setDemoRuns(const std::vector<int64_t>& runs) {
  for (size_t i = 0; i < rows_.size(); ++i) rows_[i].demo_runs = i < runs.size() ? runs[i] : 0;
  if (!rows_.empty()) emit dataChanged(index(0, kDemoRuns), index(rowCount() - 1, kDemoRuns));
}

int VariantsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int VariantsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant VariantsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const VariantRow& r = rows_[static_cast<size_t>(index.row())];
  if (role == Qt::FontRole && index.row() == current_) {
    QFont f;
    f.setBold(true);
    return f;
  }
  if (role == Qt::TextAlignmentRole && index.column() != kName && index.column() != kSource)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == kFront) {
    return QStringLiteral("On the Pareto front: no other variant is both faster and %1")
        .arg(byAccuracy() ? "more accurate" : "larger (more MACs)");
  }
  if (role != Qt::DisplayRole && role != Qt::UserRole) return {};
  const bool sort = role == Qt::UserRole;
  switch (index.column()) {
    case kName: return index.row() == current_ && !sort ? r.name + QStringLiteral("  ◀") : r.name;
    case kMacs:
      return sort ? QVariant::fromValue<qulonglong>(r.macs) : QString::number(r.macs / 1e6, 'f', 1);
    case kParams: return QVariant::fromValue<qulonglong>(r.params);
    case kAccuracy: return r.has_accuracy ? QVariant(r.accuracy) : QVariant(QStringLiteral("–"));
    case kLatency:
      if (std::isnan(r.latency_ms)) return sort ? QVariant(1e300) : QVariant(QStringLiteral("–"));
      return sort ? QVariant(r.latency_ms) : QVariant(QString::number(r.latency_ms, 'f', 2));
    case kSource: return r.source;
    case kFront: return r.on_front ? QStringLiteral("✓") : QString();
    case kDemoRuns: return QVariant::fromValue<qlonglong>(r.demo_runs);
    default: return {};
  }
}

QVariant VariantsModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* kNames[kColumns] = {"Variant",      "MMACs",       "Params", "Accuracy",
                                         "Latency (ms)", "Measured by", "Front",  "Demo runs"};
  return section >= 0 && section < kColumns ? QString(kNames[section]) : QVariant();
}

}  // namespace sod2::studio
