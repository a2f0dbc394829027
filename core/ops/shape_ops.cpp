// Ops that compute or rearrange shapes: the ones that carry shape values through the graph
// (Shape → Gather → Concat → Reshape) and whose output shape often depends on input values.
// Slice, Pad, Tile and CenterCropPad are in crop_pad_ops.cpp.
#include <algorithm>
#include <cmath>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// Reshape, Squeeze and Unsqueeze keep the elements' row-major order: the output carries the
// input's values when its dims are constant and small enough, at any rank.
void carry_values_in_order(const TensorFact& in, const DimList& out, TensorFact* f) {
  if (in.value && tracked_count(out) == static_cast<int64_t>(in.value->size())) f->value = in.value;
}

Status shape_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::ranked(DataType::kInt64, 1));
    return {};
  }
  const auto rank = static_cast<int64_t>(in.dims->size());
  int64_t start = 0, end = rank;
  if (ctx.opset() >= 15) {
    // Out-of-range start/end clamp rather than fail (ONNX Shape-15).
    start = ctx.attr_int("start", 0);
    end = ctx.attr_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
  }
  std::vector<SymExpr> values;
  bool known = true;
  for (int64_t i = start; i < end; ++i) {
    const Dim& d = (*in.dims)[static_cast<size_t>(i)];
    if (!d)
      known = false;
    else
      values.push_back(*d);
  }
  const int64_t n = std::max<int64_t>(end - start, 0);
  if (known) {
    ctx.set_output(0, TensorFact::with_value(DataType::kInt64, std::move(values), false));
  } else {
    ctx.set_output(0, TensorFact::shaped(DataType::kInt64, {SymExpr(n)}));
  }
  return {};
}

Status size_rule(InferContext& ctx) {
  const auto n = ctx.input(0).numel();
  if (n)
    ctx.set_output(0, TensorFact::with_value(DataType::kInt64, {ctx.simplify(*n)}, true));
  else
    ctx.set_output(0, TensorFact::shaped(DataType::kInt64, {}));
  return {};
}

Status constant_rule(InferContext& ctx) {
  if (const Tensor* t = ctx.attr_tensor("value")) {
    DimList dims;
    for (int64_t d : t->dims()) dims.push_back(SymExpr(d));
    TensorFact f = TensorFact::shaped(t->dtype(), dims);
    if (t->dtype() != DataType::kString && tracked_count(dims)) {
      std::vector<SymExpr> values;
      for (int64_t i = 0; i < t->numel(); ++i) {
        const auto v = t->int_at(i);
        if (!v) {
          values.clear();
          break;
        }
        values.push_back(*v);
      }
      if (static_cast<int64_t>(values.size()) == t->numel()) f.value = std::move(values);
    }
    ctx.set_output(0, std::move(f));
    return {};
  }
  if (auto v = ctx.attr_int("value_int")) {
    ctx.set_output(0, TensorFact::with_value(DataType::kInt64, {*v}, true));
  } else if (auto vs = ctx.attr_ints("value_ints")) {
    std::vector<SymExpr> values(vs->begin(), vs->end());
    if (static_cast<int64_t>(values.size()) <= kMaxTrackedElements)
      ctx.set_output(0, TensorFact::with_value(DataType::kInt64, std::move(values), false));
    else
      ctx.set_output(0, TensorFact::shaped(DataType::kInt64, {SymExpr(int64_t(vs->size()))}));
  } else if (auto f = ctx.attr_float("value_float")) {
    TensorFact fact = TensorFact::shaped(DataType::kFloat, {});
    if (std::trunc(*f) == *f && std::fabs(*f) < 1e15) fact.value = {{static_cast<int64_t>(*f)}};
    ctx.set_output(0, std::move(fact));
  } else if (auto fs = ctx.attr_floats("value_floats")) {
    ctx.set_output(0, TensorFact::shaped(DataType::kFloat, {SymExpr(int64_t(fs->size()))}));
  } else if (ctx.node().attribute("value_string")) {
    ctx.set_output(0, TensorFact::shaped(DataType::kString, {}));
  } else if (const Attribute* s = ctx.node().attribute("value_strings")) {
    ctx.set_output(0, TensorFact::shaped(DataType::kString, {SymExpr(int64_t(s->strings.size()))}));
  } else {
    return invalid_model(
        "Constant has none of value, value_int(s), value_float(s), value_string(s)");
  }
  return {};
}

// Reshape's output dim for one requested value; nullopt when only running can tell.
Dim reshape_dim(InferContext& ctx, const SymExpr& v, const DimList* in_dims, size_t i,
                bool allowzero) {
  if (auto c = v.constant_value()) {
    if (*c == 0 && !allowzero) {
      if (!in_dims || i >= in_dims->size()) return std::nullopt;
      return (*in_dims)[i];
    }
    if (*c >= 0) return v;
    return std::nullopt;  // -1 is handled by the caller; other negatives are invalid
  }
  // A symbolic request is its own dim when it cannot be the special 0 (or -1).
  if (ctx.prove_le(1, v) == Tri::kTrue) return v;
  if (allowzero && ctx.prove_le(0, v) == Tri::kTrue) return v;
  if (in_dims && i < in_dims->size() && (*in_dims)[i] &&
      ctx.prove_eq(v, *(*in_dims)[i]) == Tri::kTrue)
    return v;  // 0 would copy the same dim
  return std::nullopt;
}

Status reshape_rule(InferContext& ctx) {
  const TensorFact& data = ctx.input(0);
  std::optional<std::vector<SymExpr>> request;
  if (ctx.opset() < 5) {
    if (auto s = ctx.attr_ints("shape")) request = std::vector<SymExpr>(s->begin(), s->end());
  } else if (const auto* v = input_values(ctx, 1)) {
    request = *v;
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  if (!request) {
    const TensorFact& shape = ctx.input(1);
    if (shape.dims && shape.dims->size() == 1 && (*shape.dims)[0] &&
        (*shape.dims)[0]->constant_value()) {
      const int64_t rank = *(*shape.dims)[0]->constant_value();
      ctx.set_output(0, TensorFact::shaped(data.dtype, execution_dims(ctx, 0, rank)));
    } else {
      ctx.set_output(0, TensorFact::unknown(data.dtype));
    }
    return {};
  }
  const DimList* in_dims = data.dims ? &*data.dims : nullptr;
  DimList out(request->size());
  std::optional<size_t> infer_at;
  for (size_t i = 0; i < request->size(); ++i) {
    const SymExpr& v = (*request)[i];
    if (v.constant_value() == -1) {
      if (infer_at) return invalid_model("Reshape: more than one -1 in the requested shape");
      infer_at = i;
      continue;
    }
    if (auto c = v.constant_value(); c && *c < -1)
      return invalid_model("Reshape: invalid requested dim " + std::to_string(*c));
    out[i] = reshape_dim(ctx, v, in_dims, i, allowzero);
  }
  const auto in_numel = data.numel();
  if (infer_at) {
    DimList others = out;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(*infer_at));
    const auto known_rest = dims_product(others, 0, others.size());
    if (in_numel && known_rest) {
      const SymExpr inferred = ctx.simplify(sym::floordiv(*in_numel, *known_rest));
      // The division is exact for a valid model; say so when the prover cannot.
      ctx.require_equal(ctx.simplify(inferred * *known_rest), ctx.simplify(*in_numel),
                        "Reshape's -1 must divide the element count exactly");
      out[*infer_at] = inferred;
    }
  } else if (in_numel) {
    if (auto out_numel = dims_product(out, 0, out.size()))
      ctx.require_equal(ctx.simplify(*in_numel), ctx.simplify(*out_numel),
                        "Reshape must keep the element count");
  }
  // A dim only running can tell is the request itself, the input's dim it copies (0), or the
  // inferred one (-1, at most the element count): at most the largest of the three, so the
  // plan can size it where the prover could not decide which it is (Swin's window counts,
  // floordiv(h + mod(7 - mod(h, 7), 7), 7), are never 0 but not provably so).
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i]) continue;
    std::optional<SymExpr> bound;
    if (in_numel && (allowzero || (in_dims && i < in_dims->size() && (*in_dims)[i]))) {
      bound = sym::max((*request)[i], *in_numel);
      if (!allowzero) bound = sym::max(*bound, *(*in_dims)[i]);
    }
    out[i] = ctx.bounded_execution_dim(0, i, 0, bound);
  }
  TensorFact f = TensorFact::shaped(data.dtype, out);
  carry_values_in_order(data, out, &f);
  ctx.set_output(0, std::move(f));
  return {};
}

Status flatten_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::ranked(in.dtype, 2));
    return {};
  }
  const auto rank = static_cast<int64_t>(in.dims->size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return invalid_model("Flatten: axis out of range");
  auto a = dims_product(*in.dims, 0, static_cast<size_t>(axis));
  auto b = dims_product(*in.dims, static_cast<size_t>(axis), in.dims->size());
  ctx.set_output(0, TensorFact::shaped(in.dtype, {a ? Dim(ctx.simplify(*a)) : Dim{},
                                                  b ? Dim(ctx.simplify(*b)) : Dim{}}));
  return {};
}

std::optional<std::vector<int64_t>> axes_from(InferContext& ctx, size_t input_index,
                                              bool use_input) {
  if (use_input) {
    if (!ctx.has_input(input_index)) return std::nullopt;
    return ctx.input_ints(input_index);
  }
  return ctx.attr_ints("axes");
}

Status squeeze_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const bool from_input = ctx.opset() >= 13;
  const bool has_axes = from_input ? ctx.has_input(1) : ctx.attr_ints("axes").has_value();
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  const auto rank = static_cast<int64_t>(in.dims->size());
  std::vector<bool> drop(in.dims->size(), false);
  if (has_axes) {
    auto axes = axes_from(ctx, 1, from_input);
    if (!axes) {  // axes known only at run time: the rank is not known either
      ctx.set_output(0, TensorFact::unknown(in.dtype));
      return {};
    }
    auto norm = normalize_axes(*axes, rank);
    if (!norm) return invalid_model("Squeeze: axes out of range or repeated");
    for (int64_t a : *norm) {
      const Dim& d = (*in.dims)[static_cast<size_t>(a)];
      if (d) ctx.require_equal(*d, 1, "Squeeze axes must have size 1");
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (size_t i = 0; i < in.dims->size(); ++i) {
      const Dim& d = (*in.dims)[i];
      if (!d) {
        ctx.set_output(0, TensorFact::unknown(in.dtype));
        return {};
      }
      const Tri one = ctx.prove_eq(*d, 1);
      if (one == Tri::kUnknown) {
        ctx.set_output(0, TensorFact::unknown(in.dtype));
        return {};
      }
      drop[i] = one == Tri::kTrue;
    }
  }
  DimList out;
  for (size_t i = 0; i < in.dims->size(); ++i)
    if (!drop[i]) out.push_back((*in.dims)[i]);
  TensorFact f = TensorFact::shaped(in.dtype, out);
  carry_values_in_order(in, out, &f);
  ctx.set_output(0, std::move(f));
  return {};
}

Status unsqueeze_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  auto axes = axes_from(ctx, 1, ctx.opset() >= 13);
  if (!axes || !in.dims) {
    TensorFact f = TensorFact::unknown(in.dtype);
    if (in.dims && ctx.has_input(1)) {
      const TensorFact& a = ctx.input(1);
      if (a.dims && a.dims->size() == 1 && (*a.dims)[0] && (*a.dims)[0]->constant_value()) {
        // The rank is known even if the axes are not; their positions are not.
        f = TensorFact::ranked(in.dtype, in.rank() + *(*a.dims)[0]->constant_value());
      }
    }
    ctx.set_output(0, std::move(f));
    return {};
  }
  const int64_t out_rank = in.rank() + static_cast<int64_t>(axes->size());
  auto norm = normalize_axes(*axes, out_rank);
  if (!norm) return invalid_model("Unsqueeze: axes out of range or repeated");
  DimList out(static_cast<size_t>(out_rank));
  std::vector<bool> inserted(out.size(), false);
  for (int64_t a : *norm) {
    inserted[static_cast<size_t>(a)] = true;
    out[static_cast<size_t>(a)] = SymExpr(1);
  }
  size_t src = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (!inserted[i]) out[i] = (*in.dims)[src++];
  TensorFact f = TensorFact::shaped(in.dtype, out);
  carry_values_in_order(in, out, &f);
  ctx.set_output(0, std::move(f));
  return {};
}

Status transpose_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (!in.dims) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  const auto rank = static_cast<int64_t>(in.dims->size());
  std::vector<int64_t> perm;
  if (auto p = ctx.attr_ints("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  auto norm = normalize_axes(perm, rank);
  if (!norm || static_cast<int64_t>(norm->size()) != rank)
    return invalid_model("Transpose: perm is not a permutation of the input's axes");
  DimList out;
  for (int64_t p : *norm) out.push_back((*in.dims)[static_cast<size_t>(p)]);
  TensorFact f = TensorFact::shaped(in.dtype, out);
  if (in.value && tracked_count(*in.dims) == static_cast<int64_t>(in.value->size())) {
    // Output axis a walks input axis perm[a].
    const std::vector<int64_t> strides = row_major_strides(*in.dims);
    std::vector<int64_t> counts, steps;
    for (int64_t p : *norm) {
      counts.push_back(*(*in.dims)[static_cast<size_t>(p)]->constant_value());
      steps.push_back(strides[static_cast<size_t>(p)]);
    }
    f.value = strided_values(*in.value, 0, counts, steps);
  }
  ctx.set_output(0, std::move(f));
  return {};
}

Status expand_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto* shape = input_values(ctx, 1);
  if (!shape) {
    const TensorFact& s = ctx.input(1);
    if (s.dims && s.dims->size() == 1 && (*s.dims)[0] && (*s.dims)[0]->constant_value() &&
        in.dims) {
      const int64_t n = std::max<int64_t>(*(*s.dims)[0]->constant_value(), in.rank());
      ctx.set_output(0, TensorFact::shaped(in.dtype, execution_dims(ctx, 0, n)));
    } else {
      ctx.set_output(0, TensorFact::unknown(in.dtype));
    }
    return {};
  }
  TensorFact target = TensorFact::shaped(in.dtype, values_to_dims(*shape));
  auto out = broadcast_shapes(ctx, {&in, &target});
  if (!out) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  for (size_t i = 0; i < out->size(); ++i)
    if (!(*out)[i]) (*out)[i] = ctx.execution_dim(0, i, 0, sym::kDefaultMaxDim);
  TensorFact f = TensorFact::shaped(in.dtype, *out);
  if (auto v = elementwise_values({&in}, *out, [](const auto& a) { return std::optional(a[0]); }))
    f.value = std::move(v);
  ctx.set_output(0, std::move(f));
  return {};
}

Status concat_rule(InferContext& ctx) {
  const auto axis_attr = ctx.attr_int("axis");
  if (!axis_attr && ctx.opset() >= 4) return invalid_model("Concat: the axis attribute is missing");
  DataType dtype = DataType::kUndefined;
  int64_t rank = -1;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (dtype == DataType::kUndefined) dtype = ctx.input(i).dtype;
    if (ctx.input(i).dims) rank = ctx.input(i).rank();
  }
  if (rank < 0) {
    ctx.set_output(0, TensorFact::unknown(dtype));
    return {};
  }
  const auto axis = normalize_axis(axis_attr.value_or(1), rank);
  if (!axis) return invalid_model("Concat: axis out of range");
  DimList out(static_cast<size_t>(rank));
  Dim total = SymExpr(0);
  bool first = true;
  std::vector<SymExpr> values;
  bool values_known = true;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const TensorFact& f = ctx.input(i);
    if (!f.dims) {
      total.reset();
      values_known = false;
      continue;
    }
    if (f.rank() != rank) return invalid_model("Concat: inputs have different ranks");
    for (size_t d = 0; d < out.size(); ++d) {
      const Dim& dim = (*f.dims)[d];
      if (static_cast<int64_t>(d) == *axis) {
        if (total && dim)
          total = *total + *dim;
        else
          total.reset();
        continue;
      }
      if (first || !out[d]) {
        if (dim) out[d] = dim;
      } else if (dim && !(*out[d] == *dim)) {
        ctx.require_equal(*out[d], *dim, "Concat inputs must match off the concatenation axis");
      }
    }
    first = false;
    if (f.value)
      values.insert(values.end(), f.value->begin(), f.value->end());
    else
      values_known = false;
  }
  out[static_cast<size_t>(*axis)] = total ? Dim(ctx.simplify(*total)) : Dim{};
  TensorFact f = TensorFact::shaped(dtype, out);
  if (values_known && rank == 1 && tracks_values(out)) f.value = std::move(values);
  ctx.set_output(0, std::move(f));
  return {};
}

Status split_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const size_t n_out = ctx.num_outputs();
  if (!in.dims) {
    for (size_t o = 0; o < n_out; ++o) ctx.set_output(o, TensorFact::unknown(in.dtype));
    return {};
  }
  const auto axis = normalize_axis(ctx.attr_int("axis", 0), in.rank());
  if (!axis) return invalid_model("Split: axis out of range");
  std::optional<std::vector<int64_t>> split;
  bool split_given = false;
  if (ctx.opset() >= 13 || ctx.opset() == 1) {
    split_given = ctx.has_input(1);
    if (split_given) split = ctx.input_ints(1);
  }
  if (!split_given && ctx.opset() < 13) {
    split = ctx.attr_ints("split");
    split_given = split.has_value();
  }
  const Dim& whole = (*in.dims)[static_cast<size_t>(*axis)];
  for (size_t o = 0; o < n_out; ++o) {
    DimList dims = *in.dims;
    Dim part;
    if (split_given && split) {
      if (split->size() != n_out)
        return invalid_model("Split: split has a different count than outputs");
      part = SymExpr((*split)[o]);
    } else if (!split_given && whole) {
      const auto n = static_cast<int64_t>(n_out);
      part = ctx.simplify(sym::floordiv(*whole, n));
      if (o == 0)
        ctx.require_equal(ctx.simplify(*part * n), *whole,
                          "Split into equal parts needs a divisible dim");
    } else {
      part = ctx.execution_dim(o, static_cast<size_t>(*axis), 0, sym::kDefaultMaxDim);
    }
    dims[static_cast<size_t>(*axis)] = part;
    TensorFact f = TensorFact::shaped(in.dtype, dims);
    if (in.value && in.rank() == 1 && split) {
      int64_t begin = 0;
      for (size_t k = 0; k < o; ++k) begin += (*split)[k];
      if (begin + (*split)[o] <= static_cast<int64_t>(in.value->size()))
        f.value = std::vector<SymExpr>(in.value->begin() + begin,
                                       in.value->begin() + begin + (*split)[o]);
    }
    ctx.set_output(o, std::move(f));
  }
  return {};
}

// Split-18: without a split input, num_outputs parts of ceil(dim / n), the last one smaller.
Status split_18_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto num = ctx.attr_int("num_outputs", 0);
  if (ctx.has_input(1) || num == 0 || !in.dims) return split_rule(ctx);
  const size_t n_out = ctx.num_outputs();
  if (num != static_cast<int64_t>(n_out))
    return invalid_model("Split: num_outputs " + std::to_string(num) + " but the node has " +
                         std::to_string(n_out) + " outputs");
  const auto axis = normalize_axis(ctx.attr_int("axis", 0), in.rank());
  if (!axis) return invalid_model("Split: axis out of range");
  const Dim& whole = (*in.dims)[static_cast<size_t>(*axis)];
  for (size_t o = 0; o < n_out; ++o) {
    DimList dims = *in.dims;
    Dim part;
    if (whole) {
      const SymExpr chunk = ctx.simplify(sym::ceildiv(*whole, num));
      part = o + 1 < n_out ? chunk : ctx.simplify(*whole - chunk * static_cast<int64_t>(n_out - 1));
    } else {
      part = ctx.execution_dim(o, static_cast<size_t>(*axis), 0, sym::kDefaultMaxDim);
    }
    dims[static_cast<size_t>(*axis)] = part;
    ctx.set_output(o, TensorFact::shaped(in.dtype, dims));
  }
  return {};
}

Status constant_of_shape_rule(InferContext& ctx) {
  DataType dtype = DataType::kFloat;
  std::optional<SymExpr> fill = SymExpr(0);
  if (const Tensor* t = ctx.attr_tensor("value")) {
    dtype = t->dtype();
    const auto v = t->int_at(0);
    fill = v ? std::optional<SymExpr>(*v) : std::nullopt;
  }
  const auto* shape = input_values(ctx, 0);
  if (!shape) {
    const TensorFact& s = ctx.input(0);
    if (s.dims && s.dims->size() == 1 && (*s.dims)[0] && (*s.dims)[0]->constant_value())
      ctx.set_output(
          0, TensorFact::shaped(dtype, execution_dims(ctx, 0, *(*s.dims)[0]->constant_value())));
    else
      ctx.set_output(0, TensorFact::unknown(dtype));
    return {};
  }
  DimList out = values_to_dims(*shape);
  TensorFact f = TensorFact::shaped(dtype, out);
  if (fill && tracks_values(out)) {
    const int64_t n = out.empty() ? 1 : *out[0]->constant_value();
    f.value = std::vector<SymExpr>(static_cast<size_t>(n), *fill);
  }
  ctx.set_output(0, std::move(f));
  return {};
}

Status range_rule(InferContext& ctx) {
  const DataType dtype = ctx.input(0).dtype;
  const auto start = input_scalar(ctx, 0), limit = input_scalar(ctx, 1),
             delta = input_scalar(ctx, 2);
  if (!start || !limit || !delta || !delta->constant_value() || *delta->constant_value() == 0) {
    ctx.set_output(0, TensorFact::shaped(dtype, {ctx.execution_dim(0, 0, 0, sym::kDefaultMaxDim)}));
    return {};
  }
  const int64_t step = *delta->constant_value();
  // ONNX: number_of_elements = max(ceil((limit - start) / delta), 0).
  const SymExpr len = step > 0 ? ctx.simplify(sym::max(sym::ceildiv(*limit - *start, step), 0))
                               : ctx.simplify(sym::max(sym::ceildiv(*start - *limit, -step), 0));
  TensorFact f = TensorFact::shaped(dtype, {len});
  if (auto n = len.constant_value(); n && *n <= kMaxTrackedElements) {
    std::vector<SymExpr> v;
    for (int64_t i = 0; i < *n; ++i) v.push_back(ctx.simplify(*start + SymExpr(i * step)));
    f.value = std::move(v);
  }
  ctx.set_output(0, std::move(f));
  return {};
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r.add({"Shape", 1, OpClass::kISDO, {}, shape_rule});
  r.add({"Size", 1, OpClass::kISDO, {}, size_rule});
  r.add({"Constant", 1, OpClass::kISDO, {}, constant_rule});
  r.add({"Reshape", 1, OpClass::kISDOS, {}, reshape_rule});
  r.add({"Reshape", 5, OpClass::kISVDOS, {1}, reshape_rule});
  r.add({"Flatten", 1, OpClass::kISDOS, {}, flatten_rule});
  r.add({"Squeeze", 1, OpClass::kISDOS, {}, squeeze_rule});
  r.add({"Squeeze", 13, OpClass::kISVDOS, {1}, squeeze_rule});
  r.add({"Unsqueeze", 1, OpClass::kISDOS, {}, unsqueeze_rule});
  r.add({"Unsqueeze", 13, OpClass::kISVDOS, {1}, unsqueeze_rule});
  r.add({"Transpose", 1, OpClass::kISDOS, {}, transpose_rule});
  r.add({"Expand", 8, OpClass::kISVDOS, {1}, expand_rule});
  r.add({"Concat", 1, OpClass::kISDOS, {}, concat_rule});
  r.add({"Split", 1, OpClass::kISVDOS, {1}, split_rule});
  r.add({"Split", 2, OpClass::kISDOS, {}, split_rule});
  r.add({"Split", 13, OpClass::kISVDOS, {1}, split_rule});
  r.add({"Split", 18, OpClass::kISVDOS, {1}, split_18_rule});
  r.add({"ConstantOfShape", 9, OpClass::kISVDOS, {0}, constant_of_shape_rule});
  r.add({"Range", 11, OpClass::kISVDOS, {0, 1, 2}, range_rule});
}

}  // namespace sod2
