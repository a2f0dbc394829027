#include "app/studio/backend/backend_table_model.h"

#include <QColor>
#include <algorithm>
#include <map>
#include <vector>

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString joined(const std::vector<std::string>& parts, const char* sep) {
  QStringList l;
  for (const std::string& s : parts) l << qs(s);
  return l.join(QLatin1String(sep));
}

}  // namespace

QString placement_ops_text(const backend::PlacementRow& row) {
  if (row.fused_ops.empty()) return qs(row.op);
  if (row.op == "GpuElementwise") return joined(row.fused_ops, "+");
  return QStringLiteral("%1 (%2)").arg(qs(row.op), joined(row.fused_ops, "+"));
}

QString placement_header(const backend::BackendPlacement& p) {
  if (p.backend.empty()) return QObject::tr("No device backend");
  return QObject::tr("%1: %2 groups (%3 nodes) and %4 nodes on the device, %5 nodes on the CPU")
      .arg(qs(p.backend))
      .arg(p.groups)
      .arg(p.grouped_nodes)
      .arg(p.device_nodes)
      .arg(p.cpu_nodes);
}

QString placement_reasons(const backend::BackendPlacement& p) {
  if (p.why_counts.empty())
    return p.rows.empty() ? QString() : QObject::tr("Every node runs on the device.");
  auto examples = backend::why_examples(p);
  std::map<std::string, rt::CpuReason> kind_of;
  for (const backend::PlacementRow& r : p.rows)
    if (!r.device) kind_of[r.why_cpu] = r.reason;
  std::vector<std::pair<rt::CpuReason, int>> kinds(p.reason_counts.begin(), p.reason_counts.end());
  std::vector<std::pair<std::string, int>> whys(p.why_counts.begin(), p.why_counts.end());
  // What keeps the most nodes off the device is what to look at first.
  const auto most_first = [](const auto& a, const auto& b) { return a.second > b.second; };
  std::stable_sort(kinds.begin(), kinds.end(), most_first);
  std::stable_sort(whys.begin(), whys.end(), most_first);
  QString text = QObject::tr("On the CPU, by reason (%1 nodes):\n").arg(p.cpu_nodes);
  for (const auto& [kind, kind_count] : kinds) {
    text += QStringLiteral("%1  %2\n").arg(kind_count, 4).arg(qs(rt::cpu_reason_name(kind)));
    for (const auto& [why, count] : whys) {
      if (kind_of[why] != kind) continue;
      text += QStringLiteral("    %1  %2  (e.g. %3)\n")
                  .arg(count, 4)
                  .arg(qs(why), joined(examples[why], ", "));
    }
  }
  return text;
}

void BackendTableModel::setPlacement(backend::BackendPlacement placement) {
  beginResetModel();
  placement_ = std::move(placement);
  endResetModel();
}

int BackendTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(placement_.rows.size());
}

int BackendTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant BackendTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const backend::PlacementRow& r = placement_.rows[static_cast<size_t>(index.row())];
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case kStep: return index.row();
        case kNode: return qs(r.node);
        case kOps: return placement_ops_text(r);
        case kBackend: return r.device ? tr("Vulkan") : tr("CPU");
        case kWhy: return qs(r.why_cpu);
      }
      return {};
    case kSortRole:
      return index.column() == kStep ? QVariant(index.row()) : data(index, Qt::DisplayRole);
    case Qt::ToolTipRole:
      if (!r.fused_nodes.empty()) return tr("%1: %2").arg(qs(r.op), joined(r.fused_nodes, ", "));
      return qs(r.op) + (r.device ? QString() : QStringLiteral("\n") + qs(r.why_cpu));
    case Qt::BackgroundRole:
      // Translucent, so the tint reads on the light and the dark theme alike.
      if (!r.device) return QColor(240, 150, 40, 55);
      return {};
    case Qt::TextAlignmentRole:
      if (index.column() == kStep) return int(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    case kNodesRole: {
      QStringList nodes;
      for (const std::string& n : r.fused_nodes) nodes << qs(n);
      if (nodes.isEmpty()) nodes << qs(r.node);
      return nodes;
    }
    case kOnDeviceRole: return r.device;
  }
  return {};
}

QVariant BackendTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kStep: return tr("#");
    case kNode: return tr("Node or group");
    case kOps: return tr("Ops");
    case kBackend: return tr("Backend");
    case kWhy: return tr("Why the CPU");
  }
  return {};
}

}  // namespace sod2::studio
