// Gathers, scatters and the data-dependent selections (NonZero, Unique, TopK, NMS, Compress).
#include <algorithm>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

Status gather_rule(InferContext& ctx) {
  const TensorFact& data = ctx.input(0);
  const TensorFact& idx = ctx.input(1);
  if (!data.dims || !idx.dims) {
    ctx.set_output(0, TensorFact::unknown(data.dtype));
    return {};
  }
  const auto axis = normalize_axis(ctx.attr_int("axis", 0), data.rank());
  if (!axis) return invalid_model("Gather: axis out of range");
  const auto a = static_cast<size_t>(*axis);
  DimList out(data.dims->begin(), data.dims->begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), idx.dims->begin(), idx.dims->end());
  out.insert(out.end(), data.dims->begin() + static_cast<std::ptrdiff_t>(a) + 1, data.dims->end());
  TensorFact f = TensorFact::shaped(data.dtype, out);
  // Picking elements of a known 1-D value vector with constant indices (Shape → Gather).
  if (data.value && data.rank() == 1 && tracks_values(out)) {
    if (auto indices = idx.int_values()) {
      const auto n = static_cast<int64_t>(data.value->size());
      std::vector<SymExpr> v;
      for (int64_t i : *indices) {
        if (i < -n || i >= n)
          return invalid_model("Gather: index " + std::to_string(i) + " out of range");
        v.push_back((*data.value)[static_cast<size_t>(i < 0 ? i + n : i)]);
      }
      f.value = std::move(v);
    }
  }
  ctx.set_output(0, std::move(f));
  return {};
}

Status gather_elements_rule(InferContext& ctx) {
  TensorFact f = ctx.input(1);
  f.value.reset();
  f.dtype = ctx.input(0).dtype;
  ctx.set_output(0, std::move(f));
  return {};
}

Status gather_nd_rule(InferContext& ctx) {
  const TensorFact& data = ctx.input(0);
  const TensorFact& idx = ctx.input(1);
  const int64_t batch = ctx.attr_int("batch_dims", 0);
  if (!data.dims || !idx.dims || idx.dims->empty() || !idx.dims->back() ||
      !idx.dims->back()->constant_value()) {
    ctx.set_output(0, TensorFact::unknown(data.dtype));
    return {};
  }
  const int64_t last = *idx.dims->back()->constant_value();
  if (batch < 0 || batch + last > data.rank())
    return invalid_model("GatherND: indices' last dim plus batch_dims exceeds the data rank");
  DimList out(idx.dims->begin(), idx.dims->end() - 1);
  out.insert(out.end(), data.dims->begin() + batch + last, data.dims->end());
  ctx.set_output(0, TensorFact::shaped(data.dtype, out));
  return {};
}

Status same_as_data_rule(InferContext& ctx) {
  same_shape_as_input(ctx, 0, 0);
  return {};
}

Status one_hot_rule(InferContext& ctx) {
  const TensorFact& idx = ctx.input(0);
  const DataType dtype = ctx.input(2).dtype;
  if (!idx.dims) {
    ctx.set_output(0, TensorFact::unknown(dtype));
    return {};
  }
  const auto axis = normalize_axis(ctx.attr_int("axis", -1), idx.rank() + 1);
  if (!axis) return invalid_model("OneHot: axis out of range");
  Dim depth = input_scalar(ctx, 1);
  if (!depth) depth = ctx.execution_dim(0, static_cast<size_t>(*axis), 0, sym::kDefaultMaxDim);
  DimList out = *idx.dims;
  out.insert(out.begin() + *axis, depth);
  ctx.set_output(0, TensorFact::shaped(dtype, out));
  return {};
}

Status non_zero_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::ranked(DataType::kInt64, 2));
    return {};
  }
  // At most every element is non-zero.
  const SymExpr nnz = ctx.bounded_execution_dim(0, 1, 0, in.numel());
  ctx.set_output(0, TensorFact::shaped(DataType::kInt64, {SymExpr(in.rank()), nnz}));
  return {};
}

// Compress keeps at most one slice per entry of the condition and per slice of the input (the
// spec discards condition entries past the input's length).
std::optional<SymExpr> compress_bound(InferContext& ctx, const std::optional<SymExpr>& slices) {
  const Dim len = dim_at(ctx.input(1), 0);
  if (ctx.input(1).rank() != 1 || !len) return slices;
  return slices ? sym::min(*len, *slices) : *len;
}

Status compress_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto axis = ctx.attr_int("axis");
  if (!axis) {
    ctx.set_output(0, TensorFact::shaped(in.dtype, {ctx.bounded_execution_dim(
                                                       0, 0, 0, compress_bound(ctx, in.numel()))}));
    return {};
  }
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  const auto a = normalize_axis(*axis, in.rank());
  if (!a) return invalid_model("Compress: axis out of range");
  DimList out = *in.dims;
  out[static_cast<size_t>(*a)] = ctx.bounded_execution_dim(
      0, static_cast<size_t>(*a), 0, compress_bound(ctx, out[static_cast<size_t>(*a)]));
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

Status unique_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto axis = ctx.attr_int("axis");
  // One execution symbol for the number of unique entries, shared by all outputs.
  if (!axis || !in.dims) {
    // At most every element (every slice along the axis) is unique.
    const SymExpr u = ctx.bounded_execution_symbol("unique", 0, in.numel());
    ctx.set_output(0, axis ? TensorFact::unknown(in.dtype) : TensorFact::shaped(in.dtype, {u}));
    ctx.set_output(1, TensorFact::shaped(DataType::kInt64, {u}));
    const auto n = in.numel();
    ctx.set_output(2, TensorFact::shaped(DataType::kInt64, {n ? Dim(ctx.simplify(*n)) : Dim{}}));
    ctx.set_output(3, TensorFact::shaped(DataType::kInt64, {u}));
    return {};
  }
  const auto a = normalize_axis(*axis, in.rank());
  if (!a) return invalid_model("Unique: axis out of range");
  const Dim along = (*in.dims)[static_cast<size_t>(*a)];
  const SymExpr u = ctx.bounded_execution_symbol("unique", 0, along);
  DimList out = *in.dims;
  out[static_cast<size_t>(*a)] = u;
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  ctx.set_output(1, TensorFact::shaped(DataType::kInt64, {u}));
  ctx.set_output(2, TensorFact::shaped(DataType::kInt64, {along}));
  ctx.set_output(3, TensorFact::shaped(DataType::kInt64, {u}));
  return {};
}

// Each selected index names one (batch, class, box) triple, and each (batch, class) keeps at
// most max_output_boxes_per_class boxes (0 when omitted or empty: no output; a negative value
// selects none either), so at most batch * classes * min(max_output_boxes_per_class, boxes).
std::optional<SymExpr> nms_bound(InferContext& ctx) {
  const TensorFact& scores = ctx.input(1);  // [batch, classes, boxes]
  if (!ctx.has_input(2) || ctx.input(2).numel() == std::optional<SymExpr>(SymExpr(0)))
    return SymExpr(0);
  if (!scores.dims || scores.rank() != 3 || !(*scores.dims)[0] || !(*scores.dims)[1])
    return scores.numel();
  const SymExpr batch_classes = *(*scores.dims)[0] * *(*scores.dims)[1];
  Dim boxes = (*scores.dims)[2];
  if (!boxes) boxes = dim_at(ctx.input(0), 1);  // boxes: [batch, boxes, 4]
  const std::optional<SymExpr> per_class = input_scalar(ctx, 2);
  if (per_class && boxes) return batch_classes * sym::min(sym::max(*per_class, 0), *boxes);
  if (per_class) return batch_classes * sym::max(*per_class, 0);
  if (boxes) return batch_classes * *boxes;
  return std::nullopt;
}

Status nms_rule(InferContext& ctx) {
  const SymExpr n = ctx.bounded_execution_dim(0, 0, 0, nms_bound(ctx));
  ctx.set_output(0, TensorFact::shaped(DataType::kInt64, {n, SymExpr(3)}));
  return {};
}

Status top_k_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    ctx.set_output(1, TensorFact::unknown(DataType::kInt64));
    return {};
  }
  const auto axis = normalize_axis(ctx.attr_int("axis", -1), in.rank());
  if (!axis) return invalid_model("TopK: axis out of range");
  Dim k;
  if (ctx.opset() < 10) {
    if (auto a = ctx.attr_int("k")) k = SymExpr(*a);
  } else {
    k = input_scalar(ctx, 1);
  }
  // k unknown before running: at most the axis' length (the spec requires k <= dim).
  if (!k)
    k = ctx.bounded_execution_dim(0, static_cast<size_t>(*axis), 0,
                                  (*in.dims)[static_cast<size_t>(*axis)]);
  DimList out = *in.dims;
  out[static_cast<size_t>(*axis)] = k;
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  ctx.set_output(1, TensorFact::shaped(DataType::kInt64, out));
  return {};
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  r.add({"Gather", 1, OpClass::kISDOS, {}, gather_rule});
  r.add({"GatherElements", 11, OpClass::kISDOS, {}, gather_elements_rule});
  r.add({"GatherND", 11, OpClass::kISDOS, {}, gather_nd_rule});
  r.add({"Scatter", 9, OpClass::kISDOS, {}, same_as_data_rule});
  r.add({"ScatterElements", 11, OpClass::kISDOS, {}, same_as_data_rule});
  r.add({"ScatterND", 11, OpClass::kISDOS, {}, same_as_data_rule});
  // Opset 18 added reduction max/min: same shape.
  r.add({"ScatterElements", 18, OpClass::kISDOS, {}, same_as_data_rule});
  r.add({"ScatterND", 18, OpClass::kISDOS, {}, same_as_data_rule});
  r.add({"OneHot", 9, OpClass::kISVDOS, {1}, one_hot_rule});
  r.add({"NonZero", 9, OpClass::kEDO, {}, non_zero_rule});
  r.add({"Compress", 9, OpClass::kEDO, {}, compress_rule});
  r.add({"Unique", 11, OpClass::kEDO, {}, unique_rule});
  r.add({"NonMaxSuppression", 10, OpClass::kEDO, {}, nms_rule});
  r.add({"TopK", 1, OpClass::kISDOS, {}, top_k_rule});
  r.add({"TopK", 10, OpClass::kISVDOS, {1}, top_k_rule});
}

}  // namespace sod2
