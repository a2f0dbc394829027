#include "app/studio/plan/shapes_table_model.h"

#include <algorithm>
#include <set>

#include "core/ops/op_class.h"
#include "core/ops/op_registry.h"
#include "core/rdp/binding.h"

namespace sod2::studio {
namespace {

QString qstr(const std::string& s) { return QString::fromStdString(s); }

QString symbolic_dims(const TensorFact& f) {
  if (f.category != TypeCategory::kTensor) return type_category_name(f.category);
  if (!f.dims) return QStringLiteral("<unknown rank>");
  QStringList parts;
  for (const Dim& d : *f.dims) parts << (d ? qstr(d->to_string()) : QStringLiteral("?"));
  return "[" + parts.join(", ") + "]";
}

// The producer's class as `sod2 inspect` spells it: ISVDOS* when RDP resolved its value inputs.
QString class_of(const Graph& g, const Value& v, const RdpResult& rdp) {
  switch (v.kind) {
    case ValueKind::kGraphInput: return QStringLiteral("input");
    case ValueKind::kInitializer: return QStringLiteral("initializer");
    case ValueKind::kOuterScope: return QStringLiteral("outer scope");
    case ValueKind::kNodeOutput: break;
  }
  if (v.producer == kNoNode) return {};
  const Node& n = g.node(v.producer);
  const OpClass c = op_class_of(n);
  QString name = op_class_name(c);
  if (c == OpClass::kISVDOS && rdp.resolved(n)) name += "*";
  return name;
}

QString csv_field(const QString& text) {
  if (!text.contains(',') && !text.contains('"') && !text.contains('\n')) return text;
  QString quoted = text;
  quoted.replace('"', QStringLiteral("\"\""));
  return '"' + quoted + '"';
}

}  // namespace

ShapesTableModel::ShapesTableModel(const Model& model, const RdpResult& rdp, QObject* parent)
    : QAbstractTableModel(parent) {
  const Graph& g = *model.graph;
  rows_.reserve(g.num_values());
  for (size_t i = 0; i < g.num_values(); ++i) {
    const ValueId id = static_cast<ValueId>(i);
    const Value& v = g.value(id);
    const TensorFact& f = rdp.fact(g, id);
    Row row;
    row.value = id;
    row.name = qstr(v.name);
    const DataType dtype = f.dtype != DataType::kUndefined ? f.dtype : v.dtype;
    row.dtype =
        dtype == DataType::kUndefined ? QString() : qstr(std::string(data_type_name(dtype)));
    row.rank = f.category == TypeCategory::kTensor ? f.rank() : -1;
    row.dims = symbolic_dims(f);
    if (f.category == TypeCategory::kTensor) row.dim_exprs = f.dims;
    row.element_bytes = data_type_size(dtype);
    if (v.kind == ValueKind::kNodeOutput && v.producer != kNoNode) {
      row.producer = v.producer;
      row.producer_name = qstr(g.node(v.producer).name);
    }
    row.producer_class = class_of(g, v, rdp);
    rows_.push_back(std::move(row));
  }
}

const ShapesTableModel::Row& ShapesTableModel::row_at(size_t r) const {
  const Row& row = rows_[r];
  if (row.evaluated != generation_) {
    evaluate_row(row);
    row.evaluated = generation_;
  }
  return row;
}

void ShapesTableModel::evaluate_row(const Row& row) const {
  row.bytes.reset();
  if (!row.dim_exprs) {
    row.dims_at = row.dims;
    return;
  }
  QStringList parts;
  int64_t numel = 1;
  bool known = true;
  for (const Dim& d : *row.dim_exprs) {
    const std::optional<int64_t> v = dim_at(d, binding_);
    parts << (v ? QString::number(*v) : QStringLiteral("?"));
    if (!v || *v < 0 || __builtin_mul_overflow(numel, *v, &numel)) known = false;
  }
  row.dims_at = "[" + parts.join(", ") + "]";
  int64_t bytes = 0;
  if (known && row.element_bytes > 0 &&
      !__builtin_mul_overflow(numel, static_cast<int64_t>(row.element_bytes), &bytes))
    row.bytes = bytes;
}

int ShapesTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ShapesTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString ShapesTableModel::cell_text(const Row& row, int column) const {
  switch (column) {
    case kName: return row.name;
    case kDtype: return row.dtype;
    case kRank: return row.rank < 0 ? QStringLiteral("?") : QString::number(row.rank);
    case kDims: return row.dims;
    case kDimsAt: return row.dims_at;
    case kBytes: return row.bytes ? QString::number(*row.bytes) : QStringLiteral("?");
    case kProducer: return row.producer_name;
    case kClass: return row.producer_class;
    default: return {};
  }
}

QVariant ShapesTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() < 0 || index.row() >= static_cast<int>(rows_.size()))
    return {};
  const Row& row = row_at(static_cast<size_t>(index.row()));
  const int column = index.column();
  switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole: return cell_text(row, column);
    case kSortRole:
      if (column == kRank) return QVariant::fromValue<qlonglong>(row.rank);
      if (column == kBytes) return QVariant::fromValue<qlonglong>(row.bytes ? *row.bytes : -1);
      return cell_text(row, column);
    case kValueIdRole: return row.value;
    case kProducerRole: return row.producer;
    case Qt::TextAlignmentRole:
      if (column == kRank || column == kBytes)
        return QVariant::fromValue<int>(Qt::AlignRight | Qt::AlignVCenter);
      return {};
    default: return {};
  }
}

QVariant ShapesTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kName: return QStringLiteral("name");
    case kDtype: return QStringLiteral("dtype");
    case kRank: return QStringLiteral("rank");
    case kDims: return QStringLiteral("dims");
    case kDimsAt: return QStringLiteral("dims at binding");
    case kBytes: return QStringLiteral("bytes");
    case kProducer: return QStringLiteral("producer");
    case kClass: return QStringLiteral("class");
    default: return {};
  }
}

void ShapesTableModel::set_binding(const sym::Binding& binding) {
  binding_ = binding;
  ++generation_;
  if (rows_.empty()) return;
  const int last = static_cast<int>(rows_.size()) - 1;
  emit dataChanged(index(0, kDimsAt), index(last, kBytes),
                   {Qt::DisplayRole, Qt::ToolTipRole, kSortRole});
}

int ShapesTableModel::row_of_value(ValueId value) const {
  // Rows are the graph's values in id order.
  return value >= 0 && static_cast<size_t>(value) < rows_.size() ? static_cast<int>(value) : -1;
}

std::optional<int64_t> ShapesTableModel::bytes_at(int row) const {
  if (row < 0 || static_cast<size_t>(row) >= rows_.size()) return std::nullopt;
  return row_at(static_cast<size_t>(row)).bytes;
}

QString ShapesTableModel::to_csv(const QModelIndexList* rows) const {
  std::vector<int> which;
  if (rows) {
    std::set<int> unique;
    for (const QModelIndex& i : *rows)
      if (i.isValid() && i.model() == this) unique.insert(i.row());
    which.assign(unique.begin(), unique.end());
  } else {
    which.resize(rows_.size());
    for (size_t i = 0; i < which.size(); ++i) which[i] = static_cast<int>(i);
  }
  QStringList lines;
  QStringList header;
  for (int c = 0; c < kColumnCount; ++c)
    header << csv_field(headerData(c, Qt::Horizontal).toString());
  lines << header.join(',');
  for (int r : which) {
    QStringList fields;
    for (int c = 0; c < kColumnCount; ++c)
      fields << csv_field(cell_text(row_at(static_cast<size_t>(r)), c));
    lines << fields.join(',');
  }
  return lines.join('\n') + '\n';
}

QSortFilterProxyModel* make_shapes_proxy(ShapesTableModel* source, QObject* parent) {
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(source);
  proxy->setSortRole(ShapesTableModel::kSortRole);
  proxy->setFilterKeyColumn(-1);
  proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy->setSortCaseSensitivity(Qt::CaseInsensitive);
  return proxy;
}

}  // namespace sod2::studio
