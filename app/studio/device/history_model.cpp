#include "app/studio/device/history_model.h"

#include <QBrush>
#include <QColor>
#include <algorithm>

#include "app/profiling/profile_report.h"
#include "core/status/byte_size.h"
#include "core/text/text_table.h"

namespace sod2::studio {
namespace {
QString ms(double v) { return QString::number(v, 'f', 3); }
}  // namespace

void HistoryModel::setRuns(std::vector<store::RunRecord> runs) {
  beginResetModel();
  runs_ = std::move(runs);
  endResetModel();
}

int64_t HistoryModel::runIdAt(int row) const {
  return row >= 0 && row < static_cast<int>(runs_.size()) ? runs_[static_cast<size_t>(row)].id : 0;
}

int HistoryModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(runs_.size());
}
int HistoryModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant HistoryModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const store::RunRecord& r = runs_[static_cast<size_t>(index.row())];
  if (role == Qt::DisplayRole) {
    const QString dash = QStringLiteral("-");
    switch (index.column()) {
      case kRun: return static_cast<qlonglong>(r.id);
      case kWhen: return QString::fromStdString(r.started_at);
      case kDevice: return QString::fromStdString(r.device.device_id);
      case kModel: return QString::fromStdString(r.model_name);
      case kBinding: return QString::fromStdString(r.bindings);
      case kThreads: return static_cast<qlonglong>(r.threads);
      case kAvg: return r.ok ? ms(r.avg_ms) : dash;
      case kStd: return r.ok ? ms(r.std_ms) : dash;
      case kArena: return r.ok ? QString::fromStdString(human_bytes(r.arena_bytes)) : dash;
      case kRss: return r.ok ? QString::fromStdString(human_bytes(r.peak_rss_bytes)) : dash;
      case kStatus:
        return r.ok ? tr("ok") : tr("failed: %1").arg(QString::fromStdString(r.failure));
    }
  }
  if (role == Qt::ForegroundRole && !r.ok) return QBrush(QColor(0xc0, 0x39, 0x2b));
  if (role == Qt::ToolTipRole && !r.ok) return QString::fromStdString(r.failure);
  return {};
}

QVariant HistoryModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Run",    "When (UTC)", "Device", "Model",    "Binding", "Threads",
                                "Avg ms", "Std ms",     "Arena",  "Peak RSS", "Status"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

void RunCompareModel::setRows(std::vector<profiling::GroupDelta> rows) {
  beginResetModel();
  rows_ = std::move(rows);
  table_.clear();
  for (size_t g = 0; g < rows_.size(); ++g) {
    table_.push_back({static_cast<int>(g), -1});
    for (size_t b = 0; b < rows_[g].body.size(); ++b)
      table_.push_back({static_cast<int>(g), static_cast<int>(b)});
  }
  endResetModel();
}

int RunCompareModel::groupOfRow(int row) const {
  return row >= 0 && row < rowCount() ? table_[static_cast<size_t>(row)].group : -1;
}

const profiling::BodyDelta* RunCompareModel::bodyAt(int row) const {
  if (row < 0 || row >= rowCount()) return nullptr;
  const Row& r = table_[static_cast<size_t>(row)];
  return r.body < 0 ? nullptr
                    : &rows_[static_cast<size_t>(r.group)].body[static_cast<size_t>(r.body)];
}

int RunCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(table_.size());
}
int RunCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant RunCompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  if (const profiling::BodyDelta* b = bodyAt(index.row()))
    return bodyData(*b, index.column(), role);
  const profiling::GroupDelta& d = rows_[static_cast<size_t>(groupOfRow(index.row()))];
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kOps: return QString::fromStdString(d.op_types);
      case kA: return d.a_ms < 0 ? QStringLiteral("-") : ms(d.a_ms);
      case kB: return d.b_ms < 0 ? QStringLiteral("-") : ms(d.b_ms);
      case kDelta: return d.in_both() ? ms(d.delta_ms()) : QStringLiteral("-");
      case kPercent:
        return d.in_both() ? QString::number(d.delta_percent(), 'f', 1) + "%"
                           : (d.a_ms < 0 ? tr("only B") : tr("only A"));
      case kGroup: return QString::fromStdString(d.name);
    }
  }
  // Slower in B reads red, faster green: the change is what one looks for.
  if (role == Qt::ForegroundRole && d.in_both() &&
      (index.column() == kDelta || index.column() == kPercent))
    return QBrush(d.delta_ms() > 0 ? QColor(0xc0, 0x39, 0x2b) : QColor(0x27, 0x8e, 0x4b));
  return {};
}

QVariant RunCompareModel::bodyData(const profiling::BodyDelta& b, int column, int role) const {
  const auto calls = [](double c) {
    return QString::fromStdString(profiling::calls_per_run_text(c));
  };
  if (role == Qt::DisplayRole) {
    switch (column) {
      case kOps:
        return QString(2 * std::max(b.depth, 0), ' ') +
               QString::fromStdString(b.body + ": " + b.op_types);
      case kA: return b.a_ms < 0 ? QStringLiteral("-") : ms(b.a_ms);
      case kB: return b.b_ms < 0 ? QStringLiteral("-") : ms(b.b_ms);
      case kDelta: return b.in_both() ? ms(b.delta_ms()) : QStringLiteral("-");
      case kPercent:
        return b.in_both() ? QString::number(b.delta_percent(), 'f', 1) + "%"
                           : (b.a_ms < 0 ? tr("only B") : tr("only A"));
      case kGroup: return QString::fromStdString(b.name);
    }
  }
  // Lighter than the groups, as the profile view draws body rows: part of their group's time.
  if (role == Qt::ForegroundRole) {
    if (b.in_both() && b.delta_ms() != 0 && (column == kDelta || column == kPercent))
      return QBrush(b.delta_ms() > 0 ? QColor(0xc0, 0x39, 0x2b).lighter(140)
                                     : QColor(0x27, 0x8e, 0x4b).lighter(140));
    return QBrush(QColor(0x80, 0x80, 0x80));
  }
  if (role == Qt::ToolTipRole) {
    QString text = tr("%1: %2 %3")
                       .arg(QString::fromStdString(b.body), QString::fromStdString(b.op_types),
                            QString::fromStdString(b.name));
    if (b.a_ms >= 0)
      text += tr("\nA: %1 ms per run, %2 calls per run").arg(ms(b.a_ms), calls(b.a_calls));
    if (b.b_ms >= 0)
      text += tr("\nB: %1 ms per run, %2 calls per run").arg(ms(b.b_ms), calls(b.b_calls));
    return text;
  }
  return {};
}

QVariant RunCompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Op types", "A ms", "B ms", "Delta ms", "Delta", "Group"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

void SweepListModel::setSweeps(std::vector<store::SweepRecord> sweeps) {
  beginResetModel();
  sweeps_ = std::move(sweeps);
  endResetModel();
}

int64_t SweepListModel::sweepIdAt(int row) const {
  return row >= 0 && row < static_cast<int>(sweeps_.size()) ? sweeps_[static_cast<size_t>(row)].id
                                                            : 0;
}

int SweepListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(sweeps_.size());
}
int SweepListModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant SweepListModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || role != Qt::DisplayRole) return {};
  const store::SweepRecord& w = sweeps_[static_cast<size_t>(index.row())];
  switch (index.column()) {
    case kSweep: return static_cast<qlonglong>(w.id);
    case kWhen: return QString::fromStdString(w.started_at);
    case kDevice: return QString::fromStdString(w.device_id);
    case kModel: return QString::fromStdString(w.model_name);
    case kSymbol: return QString::fromStdString(w.symbol);
    case kValues: return tr("%1..%2 step %3").arg(w.lo).arg(w.hi).arg(w.step);
    case kHeld: return QString::fromStdString(w.held);
    case kPoints: return static_cast<qlonglong>(w.points);
    case kFailed: return static_cast<qlonglong>(w.failed);
  }
  return {};
}

QVariant SweepListModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"Sweep",  "When (UTC)", "Device", "Model", "Symbol",
                                "Values", "Held",       "Points", "Failed"};
  return section >= 0 && section < kColumns ? tr(names[section]) : QVariant();
}

void SweepCompareModel::setRows(std::string symbol, std::vector<profiling::SweepPointDelta> rows) {
  beginResetModel();
  symbol_ = std::move(symbol);
  rows_ = std::move(rows);
  endResetModel();
}

int SweepCompareModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}
int SweepCompareModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumns;
}

QVariant SweepCompareModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const profiling::SweepPointDelta& d = rows_[static_cast<size_t>(index.row())];
  const QString dash = QStringLiteral("-");
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case kValue: return static_cast<qlonglong>(d.value);
      case kA: return d.a_p50_ms < 0 ? dash : ms(d.a_p50_ms);
      case kB: return d.b_p50_ms < 0 ? dash : ms(d.b_p50_ms);
      case kDelta:
        return d.in_both() ? QString::fromStdString(text::signed_percent(d.delta_percent())) : dash;
      case kArenaA: return d.a_arena < 0 ? dash : QString::fromStdString(human_bytes(d.a_arena));
      case kArenaB: return d.b_arena < 0 ? dash : QString::fromStdString(human_bytes(d.b_arena));
      case kNote: {
        QStringList notes;
        if (!d.a_failure.empty())
          notes << tr("A failed: %1").arg(QString::fromStdString(d.a_failure));
        if (!d.b_failure.empty())
          notes << tr("B failed: %1").arg(QString::fromStdString(d.b_failure));
        if (d.in_both())
          notes << tr("runs %1, %2 (double-click: group by group)").arg(d.a_run).arg(d.b_run);
        return notes.join("; ");
      }
    }
  }
  if (role == Qt::ForegroundRole && d.in_both() && index.column() == kDelta)
    return QBrush(d.delta_percent() > 0 ? QColor(0xc0, 0x39, 0x2b) : QColor(0x27, 0x8e, 0x4b));
  return {};
}

QVariant SweepCompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == kValue) return QString::fromStdString(symbol_);
  static const char* names[] = {"", "A p50 ms", "B p50 ms", "Delta", "A arena", "B arena", "Note"};
  return section > 0 && section < kColumns ? tr(names[section]) : QVariant();
}

}  // namespace sod2::studio
