// Reductions: the output drops (keepdims=0) or keeps as 1 (keepdims=1) each reduced axis. The axes
// come from an attribute (ISDOS) except for ReduceSum from opset 13 and the others from opset 18,
// where they are an input (ISVDOS). Reducing a tracked vector (ReduceProd of a Shape slice =
// element count) keeps values.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"
#include "core/sym/ranges.h"

namespace sod2 {
namespace {

using sym::SymExpr;
using Values = std::vector<SymExpr>;
using MaybeExpr = std::optional<SymExpr>;

Status ok() { return Status::ok_status(); }

enum class Red { kL1, kL2, kLogSum, kLogSumExp, kMax, kMean, kMin, kProd, kSum, kSumSquare };

MaybeExpr fold(Red op, const Values& v) {
  switch (op) {
    case Red::kSum:
    case Red::kSumSquare: {
      SymExpr s{int64_t{0}};
      for (const SymExpr& x : v) s = s + (op == Red::kSum ? x : x * x);
      return s;
    }
    case Red::kProd: {
      SymExpr p{int64_t{1}};
      for (const SymExpr& x : v) p = p * x;
      return p;
    }
    case Red::kMax: return v.empty() ? std::nullopt : MaybeExpr(sym::max(v));
    case Red::kMin: return v.empty() ? std::nullopt : MaybeExpr(sym::min(v));
    default: return std::nullopt;
  }
}

std::string axis_error(const char* what, int64_t axis, int64_t rank) {
  return std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank);
}

// Known axes; `axes` null means "none given" (reduce all, or nothing with `noop`).
Status reduce_with_axes(InferContext& ctx, Red op, const std::vector<int64_t>* axes, bool noop) {
  const TensorFact& in = ctx.input(0);
  if (!axes && noop) {
    ctx.set_output(0, in);
    return ok();
  }
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  TensorFact out = TensorFact::unknown(in.dtype);
  std::vector<bool> reduced;
  if (in.dims) {
    const int64_t rank = in.rank();
    reduced.assign(static_cast<size_t>(rank), axes == nullptr);
    // Repeated axes reduce once, as the runtimes do.
    for (int64_t a : axes ? *axes : std::vector<int64_t>{}) {
      const auto n = normalize_axis(a, rank);
      if (!n) return invalid_model(axis_error("axes value", a, rank));
      reduced[static_cast<size_t>(*n)] = true;
    }
    DimList d;
    for (size_t i = 0; i < reduced.size(); ++i) {
      if (!reduced[i])
        d.push_back((*in.dims)[i]);
      else if (keep)
        d.push_back(SymExpr(1));
    }
    out.dims = std::move(d);
  } else if (!axes && !keep) {
    out.dims = DimList{};  // everything reduced away, whatever the rank
  }
  // A tracked scalar or vector reduced as a whole.
  if (in.value && in.dims && in.rank() <= 1 && (in.rank() == 0 || reduced[0])) {
    if (MaybeExpr r = fold(op, *in.value)) {
      const SymExpr s = ctx.simplify(*r);
      if (representable(ctx, in.dtype, s)) out.value = Values{s};
    }
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// Axes exist but their values are unknown: with keepdims each dim is its own value or 1; without,
// only a single axis fixes the output rank (repeated axes would reduce less).
Status reduce_unknown_axes(InferContext& ctx) {
  const TensorFact &in = ctx.input(0), &axes = ctx.input(1);
  TensorFact out = TensorFact::unknown(in.dtype);
  if (in.dims) {
    const DimList& d = *in.dims;
    if (ctx.attr_int("keepdims", 1) != 0) {
      out.dims = DimList(d.size());
      for (size_t i = 0; i < d.size(); ++i) {
        if (d[i] && d[i]->constant_value() == 1) {
          (*out.dims)[i] = SymExpr(1);
          continue;
        }
        // 1 where the axis is reduced, the input's dim elsewhere.
        const int64_t lo = std::min<int64_t>(dim_bounds(ctx, d[i]).first, 1);
        (*out.dims)[i] = ctx.bounded_execution_dim(
            0, i, lo, d[i] ? std::optional<sym::SymExpr>(sym::max(*d[i], 1)) : std::nullopt);
      }
    } else if (axes.dims && axes.dims->size() == 1 && (*axes.dims)[0] &&
               (*axes.dims)[0]->constant_value() == 1 && !d.empty()) {
      out.dims = DimList(d.size() - 1);
      for (size_t j = 0; j + 1 < d.size(); ++j) {
        // Output dim j is input dim j or j+1, depending on which axis went.
        if (d[j] && d[j + 1] && *d[j] == *d[j + 1]) {
          (*out.dims)[j] = d[j];
          continue;
        }
        const int64_t lo = std::min(dim_bounds(ctx, d[j]).first, dim_bounds(ctx, d[j + 1]).first);
        (*out.dims)[j] = ctx.bounded_execution_dim(
            0, j, lo,
            d[j] && d[j + 1] ? std::optional<sym::SymExpr>(sym::max(*d[j], *d[j + 1]))
                             : std::nullopt);
      }
    }
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

template <Red op>
Status reduce_attr_rule(InferContext& ctx) {
  const auto axes = ctx.attr_ints("axes");
  // An absent or empty `axes` reduces every axis.
  return reduce_with_axes(ctx, op, axes && !axes->empty() ? &*axes : nullptr, false);
}

template <Red op>
Status reduce_input_rule(InferContext& ctx) {
  const bool noop = ctx.attr_int("noop_with_empty_axes", 0) != 0;
  if (!ctx.has_input(1)) return reduce_with_axes(ctx, op, nullptr, noop);
  if (const auto axes = ctx.input_ints(1))
    return reduce_with_axes(ctx, op, axes->empty() ? nullptr : &*axes, noop);
  // An axes tensor of shape [0] is empty whatever its (absent) values.
  const TensorFact& a = ctx.input(1);
  if (a.dims && a.dims->size() == 1 && (*a.dims)[0] && (*a.dims)[0]->constant_value() == 0)
    return reduce_with_axes(ctx, op, nullptr, noop);
  return reduce_unknown_axes(ctx);
}

Status arg_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const int64_t axis = ctx.attr_int("axis", 0);
  const bool keep = ctx.attr_int("keepdims", 1) != 0;
  TensorFact out = TensorFact::unknown(DataType::kInt64);
  if (in.dims) {
    const auto n = normalize_axis(axis, in.rank());
    if (!n) return invalid_model(axis_error("attribute 'axis' =", axis, in.rank()));
    DimList d = *in.dims;
    if (keep)
      d[static_cast<size_t>(*n)] = SymExpr(1);
    else
      d.erase(d.begin() + *n);
    out.dims = std::move(d);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

}  // namespace

void register_reduction_ops(OpRegistry& registry) {
  const std::pair<const char*, ShapeRule> attr_ops[] = {
      {"ReduceL1", reduce_attr_rule<Red::kL1>},
      {"ReduceL2", reduce_attr_rule<Red::kL2>},
      {"ReduceLogSum", reduce_attr_rule<Red::kLogSum>},
      {"ReduceLogSumExp", reduce_attr_rule<Red::kLogSumExp>},
      {"ReduceMax", reduce_attr_rule<Red::kMax>},
      {"ReduceMean", reduce_attr_rule<Red::kMean>},
      {"ReduceMin", reduce_attr_rule<Red::kMin>},
      {"ReduceProd", reduce_attr_rule<Red::kProd>},
      {"ReduceSum", reduce_attr_rule<Red::kSum>},
      {"ReduceSumSquare", reduce_attr_rule<Red::kSumSquare>},
  };
  // axes stays an attribute through opset 17 except for ReduceSum (an input from 13).
  for (const auto& [op, rule] : attr_ops) registry.add({op, 1, OpClass::kISDOS, {}, rule});
  registry.add({"ReduceSum", 13, OpClass::kISVDOS, {1}, reduce_input_rule<Red::kSum>});
  // Opset 18 moved the others' axes to an optional input too (with noop_with_empty_axes).
  const std::pair<const char*, ShapeRule> input_ops[] = {
      {"ReduceL1", reduce_input_rule<Red::kL1>},
      {"ReduceL2", reduce_input_rule<Red::kL2>},
      {"ReduceLogSum", reduce_input_rule<Red::kLogSum>},
      {"ReduceLogSumExp", reduce_input_rule<Red::kLogSumExp>},
      {"ReduceMax", reduce_input_rule<Red::kMax>},
      {"ReduceMean", reduce_input_rule<Red::kMean>},
      {"ReduceMin", reduce_input_rule<Red::kMin>},
      {"ReduceProd", reduce_input_rule<Red::kProd>},
      {"ReduceSumSquare", reduce_input_rule<Red::kSumSquare>},
  };
  for (const auto& [op, rule] : input_ops) registry.add({op, 18, OpClass::kISVDOS, {1}, rule});
  registry.add({"ArgMax", 1, OpClass::kISDOS, {}, arg_rule});
  registry.add({"ArgMin", 1, OpClass::kISDOS, {}, arg_rule});
}

}  // namespace sod2
