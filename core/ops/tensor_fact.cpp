#include "core/ops/tensor_fact.h"

namespace sod2 {

TensorFact TensorFact::with_value(DataType dtype, std::vector<sym::SymExpr> values, bool scalar) {
  TensorFact f;
  f.dtype = dtype;
  if (scalar) f.dims = DimList{};
  else f.dims = DimList{sym::SymExpr(static_cast<int64_t>(values.size()))};
  f.value = std::move(values);
  return f;
}

bool TensorFact::all_dims_known() const {
  if (!dims) return false;
  for (const Dim& d : *dims)
    if (!d) return false;
  return true;
}

std::optional<sym::SymExpr> TensorFact::numel() const {
  if (!all_dims_known()) return std::nullopt;
  sym::SymExpr n(1);
  for (const Dim& d : *dims) n = n * *d;
  return n;
}

std::optional<std::vector<int64_t>> TensorFact::int_values() const {
  if (!value) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(value->size());
  for (const sym::SymExpr& e : *value) {
    const auto c = e.constant_value();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::string TensorFact::to_string() const {
  if (category != TypeCategory::kTensor && category != TypeCategory::kSparseTensor) {
    std::string s = type_category_name(category);
    if (element) s += " of " + element->to_string();
    return s;
  }
  if (!dims) return "<unknown rank>";
  std::string s = "[";
  for (size_t i = 0; i < dims->size(); ++i) {
    if (i) s += ", ";
    s += (*dims)[i] ? (*dims)[i]->to_string() : "?";
  }
  s += "]";
  if (value) {
    s += " = (";
    for (size_t i = 0; i < value->size(); ++i) s += (i ? ", " : "") + (*value)[i].to_string();
    s += ")";
  }
  return s;
}

bool operator==(const TensorFact& a, const TensorFact& b) {
  if (a.category != b.category || a.dtype != b.dtype || a.dims != b.dims || a.value != b.value)
    return false;
  if (!a.element || !b.element) return a.element == b.element;
  return *a.element == *b.element;
}

}  // namespace sod2
