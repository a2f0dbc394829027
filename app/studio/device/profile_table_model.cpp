#include "app/studio/device/profile_table_model.h"

#include <algorithm>

#include "core/opt/model_work.h"
#include "core/status/byte_size.h"

namespace sod2::studio {

void ProfileTableModel::setResult(std::shared_ptr<const profiling::ProfileResult> result,
                                  std::function<QColor(const profiling::GroupProfile&)> color_of) {
  beginResetModel();
  result_ = std::move(result);
  colors_.clear();
  max_ms_ = 0;
  if (result_) {
    for (const profiling::GroupProfile& g : result_->groups) {
      colors_.push_back(color_of ? color_of(g) : QColor(0x5b, 0x8d, 0xd6));
      max_ms_ = std::max(max_ms_, g.avg_ms);
    }
  }
  endResetModel();
}

int ProfileTableModel::rowOfNode(const std::string& node_name) const {
  if (!result_) return -1;
  for (size_t i = 0; i < result_->groups.size(); ++i) {
    const auto& nodes = result_->groups[i].nodes;
    if (std::find(nodes.begin(), nodes.end(), node_name) != nodes.end()) return static_cast<int>(i);
  }
  return -1;
}

int ProfileTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(result_->groups.size());
}

int ProfileTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant ProfileTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const profiling::GroupProfile& g = result_->groups[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kIndex: return g.index;
      case kOps: return QString::fromStdString(g.op_label());
      case kNodes: return static_cast<int>(g.nodes.size());
      case kMs: return QString::number(g.avg_ms, 'f', 3);
      case kPercent: return QString::number(g.percent, 'f', 1);
      case kGops:
        return g.gops_per_s() < 0 ? QString("-") : QString::number(g.gops_per_s(), 'f', 1);
      case kOutput: return QString::fromStdString(human_bytes(g.output_bytes));
      case kShape: return QString::fromStdString(g.shape);
      case kName: return QString::fromStdString(g.name);
    }
  }
  // Sorting by the numbers, not their text.
  if (role == Qt::UserRole) {
    switch (index.column()) {
      case kMs: return g.avg_ms;
      case kPercent: return g.percent;
      case kGops: return g.gops_per_s();
      case kOutput: return static_cast<qlonglong>(g.output_bytes);
      default: return data(index, Qt::DisplayRole);
    }
  }
  if (role == kShareRole && index.column() == kMs) return max_ms_ > 0 ? g.avg_ms / max_ms_ : 0.0;
  if (role == kColorRole) return colors_[static_cast<size_t>(index.row())];
  if (role == Qt::ToolTipRole) {
    QString nodes;
    for (const std::string& n : g.nodes) nodes += "\n  " + QString::fromStdString(n);
    const QString work =
        g.ops < 0 ? tr("operations not counted")
                  : tr("%1 operations%2, %3 GOP/s")
                        .arg(QString::fromStdString(opt::human_ops(static_cast<double>(g.ops))))
                        .arg(result_->ops_at_most ? tr(" at most") : QString())
                        .arg(g.gops_per_s(), 0, 'f', 1);
    return tr("%1 (%2 ms, %3%)\n%4\nshape %5  symbolic %6\nnodes:%7")
        .arg(QString::fromStdString(g.op_label()))
        .arg(g.avg_ms, 0, 'f', 3)
        .arg(g.percent, 0, 'f', 1)
        .arg(work, QString::fromStdString(g.shape), QString::fromStdString(g.dims), nodes);
  }
  if (role == Qt::TextAlignmentRole && index.column() != kOps && index.column() != kName &&
      index.column() != kShape)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"#",     "Op types", "Nodes", "Avg ms", "%",
                                "GOP/s", "Output",   "Shape", "Group"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace sod2::studio
