// Ops that cut out, pad or repeat a tensor: Slice, Pad, Tile and CenterCropPad, whose output
// dims follow from the input's and from starts/ends/pads/repeats that are often computed from
// shapes (torch's F.pad export). Slice also carries the values of small tensors.
#include <algorithm>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// ONNX Slice's [first, first + count * step) along one dim of `n` for a constant start, end and
// step (negative starts and ends count from the end, then clamp).
struct SliceRun {
  int64_t first = 0, count = 0, step = 1;
};
SliceRun slice_run(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (n <= 0) return {0, 0, step};
  int64_t b = start < 0 ? start + n : start, e = end < 0 ? end + n : end;
  SliceRun r;
  r.step = step;
  if (step > 0) {
    b = std::clamp<int64_t>(b, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    r.count = e > b ? (e - b + step - 1) / step : 0;
  } else {
    b = std::clamp<int64_t>(b, 0, n - 1);
    e = std::clamp<int64_t>(e, -1, n - 1);
    r.count = b > e ? (b - e - step - 1) / -step : 0;
  }
  r.first = b;
  return r;
}

// Length of one sliced axis; see the ONNX Slice-13 definition of clamping.
Dim slice_len(InferContext& ctx, const SymExpr& dim, const SymExpr& start, const SymExpr& end,
              int64_t step) {
  auto resolve = [&](const SymExpr& v, int64_t lo_adj) -> std::optional<SymExpr> {
    // Maps a possibly-negative index to [lo_adj, dim + lo_adj] (positive step: [0, dim];
    // negative: [-1, dim-1]).
    const SymExpr lo(lo_adj), hi = dim + lo_adj;
    if (auto c = v.constant_value()) {
      if (*c >= 0) return ctx.simplify(sym::min(v, hi));
      return ctx.simplify(sym::max(v + dim, lo));
    }
    if (ctx.prove_le(0, v) == Tri::kTrue) return ctx.simplify(sym::min(v, hi));
    if (ctx.prove_lt(v, 0) == Tri::kTrue) return ctx.simplify(sym::max(v + dim, lo));
    return std::nullopt;
  };
  if (step > 0) {
    auto s = resolve(start, 0), e = resolve(end, 0);
    if (!s || !e) return std::nullopt;
    return ctx.simplify(sym::max(sym::ceildiv(*e - *s, step), 0));
  }
  auto s = resolve(start, -1), e = resolve(end, -1);
  if (!s || !e) return std::nullopt;
  // Starts clamp to [0, dim-1] for negative steps; ends to [-1, dim-1].
  const SymExpr s_clamped = ctx.simplify(sym::max(*s, 0));
  return ctx.simplify(sym::max(sym::ceildiv(s_clamped - *e, -step), 0));
}

Status slice_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  const int64_t rank = in.rank();
  std::optional<std::vector<SymExpr>> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
  if (ctx.opset() < 10) {
    if (auto s = ctx.attr_ints("starts")) starts = std::vector<SymExpr>(s->begin(), s->end());
    if (auto e = ctx.attr_ints("ends")) ends = std::vector<SymExpr>(e->begin(), e->end());
    axes = ctx.attr_ints("axes");
  } else {
    if (const auto* v = input_values(ctx, 1)) starts = *v;
    if (const auto* v = input_values(ctx, 2)) ends = *v;
    if (ctx.has_input(3)) {
      axes = ctx.input_ints(3);
      if (!axes) starts.reset();  // axes unknown: which dims change is unknown
    }
    if (ctx.has_input(4)) {
      steps = ctx.input_ints(4);
      if (!steps) starts.reset();
    }
  }
  DimList out = *in.dims;
  if (!starts || !ends) {
    // Which axes change is unknown unless axes are given; each changed dim is data-dependent.
    const bool axes_known = axes.has_value();
    for (size_t d = 0; d < out.size(); ++d) {
      const bool touched = !axes_known || std::count(axes->begin(), axes->end(), int64_t(d)) ||
                           std::count(axes->begin(), axes->end(), int64_t(d) - rank);
      if (touched) out[d] = ctx.execution_dim(0, d, 0, sym::kDefaultMaxDim);
    }
    ctx.set_output(0, TensorFact::shaped(in.dtype, out));
    return {};
  }
  if (starts->size() != ends->size())
    return invalid_model("Slice: starts and ends differ in length");
  std::vector<int64_t> ax;
  if (axes)
    ax = *axes;
  else
    for (size_t i = 0; i < starts->size(); ++i) ax.push_back(static_cast<int64_t>(i));
  if (ax.size() != starts->size()) return invalid_model("Slice: axes and starts differ in length");
  auto norm = normalize_axes(ax, rank);
  if (!norm) return invalid_model("Slice: axes out of range or repeated");
  std::vector<int64_t> st = steps.value_or(std::vector<int64_t>(ax.size(), 1));
  if (st.size() != ax.size()) return invalid_model("Slice: steps and axes differ in length");
  std::optional<std::vector<SymExpr>> values;
  for (size_t i = 0; i < norm->size(); ++i) {
    const auto a = static_cast<size_t>((*norm)[i]);
    if (st[i] == 0) return invalid_model("Slice: a step is 0");
    const Dim& dim = (*in.dims)[a];
    out[a] = dim ? slice_len(ctx, *dim, (*starts)[i], (*ends)[i], st[i]) : Dim{};
    if (!out[a]) out[a] = ctx.bounded_execution_dim(0, a, 0, dim);  // a slice is never longer
  }
  // The values of a small tensor of constant dims slice exactly when the starts and ends are
  // constant, at any rank.
  if (in.value && tracked_count(*in.dims) == static_cast<int64_t>(in.value->size())) {
    const std::vector<int64_t> strides = row_major_strides(*in.dims);
    std::vector<SliceRun> runs;
    for (const Dim& d : *in.dims) runs.push_back({0, *d->constant_value(), 1});
    bool constant = true;
    for (size_t i = 0; i < norm->size() && constant; ++i) {
      const auto a = static_cast<size_t>((*norm)[i]);
      const auto s0 = (*starts)[i].constant_value(), e0 = (*ends)[i].constant_value();
      constant = s0 && e0;
      if (constant) runs[a] = slice_run(runs[a].count, *s0, *e0, st[i]);
    }
    if (constant) {
      int64_t base = 0;
      std::vector<int64_t> counts, steps;
      for (size_t a = 0; a < runs.size(); ++a) {
        base += runs[a].first * strides[a];
        counts.push_back(runs[a].count);
        steps.push_back(runs[a].step * strides[a]);
      }
      values = strided_values(*in.value, base, counts, steps);
    }
  }
  TensorFact f = TensorFact::shaped(in.dtype, out);
  if (values && tracked_count(out) == static_cast<int64_t>(values->size()))
    f.value = std::move(values);
  ctx.set_output(0, std::move(f));
  return {};
}

Status tile_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto* reps = input_values(ctx, 1);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  DimList out = *in.dims;
  for (size_t i = 0; i < out.size(); ++i) {
    if (reps && reps->size() == out.size() && out[i])
      out[i] = ctx.simplify(*out[i] * (*reps)[i]);
    else
      out[i] = ctx.execution_dim(0, i, 0, sym::kDefaultMaxDim);
  }
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

Status pad_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  std::optional<std::vector<SymExpr>> pads;
  if (ctx.opset() < 11) {
    auto p = ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads");
    if (p) pads = std::vector<SymExpr>(p->begin(), p->end());
  } else if (const auto* v = input_values(ctx, 1)) {
    pads = *v;
  }
  DimList out = *in.dims;
  const size_t r = out.size();
  for (size_t i = 0; i < r; ++i) {
    if (pads && pads->size() == 2 * r && out[i])
      out[i] = ctx.simplify(*out[i] + (*pads)[i] + (*pads)[i + r]);
    else
      out[i] = ctx.execution_dim(0, i, 0, sym::kDefaultMaxDim);
  }
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

// Pad-18: the pads may name only some axes (optional input 3).
Status pad_18_rule(InferContext& ctx) {
  if (!ctx.has_input(3)) return pad_rule(ctx);
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  DimList out = *in.dims;
  const size_t r = out.size();
  const auto axes = ctx.input_ints(3);
  const auto* pads = input_values(ctx, 1);
  std::vector<bool> known(r, false);
  if (axes && pads && pads->size() == 2 * axes->size()) {
    const size_t k = axes->size();
    std::vector<bool> named(r, false);
    for (size_t j = 0; j < k; ++j) {
      const auto a = normalize_axis((*axes)[j], static_cast<int64_t>(r));
      if (!a)
        return invalid_model("Pad: axes value " + std::to_string((*axes)[j]) +
                             " is out of range for rank " + std::to_string(r));
      const auto d = static_cast<size_t>(*a);
      if (named[d]) return invalid_model("Pad: axes repeat " + std::to_string((*axes)[j]));
      named[d] = true;
      if (out[d]) {
        out[d] = ctx.simplify(*out[d] + (*pads)[j] + (*pads)[j + k]);
        known[d] = true;
      }
    }
    for (size_t i = 0; i < r; ++i)
      if (!named[i]) known[i] = true;  // axes not named keep their size
  }
  for (size_t i = 0; i < r; ++i)
    if (!known[i] || !out[i]) out[i] = ctx.execution_dim(0, i, 0, sym::kDefaultMaxDim);
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

// CenterCropPad-18: each axis named (default all) becomes the matching value of input 1.
Status center_crop_pad_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  const auto r = static_cast<int64_t>(in.dims->size());
  std::vector<int64_t> axes;
  if (const auto a = ctx.attr_ints("axes")) {
    axes = *a;
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const auto* shape = input_values(ctx, 1);
  if (shape && shape->size() != axes.size())
    return invalid_model("CenterCropPad: shape has " + std::to_string(shape->size()) +
                         " values for " + std::to_string(axes.size()) + " axes");
  DimList out = *in.dims;
  for (size_t j = 0; j < axes.size(); ++j) {
    const auto a = normalize_axis(axes[j], r);
    if (!a)
      return invalid_model("CenterCropPad: axis " + std::to_string(axes[j]) +
                           " is out of range for rank " + std::to_string(r));
    const auto d = static_cast<size_t>(*a);
    out[d] = shape ? Dim((*shape)[j]) : Dim(ctx.execution_dim(0, d, 0, sym::kDefaultMaxDim));
  }
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

}  // namespace

void register_crop_pad_ops(OpRegistry& r) {
  r.add({"Slice", 1, OpClass::kISDOS, {}, slice_rule});
  r.add({"Slice", 10, OpClass::kISVDOS, {1, 2, 3, 4}, slice_rule});
  r.add({"Tile", 1, OpClass::kISVDOS, {1}, tile_rule});
  r.add({"Pad", 1, OpClass::kISDOS, {}, pad_rule});
  r.add({"Pad", 11, OpClass::kISVDOS, {1}, pad_rule});
  r.add({"Pad", 18, OpClass::kISVDOS, {1, 3}, pad_18_rule});
  r.add({"Pad", 19, OpClass::kISVDOS, {1, 3}, pad_18_rule});  // wrap mode: same shapes
  r.add({"CenterCropPad", 18, OpClass::kISVDOS, {1}, center_crop_pad_rule});
}

}  // namespace sod2
