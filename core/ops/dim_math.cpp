#include "core/ops/dim_math.h"

#include <algorithm>
#include <climits>
#include <cstdint>

namespace sod2 {

std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> normalize_axes(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    auto n = normalize_axis(a, rank);
    if (!n || std::find(out.begin(), out.end(), *n) != out.end()) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

Dim broadcast_dim(InferContext& ctx, const Dim& a, const Dim& b) {
  if (!a || !b) {
    // The known side decides unless it is 1 (then the unknown one does).
    const Dim& known = a ? a : b;
    if (known && known->constant_value() != 1 && ctx.prove_le(2, *known) == Tri::kTrue)
      return known;
    return std::nullopt;
  }
  if (*a == *b) return a;
  if (a->constant_value() == 1) return b;
  if (b->constant_value() == 1) return a;
  if (ctx.prove_eq(*a, *b) == Tri::kTrue) return a;
  const bool a_big = ctx.prove_le(2, *a) == Tri::kTrue, b_big = ctx.prove_le(2, *b) == Tri::kTrue;
  if (a_big && b_big) {
    ctx.require_equal(*a, *b, "broadcast operands must match where neither is 1");
    return a;
  }
  if (a_big) return a;  // b is 1 or equal to a in every valid run
  if (b_big) return b;
  // Neither side is provably >= 2: for valid broadcasting the result is max(a, b) unless one of
  // them is 0, which max cannot express; say that only when both are provably >= 1.
  if (ctx.prove_le(1, *a) == Tri::kTrue && ctx.prove_le(1, *b) == Tri::kTrue)
    return ctx.simplify(sym::max(*a, *b));
  return std::nullopt;
}

std::optional<DimList> broadcast_shapes(InferContext& ctx,
                                        const std::vector<const TensorFact*>& in) {
  size_t rank = 0;
  for (const TensorFact* f : in) {
    if (!f->dims) return std::nullopt;
    rank = std::max(rank, f->dims->size());
  }
  DimList out(rank, sym::SymExpr(1));
  for (const TensorFact* f : in) {
    const DimList& d = *f->dims;
    const size_t offset = rank - d.size();
    for (size_t i = 0; i < d.size(); ++i)
      out[offset + i] = broadcast_dim(ctx, out[offset + i], d[i]);
  }
  return out;
}

void same_shape_as_input(InferContext& ctx, size_t from, size_t out,
                         std::optional<DataType> dtype) {
  TensorFact f = ctx.input(from);
  f.value.reset();
  if (dtype) f.dtype = *dtype;
  ctx.set_output(out, std::move(f));
}

bool tracks_values(const DimList& dims) {
  if (dims.size() > 1) return false;
  if (dims.empty()) return true;
  const auto n = dims[0] ? dims[0]->constant_value() : std::nullopt;
  return n && *n >= 0 && *n <= kMaxTrackedElements;
}

std::optional<int64_t> tracked_count(const DimList& dims) {
  int64_t n = 1;
  for (const Dim& d : dims) {
    const auto c = d ? d->constant_value() : std::nullopt;
    if (!c || *c < 0) return std::nullopt;
    if (*c > kMaxTrackedElements) return std::nullopt;
    n *= *c;
    if (n > kMaxTrackedElements) return std::nullopt;
  }
  return n;
}

std::vector<int64_t> row_major_strides(const DimList& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t a = dims.size(); a-- > 1;) strides[a - 1] = strides[a] * *dims[a]->constant_value();
  return strides;
}

std::vector<sym::SymExpr> strided_values(const std::vector<sym::SymExpr>& values, int64_t base,
                                         const std::vector<int64_t>& counts,
                                         const std::vector<int64_t>& steps) {
  int64_t total = 1;
  for (int64_t c : counts) total *= c;
  std::vector<sym::SymExpr> out;
  out.reserve(static_cast<size_t>(total));
  std::vector<int64_t> index(counts.size(), 0);
  for (int64_t k = 0; k < total; ++k) {
    int64_t src = base;
    for (size_t a = 0; a < counts.size(); ++a) src += index[a] * steps[a];
    out.push_back(values[static_cast<size_t>(src)]);
    for (size_t a = counts.size(); a-- > 0;) {
      if (++index[a] < counts[a]) break;
      index[a] = 0;
    }
  }
  return out;
}

std::optional<std::vector<sym::SymExpr>> elementwise_values(
    const std::vector<const TensorFact*>& in, const DimList& out_dims, const ValueFn& fn) {
  if (!tracks_values(out_dims)) return std::nullopt;
  const int64_t n = out_dims.empty() ? 1 : *out_dims[0]->constant_value();
  for (const TensorFact* f : in)
    if (!f->value || f->value->empty() != (n == 0)) return std::nullopt;
  std::vector<sym::SymExpr> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<sym::SymExpr> args(in.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      const auto& v = *in[k]->value;
      // A single element broadcasts; otherwise lengths match (checked by the shape rule).
      args[k] = v.size() == 1 ? v[0] : v[static_cast<size_t>(i) % v.size()];
    }
    auto r = fn(args);
    if (!r) return std::nullopt;
    out.push_back(*r);
  }
  return out;
}

std::optional<sym::SymExpr> dims_product(const DimList& dims, size_t from, size_t to) {
  sym::SymExpr p(1);
  for (size_t i = from; i < to && i < dims.size(); ++i) {
    if (!dims[i]) return std::nullopt;
    p = p * *dims[i];
  }
  return p;
}

DimList values_to_dims(const std::vector<sym::SymExpr>& values) {
  return DimList(values.begin(), values.end());
}

Dim dim_at(const TensorFact& f, size_t i) {
  return f.dims && i < f.dims->size() ? (*f.dims)[i] : Dim();
}

Dim simplified(const InferContext& ctx, const Dim& d) { return d ? Dim(ctx.simplify(*d)) : Dim(); }

void require_if_known(InferContext& ctx, const Dim& a, const Dim& b, std::string_view why) {
  if (a && b && *a != *b) ctx.require_equal(*a, *b, why);
}

std::pair<int64_t, int64_t> dim_bounds(const InferContext& ctx, const Dim& d) {
  if (!d) return {0, sym::kDefaultMaxDim};
  const sym::Interval b = sym::bounds(*d, ctx.ranges());
  return {std::max<int64_t>(b.lo, 0), std::min<int64_t>(b.hi, sym::kDefaultMaxDim)};
}

DimList execution_dims(InferContext& ctx, size_t out, int64_t rank) {
  DimList dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(ctx.execution_dim(out, static_cast<size_t>(d), 0, sym::kDefaultMaxDim));
  return dims;
}

const std::vector<sym::SymExpr>* input_values(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return nullptr;
  const TensorFact& f = ctx.input(i);
  // The inputs read as lists (shapes, pads, axes, repeats) are 1-D: a value of higher rank there
  // is an invalid model, not a list.
  if (f.dims && f.dims->size() > 1) return nullptr;
  return f.value ? &*f.value : nullptr;
}

std::optional<sym::SymExpr> input_scalar(const InferContext& ctx, size_t i) {
  const std::vector<sym::SymExpr>* v = input_values(ctx, i);
  if (!v || v->size() != 1) return std::nullopt;
  return (*v)[0];
}

std::optional<sym::Interval> exact_integer_range(DataType dt) {
  switch (dt) {
    case DataType::kBool: return sym::Interval{0, 1};
    case DataType::kUint8: return sym::Interval{0, 255};
    case DataType::kInt8: return sym::Interval{-128, 127};
    case DataType::kUint16: return sym::Interval{0, 65535};
    case DataType::kInt16: return sym::Interval{-32768, 32767};
    case DataType::kInt32: return sym::Interval{INT32_MIN, INT32_MAX};
    case DataType::kUint32: return sym::Interval{0, UINT32_MAX};
    case DataType::kInt64: return sym::Interval{INT64_MIN, INT64_MAX};
    case DataType::kUint64: return sym::Interval{0, INT64_MAX};
    // A float holds every integer up to 2^(stored mantissa bits + 1); beyond that it rounds.
    case DataType::kFloat16: return sym::Interval{-(1 << 11), 1 << 11};
    case DataType::kBFloat16: return sym::Interval{-(1 << 8), 1 << 8};
    case DataType::kFloat: return sym::Interval{-(1 << 24), 1 << 24};
    case DataType::kDouble: return sym::Interval{-(int64_t{1} << 53), int64_t{1} << 53};
    default: return std::nullopt;
  }
}

bool representable(const InferContext& ctx, DataType dt, const sym::SymExpr& e) {
  const auto r = exact_integer_range(dt);
  if (!r || e.is_overflow()) return false;
  const sym::Interval b = sym::bounds(e, ctx.ranges());
  return b.lo >= r->lo && b.hi <= r->hi;
}

}  // namespace sod2
