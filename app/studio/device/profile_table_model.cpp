#include "app/studio/device/profile_table_model.h"

#include <algorithm>
#include <cmath>

#include "core/opt/model_work.h"
#include "core/status/byte_size.h"

namespace sod2::studio {

void ProfileTableModel::setResult(std::shared_ptr<const profiling::ProfileResult> result,
                                  std::function<QColor(const profiling::GroupProfile&)> color_of) {
  beginResetModel();
  result_ = std::move(result);
  rows_.clear();
  colors_.clear();
  max_ms_ = 0;
  if (result_) {
    for (size_t i = 0; i < result_->groups.size(); ++i) {
      const profiling::GroupProfile& g = result_->groups[i];
      colors_.push_back(color_of ? color_of(g) : QColor(0x5b, 0x8d, 0xd6));
      max_ms_ = std::max(max_ms_, g.avg_ms);
      rows_.push_back({static_cast<int>(i), -1});
      for (size_t b = 0; b < g.body.size(); ++b)
        rows_.push_back({static_cast<int>(i), static_cast<int>(b)});
    }
  }
  endResetModel();
}

int ProfileTableModel::rowOfNode(const std::string& node_name) const {
  if (!result_) return -1;
  for (size_t i = 0; i < result_->groups.size(); ++i) {
    const auto& nodes = result_->groups[i].nodes;
    if (std::find(nodes.begin(), nodes.end(), node_name) != nodes.end())
      return rowOfGroup(static_cast<int>(i));
  }
  return -1;
}

int ProfileTableModel::groupOfRow(int row) const {
  return row >= 0 && row < rowCount() ? rows_[static_cast<size_t>(row)].group : -1;
}

int ProfileTableModel::rowOfGroup(int group) const {
  const auto it = std::lower_bound(rows_.begin(), rows_.end(), group,
                                   [](const Row& r, int g) { return r.group < g; });
  return it != rows_.end() && it->group == group ? static_cast<int>(it - rows_.begin()) : -1;
}

bool ProfileTableModel::isBodyRow(int row) const { return bodyAt(row) != nullptr; }

const profiling::BodyNodeProfile* ProfileTableModel::bodyAt(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  const Row& r = rows_[static_cast<size_t>(row)];
  return r.body < 0
             ? nullptr
             : &result_->groups[static_cast<size_t>(r.group)].body[static_cast<size_t>(r.body)];
}

QString ProfileTableModel::activationName(int row) const {
  const int g = groupOfRow(row);
  return g < 0 ? QString() : QString::fromStdString(result_->groups[static_cast<size_t>(g)].name);
}

int ProfileTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(rows_.size());
}

int ProfileTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant ProfileTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const Row& row = rows_[static_cast<size_t>(index.row())];
  if (row.body >= 0) return bodyData(row, index.column(), role);
  const profiling::GroupProfile& g = result_->groups[static_cast<size_t>(row.group)];
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
  if (role == kColorRole) return colors_[static_cast<size_t>(row.group)];
  if (role == Qt::ToolTipRole) {
    QString nodes;
    for (const std::string& n : g.nodes) nodes += "\n  " + QString::fromStdString(n);
    const QString ops = QString::fromStdString(opt::human_ops(static_cast<double>(g.ops)));
    const QString work = g.ops < 0 ? tr("operations not counted")
                         : g.ops_are_bound()
                             ? tr("at most %1 operations (the larger branch; no GOP/s)").arg(ops)
                             : tr("%1 operations%2, %3 GOP/s")
                                   .arg(ops)
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

QVariant ProfileTableModel::bodyData(const Row& row, int column, int role) const {
  const profiling::GroupProfile& g = result_->groups[static_cast<size_t>(row.group)];
  const profiling::BodyNodeProfile& b = g.body[static_cast<size_t>(row.body)];
  // Whole for a body that runs a fixed number of times, as `sod2 profile` prints it.
  const double calls = b.calls_per_run;
  const QString calls_text = QString::number(calls, 'f', calls == std::floor(calls) ? 0 : 2);
  if (role == Qt::DisplayRole) {
    switch (column) {
      case kOps:
        return QString(2 * b.depth, ' ') + QString::fromStdString(b.body + ": " + b.op_label());
      case kNodes: return "x" + calls_text;
      case kMs: return QString::number(b.avg_ms, 'f', 3);
      case kPercent: return QString::number(b.percent_of_parent, 'f', 1);
      case kGops: return QString("-");
      case kName: return QString::fromStdString(b.name);
      default: return QString();
    }
  }
  if (role == Qt::UserRole) {  // ProfileSortProxy orders by the group's values, not these
    switch (column) {
      case kMs: return b.avg_ms;
      case kPercent: return b.percent_of_parent;
      default: return data(index(rowOfGroup(row.group), column), Qt::UserRole);
    }
  }
  if (role == kShareRole && column == kMs) return max_ms_ > 0 ? b.avg_ms / max_ms_ : 0.0;
  if (role == kColorRole) return colors_[static_cast<size_t>(row.group)].lighter(130);
  if (role == Qt::ToolTipRole) {
    return tr("%1: %2 %3\ninside %4 %5\n%6 ms per run, %7% of the node holding it, %8 calls "
              "per run\n(body graph %9, node %10)")
        .arg(QString::fromStdString(b.body), QString::fromStdString(b.op_label()),
             QString::fromStdString(b.name), QString::fromStdString(g.op_label()),
             QString::fromStdString(g.name))
        .arg(b.avg_ms, 0, 'f', 3)
        .arg(b.percent_of_parent, 0, 'f', 1)
        .arg(calls_text)
        .arg(b.graph)
        .arg(b.node);
  }
  if (role == Qt::TextAlignmentRole && column != kOps && column != kName && column != kShape)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

bool ProfileSortProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const auto* m = qobject_cast<const ProfileTableModel*>(sourceModel());
  if (!m) return QSortFilterProxyModel::lessThan(left, right);
  const int gl = m->groupOfRow(left.row()), gr = m->groupOfRow(right.row());
  // Qt sorts descending by swapping the arguments: these orders hold either way.
  const bool ascending = sortOrder() == Qt::AscendingOrder;
  if (gl == gr) return ascending ? left.row() < right.row() : left.row() > right.row();
  const QModelIndex a = m->index(m->rowOfGroup(gl), left.column());
  const QModelIndex b = m->index(m->rowOfGroup(gr), right.column());
  if (QSortFilterProxyModel::lessThan(a, b)) return true;
  if (QSortFilterProxyModel::lessThan(b, a)) return false;
  return ascending ? gl < gr : gl > gr;
}

QVariant ProfileTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"#",     "Op types", "Nodes", "Avg ms", "%",
                                "GOP/s", "Output",   "Shape", "Group"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace sod2::studio
