// Convolutions, pools and the spatial rearrangements around them. The window arithmetic follows
// ONNX Runtime where it and the ONNX text disagree (ceil_mode's last-window rule); where the two
// give different shapes and neither is clearly the model's intent, the dim stays unknown.
#include <algorithm>
#include <optional>
#include <string>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };

Expected<AutoPad> read_auto_pad(const InferContext& ctx) {
  const std::string s = ctx.attr_string("auto_pad").value_or("NOTSET");
  if (s == "NOTSET" || s.empty()) return AutoPad::kNotSet;
  if (s == "SAME_UPPER") return AutoPad::kSameUpper;
  if (s == "SAME_LOWER") return AutoPad::kSameLower;
  if (s == "VALID") return AutoPad::kValid;
  return invalid_model("unknown 'auto_pad' value \"" + s + "\"");
}

// The window attributes shared by Conv*, *Pool and MaxUnpool, validated against the spatial rank.
struct Window {
  std::vector<Dim> kernel;                        // symbolic when Conv takes it from a symbolic W
  std::vector<int64_t> strides, dilations, pads;  // pads: all begins, then all ends
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
};

Status read_ints(const InferContext& ctx, std::string_view name, size_t n, int64_t fallback,
                 int64_t min_value, std::vector<int64_t>* out) {
  const auto v = ctx.attr_ints(name);
  if (!v || v->empty()) {
    out->assign(n, fallback);
    return {};
  }
  if (v->size() != n)
    return invalid_model("'" + std::string(name) + "' has " + std::to_string(v->size()) +
                         " values for " + std::to_string(n));
  for (int64_t x : *v)
    if (x < min_value)
      return invalid_model("'" + std::string(name) +
                           "' values must be >= " + std::to_string(min_value));
  *out = *v;
  return {};
}

// `read_dilations` / `read_ceil` say whether the op's opset has those attributes at all.
Status read_window(const InferContext& ctx, size_t spatial, bool read_dilations, bool read_ceil,
                   Window* w) {
  SOD2_RETURN_IF_ERROR(read_ints(ctx, "strides", spatial, 1, 1, &w->strides));
  if (read_dilations)
    SOD2_RETURN_IF_ERROR(read_ints(ctx, "dilations", spatial, 1, 1, &w->dilations));
  else
    w->dilations.assign(spatial, 1);
  SOD2_RETURN_IF_ERROR(read_ints(ctx, "pads", 2 * spatial, 0, INT64_MIN, &w->pads));
  auto ap = read_auto_pad(ctx);
  if (!ap) return ap.status();
  w->auto_pad = *ap;
  w->ceil_mode = read_ceil && ctx.attr_int("ceil_mode", 0) != 0;
  return {};
}

// One output spatial dim of a convolution or pool window sliding over `in`.
Dim window_out(InferContext& ctx, const Dim& in, const Dim& k, const Window& w, size_t i,
               bool is_pool) {
  if (!in) return {};
  const int64_t s = w.strides[i], d = w.dilations[i];
  if (w.auto_pad == AutoPad::kSameUpper || w.auto_pad == AutoPad::kSameLower) {
    // ONNX: ceil(in / stride). ONNX Runtime's pools pad for the undilated kernel, which gives
    // fewer outputs when dilation > 1; the two disagree there.
    if (is_pool && d != 1) return {};
    return ctx.simplify(sym::ceildiv(*in, s));
  }
  if (!k) return {};
  const bool valid = w.auto_pad == AutoPad::kValid;
  const int64_t pb = valid ? 0 : w.pads[i], pe = valid ? 0 : w.pads[w.strides.size() + i];
  const SymExpr dk = d * (*k - 1);  // dilated kernel extent minus one
  const SymExpr num = *in + (pb + pe) - dk - 1;
  if (!w.ceil_mode) return ctx.simplify(sym::floordiv(num, s) + 1);
  // ceil_mode: ceil(num / s) + 1 windows, minus the last one if it would start past the input
  // and the begin padding (ONNX Runtime, onnx/onnx#5741, PyTorch): with q = ceil(num / s) and
  // f = floor((in + pb - 1) / s) that is q + 1 when q <= f, else q.
  const SymExpr q = sym::ceildiv(num, s);
  const SymExpr f = sym::floordiv(*in + (pb - 1), s);
  if (ctx.prove_le(q, f) == Tri::kTrue) return ctx.simplify(q + 1);
  if (ctx.prove_lt(f, q) == Tri::kTrue) return ctx.simplify(q);
  // When the end padding fits in the kernel, q <= f + 1 and the rule is min(q, f) + 1.
  if (ctx.prove_le(pe, dk) == Tri::kTrue) return ctx.simplify(sym::min(q, f) + 1);
  return ctx.simplify(sym::min(q + 1, sym::max(q, f + 1)));
}

// [N, C_or_M, spatial...] where each spatial dim slides `w` over X's.
DimList window_dims(InferContext& ctx, const TensorFact& x, const Dim& channels, const Window& w,
                    bool is_pool) {
  DimList out{dim_at(x, 0), channels};
  for (size_t i = 0; i < w.kernel.size(); ++i)
    out.push_back(window_out(ctx, dim_at(x, 2 + i), w.kernel[i], w, i, is_pool));
  for (Dim& d : out) d = simplified(ctx, d);
  return out;
}

// The spatial rank from X, W or kernel_shape; -1 when none tells. Checks they agree.
Status spatial_rank(const TensorFact& x, const TensorFact* w, const InferContext& ctx,
                    std::string_view op, int64_t* rank) {
  *rank = -1;
  auto agree = [&](int64_t r, const char* what) -> Status {
    if (r < 0) return {};
    if (*rank >= 0 && *rank != r)
      return invalid_model(std::string(op) + ": " + what + " implies " + std::to_string(r) +
                           " spatial dims, not " + std::to_string(*rank));
    *rank = r;
    return {};
  };
  if (x.dims) {
    if (x.rank() < 3) return invalid_model(std::string(op) + " input X must have rank >= 3");
    SOD2_RETURN_IF_ERROR(agree(x.rank() - 2, "input X"));
  }
  if (w && w->dims) {
    if (w->rank() < 3) return invalid_model(std::string(op) + " input W must have rank >= 3");
    SOD2_RETURN_IF_ERROR(agree(w->rank() - 2, "input W"));
  }
  if (const auto ks = ctx.attr_ints("kernel_shape"))
    SOD2_RETURN_IF_ERROR(agree(static_cast<int64_t>(ks->size()), "'kernel_shape'"));
  return {};
}

// Kernel dims from the attribute, else from W's trailing dims.
std::vector<Dim> kernel_dims(InferContext& ctx, const TensorFact* w, size_t spatial) {
  std::vector<Dim> k(spatial);
  const auto attr = ctx.attr_ints("kernel_shape");
  for (size_t i = 0; i < spatial; ++i) {
    const Dim wk = w ? dim_at(*w, 2 + i) : Dim();
    if (attr) {
      k[i] = SymExpr((*attr)[i]);
      require_if_known(ctx, k[i], wk, "'kernel_shape' must match W's spatial dims");
    } else {
      k[i] = wk;
    }
  }
  return k;
}

// Conv, ConvInteger, QLinearConv: X [N, C, D...], W [M, C/group, k...], optional bias [M].
Status conv_common(InferContext& ctx, size_t ix, size_t iw, int64_t ib, DataType dtype,
                   std::string_view op) {
  const TensorFact& x = ctx.input(ix);
  const TensorFact& wf = ctx.input(iw);
  int64_t spatial;
  SOD2_RETURN_IF_ERROR(spatial_rank(x, &wf, ctx, op, &spatial));
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1) return invalid_model(std::string(op) + " 'group' must be >= 1");
  const Dim m = dim_at(wf, 0);
  const Dim wc = dim_at(wf, 1);
  if (wc)
    require_if_known(ctx, dim_at(x, 1), ctx.simplify(*wc * group),
                     "X channels must equal W.dim1 * group");
  if (ib >= 0 && ctx.has_input(static_cast<size_t>(ib)))
    require_if_known(ctx, dim_at(ctx.input(static_cast<size_t>(ib)), 0), m,
                     "bias length must equal the output channels");
  if (spatial < 0) {
    ctx.set_output(0, TensorFact::unknown(dtype));
    return {};
  }
  Window w;
  SOD2_RETURN_IF_ERROR(read_window(ctx, static_cast<size_t>(spatial), true, false, &w));
  w.kernel = kernel_dims(ctx, &wf, static_cast<size_t>(spatial));
  ctx.set_output(0, TensorFact::shaped(dtype, window_dims(ctx, x, m, w, false)));
  return {};
}

Status conv_rule(InferContext& ctx) {
  return conv_common(ctx, 0, 1, 2, ctx.input(0).dtype, "Conv");
}
Status conv_integer_rule(InferContext& ctx) {
  return conv_common(ctx, 0, 1, -1, DataType::kInt32, "ConvInteger");
}
// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B.
Status qlinear_conv_rule(InferContext& ctx) {
  return conv_common(ctx, 0, 3, 8, ctx.input(7).dtype, "QLinearConv");
}

// DeformConv-19: X [N, C, D...], W [oC, C/group, k...], offset [N, G * prod(k) * r, D'...],
// optional B [oC] and mask [N, G * prod(k), D'...] (G = offset_group, r = the spatial rank) ->
// [N, oC, D'...] with D' as Conv's. The spec is N-D, so the rule is; the CPU kernel runs 2-D.
Status deform_conv_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const TensorFact& wf = ctx.input(1);
  const TensorFact& offset = ctx.input(2);
  const TensorFact* mask = ctx.has_input(4) ? &ctx.input(4) : nullptr;
  int64_t spatial;
  SOD2_RETURN_IF_ERROR(spatial_rank(x, &wf, ctx, "DeformConv", &spatial));
  for (const TensorFact* f : {&offset, mask}) {
    if (!f || !f->dims) continue;
    if (f->rank() < 3 || (spatial >= 0 && f->rank() != spatial + 2))
      return invalid_model(std::string("DeformConv ") + (f == mask ? "mask" : "offset") +
                           " must have the rank of X, at least 3");
    spatial = f->rank() - 2;
  }
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t offset_group = ctx.attr_int("offset_group", 1);
  if (group < 1) return invalid_model("DeformConv 'group' must be >= 1");
  if (offset_group < 1) return invalid_model("DeformConv 'offset_group' must be >= 1");
  const Dim m = dim_at(wf, 0);
  if (const Dim wc = dim_at(wf, 1))
    require_if_known(ctx, dim_at(x, 1), ctx.simplify(*wc * group),
                     "DeformConv X channels must equal W.dim1 * group");
  if (ctx.has_input(3))
    require_if_known(ctx, dim_at(ctx.input(3), 0), m,
                     "DeformConv bias length must equal the output channels");
  Dim n = dim_at(x, 0);
  require_if_known(ctx, n, dim_at(offset, 0), "DeformConv offset batch must equal X's");
  if (mask) require_if_known(ctx, n, dim_at(*mask, 0), "DeformConv mask batch must equal X's");
  if (!n) n = dim_at(offset, 0);
  if (spatial < 0) {
    ctx.set_output(0, TensorFact::unknown(x.dtype));
    return {};
  }
  const auto r = static_cast<size_t>(spatial);
  Window w;
  SOD2_RETURN_IF_ERROR(read_window(ctx, r, true, false, &w));
  w.kernel = kernel_dims(ctx, &wf, r);
  std::optional<SymExpr> taps = SymExpr(offset_group);  // offset groups x kernel taps
  for (const Dim& k : w.kernel)
    taps = k && taps ? std::optional<SymExpr>(*taps * *k) : std::nullopt;
  if (taps) {
    require_if_known(ctx, dim_at(offset, 1), ctx.simplify(*taps * spatial),
                     "DeformConv offset channels must be offset_group * prod(kernel) * rank");
    if (mask)
      require_if_known(ctx, dim_at(*mask, 1), ctx.simplify(*taps),
                       "DeformConv mask channels must be offset_group * prod(kernel)");
  }
  DimList out = window_dims(ctx, x, m, w, false);
  out[0] = n;
  for (size_t i = 0; i < r; ++i) {
    for (const TensorFact* f : {&offset, mask})
      if (f)
        require_if_known(ctx, out[2 + i], dim_at(*f, 2 + i),
                         "DeformConv offset and mask spatial dims must be the output's");
    if (!out[2 + i]) out[2 + i] = dim_at(offset, 2 + i);
  }
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

// X [N, C, D...], W [C, M/group, k...] -> [N, M, D'...].
Status conv_transpose_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const TensorFact& wf = ctx.input(1);
  const DataType dtype = x.dtype;
  int64_t spatial;
  SOD2_RETURN_IF_ERROR(spatial_rank(x, &wf, ctx, "ConvTranspose", &spatial));
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1) return invalid_model("ConvTranspose 'group' must be >= 1");
  require_if_known(ctx, dim_at(x, 1), dim_at(wf, 0), "X channels must equal W.dim0");
  const Dim wm = dim_at(wf, 1);
  const Dim m = wm ? Dim(ctx.simplify(*wm * group)) : Dim();
  if (ctx.has_input(2))
    require_if_known(ctx, dim_at(ctx.input(2), 0), m, "bias length must equal the output channels");
  if (spatial < 0) {
    ctx.set_output(0, TensorFact::unknown(dtype));
    return {};
  }
  const auto n = static_cast<size_t>(spatial);
  Window w;
  SOD2_RETURN_IF_ERROR(read_window(ctx, n, true, false, &w));
  w.kernel = kernel_dims(ctx, &wf, n);
  std::vector<int64_t> adj;
  SOD2_RETURN_IF_ERROR(read_ints(ctx, "output_padding", n, 0, 0, &adj));
  DimList out{dim_at(x, 0), m};
  if (const auto os = ctx.attr_ints("output_shape"); os && !os->empty()) {
    // Given outright (the pads are derived from it); N and C may be included.
    if (os->size() != n && os->size() != n + 2)
      return invalid_model("ConvTranspose 'output_shape' has " + std::to_string(os->size()) +
                           " values for " + std::to_string(n) + " spatial dims");
    for (size_t i = os->size() - n; i < os->size(); ++i) out.push_back(SymExpr((*os)[i]));
  } else {
    for (size_t i = 0; i < n; ++i) {
      const Dim in = dim_at(x, 2 + i);
      const Dim& k = w.kernel[i];
      if (!in || !k) {
        out.push_back(Dim());
        continue;
      }
      const int64_t s = w.strides[i];
      const SymExpr full = s * (*in - 1) + adj[i] + w.dilations[i] * (*k - 1) + 1;
      switch (w.auto_pad) {
        case AutoPad::kNotSet: out.push_back(full - (w.pads[i] + w.pads[n + i])); break;
        case AutoPad::kValid: out.push_back(full); break;
        default:
          // ONNX says in * stride; ONNX Runtime pads down to it but never pads negatively, so
          // the two agree only when the unpadded output reaches in * stride.
          if (ctx.prove_le(*in * s, full) == Tri::kTrue)
            out.push_back(*in * s);
          else
            out.push_back(Dim());
      }
    }
  }
  for (Dim& d : out) d = simplified(ctx, d);
  ctx.set_output(0, TensorFact::shaped(dtype, std::move(out)));
  return {};
}

enum class Pool { kMax, kAverage, kLp };

// The flags say which attributes the op's opset has: ceil_mode from MaxPool/AveragePool-10 and
// LpPool-18, dilations from MaxPool-10, AveragePool-19 and LpPool-18.
template <Pool kPool, bool kCeil, bool kDilations>
Status pool_rule(InferContext& ctx) {
  const char* op = kPool == Pool::kMax       ? "MaxPool"
                   : kPool == Pool::kAverage ? "AveragePool"
                                             : "LpPool";
  const TensorFact& x = ctx.input(0);
  if (!ctx.attr_ints("kernel_shape"))
    return invalid_model(std::string(op) + " needs 'kernel_shape'");
  int64_t spatial;
  SOD2_RETURN_IF_ERROR(spatial_rank(x, nullptr, ctx, op, &spatial));
  Window w;
  SOD2_RETURN_IF_ERROR(read_window(ctx, static_cast<size_t>(spatial), kDilations, kCeil, &w));
  w.kernel = kernel_dims(ctx, nullptr, static_cast<size_t>(spatial));
  const DimList dims = window_dims(ctx, x, dim_at(x, 1), w, true);
  ctx.set_output(0, TensorFact::shaped(x.dtype, dims));
  if (kPool == Pool::kMax && ctx.has_output(1))
    ctx.set_output(1, TensorFact::shaped(DataType::kInt64, dims));
  return {};
}

Status global_pool_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  if (!x.dims) {
    ctx.set_output(0, TensorFact::unknown(x.dtype));
    return {};
  }
  if (x.rank() < 2) return invalid_model(ctx.node().op_type + " input must have rank >= 2");
  DimList out{(*x.dims)[0], (*x.dims)[1]};
  out.resize(x.dims->size(), SymExpr(1));
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

// X [N, C, H, W], rois [num_rois, 5] -> [num_rois, C, pooled_h, pooled_w].
Status max_roi_pool_rule(InferContext& ctx) {
  const auto pooled = ctx.attr_ints("pooled_shape");
  if (!pooled || pooled->size() != 2)
    return invalid_model("MaxRoiPool needs 'pooled_shape' with 2 values");
  const TensorFact& x = ctx.input(0);
  ctx.set_output(0, TensorFact::shaped(x.dtype, {dim_at(ctx.input(1), 0), dim_at(x, 1),
                                                 SymExpr((*pooled)[0]), SymExpr((*pooled)[1])}));
  return {};
}

// X [N, C, H, W], rois [num_rois, 4], batch_indices [num_rois] -> [num_rois, C, oh, ow].
Status roi_align_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  Dim rois = dim_at(ctx.input(1), 0);
  const Dim idx = dim_at(ctx.input(2), 0);
  require_if_known(ctx, rois, idx, "rois and batch_indices must have the same length");
  if (!rois) rois = idx;
  ctx.set_output(
      0, TensorFact::shaped(x.dtype, {rois, dim_at(x, 1), SymExpr(ctx.attr_int("output_height", 1)),
                                      SymExpr(ctx.attr_int("output_width", 1))}));
  return {};
}

// X [N, C, D...], I [same], optional output_shape (a value input).
Status max_unpool_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  if (!ctx.attr_ints("kernel_shape")) return invalid_model("MaxUnpool needs 'kernel_shape'");
  int64_t spatial;
  SOD2_RETURN_IF_ERROR(spatial_rank(x, nullptr, ctx, "MaxUnpool", &spatial));
  if (ctx.has_input(2)) {
    const TensorFact& shape = ctx.input(2);
    if (shape.value) {
      if (spatial >= 0 && static_cast<int64_t>(shape.value->size()) != spatial + 2)
        return invalid_model("MaxUnpool output_shape length must equal the rank of X");
      ctx.set_output(0, TensorFact::shaped(x.dtype, values_to_dims(*shape.value)));
      return {};
    }
    int64_t rank = spatial >= 0 ? spatial + 2 : -1;
    if (rank < 0 && shape.rank() == 1 && (*shape.dims)[0])
      rank = (*shape.dims)[0]->constant_value().value_or(-1);
    if (rank < 0) {
      ctx.set_output(0, TensorFact::unknown(x.dtype));
      return {};
    }
    ctx.set_output(0, TensorFact::shaped(x.dtype, execution_dims(ctx, 0, rank)));
    return {};
  }
  if (spatial < 0) {
    ctx.set_output(0, TensorFact::unknown(x.dtype));
    return {};
  }
  const auto n = static_cast<size_t>(spatial);
  Window w;
  SOD2_RETURN_IF_ERROR(read_window(ctx, n, false, false, &w));
  w.kernel = kernel_dims(ctx, nullptr, n);
  DimList out{dim_at(x, 0), dim_at(x, 1)};
  for (size_t i = 0; i < n; ++i) {
    const Dim in = dim_at(x, 2 + i);
    out.push_back(in ? Dim(ctx.simplify((*in - 1) * w.strides[i] + *w.kernel[i] -
                                        (w.pads[i] + w.pads[n + i])))
                     : Dim());
  }
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

template <bool kToSpace>
Status block_rearrange_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const auto b = ctx.attr_int("blocksize");
  if (!b || *b < 1) return invalid_model(ctx.node().op_type + " needs 'blocksize' >= 1");
  if (!x.dims) {
    ctx.set_output(0, TensorFact::ranked(x.dtype, 4));
    return {};
  }
  if (x.rank() != 4) return invalid_model(ctx.node().op_type + " input must be 4-D");
  const DimList& d = *x.dims;
  // The divisions are exact in every valid model (the op requires divisibility).
  auto shrink = [&](const Dim& v, int64_t f) {
    return v ? Dim(ctx.simplify(sym::floordiv(*v, f))) : Dim();
  };
  auto grow = [&](const Dim& v, int64_t f) { return v ? Dim(ctx.simplify(*v * f)) : Dim(); };
  DimList out = kToSpace ? DimList{d[0], shrink(d[1], *b * *b), grow(d[2], *b), grow(d[3], *b)}
                         : DimList{d[0], grow(d[1], *b * *b), shrink(d[2], *b), shrink(d[3], *b)};
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

// X [N, C, D...], grid [N, D_out..., spatial] -> [N, C, D_out...].
Status grid_sample_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const TensorFact& grid = ctx.input(1);
  if (x.dims && x.rank() < 3) return invalid_model("GridSample input X must have rank >= 3");
  if (grid.dims && grid.rank() < 3) return invalid_model("GridSample grid must have rank >= 3");
  if (x.dims && grid.dims && x.rank() != grid.rank())
    return invalid_model("GridSample X and grid must have the same rank");
  Dim n = dim_at(x, 0);
  require_if_known(ctx, n, dim_at(grid, 0), "GridSample X and grid batch must match");
  if (!n) n = dim_at(grid, 0);
  if (x.dims && grid.dims)
    require_if_known(ctx, grid.dims->back(), SymExpr(x.rank() - 2),
                     "GridSample grid's last dim must be the number of spatial dims");
  if (!grid.dims) {
    TensorFact f = x.dims ? TensorFact::ranked(x.dtype, x.rank()) : TensorFact::unknown(x.dtype);
    if (f.dims) {
      (*f.dims)[0] = n;
      (*f.dims)[1] = dim_at(x, 1);
    }
    ctx.set_output(0, std::move(f));
    return {};
  }
  DimList out{n, dim_at(x, 1)};
  out.insert(out.end(), grid.dims->begin() + 1, grid.dims->end() - 1);
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

// Col2Im-18: [N, C * prod(block_shape), L] -> [N, C, image_shape...].
Status col2im_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto* image = input_values(ctx, 1);
  const auto* block = input_values(ctx, 2);
  const TensorFact& image_fact = ctx.input(1);
  size_t spatial = image ? image->size() : 0;
  if (!image && image_fact.dims && image_fact.dims->size() == 1 && (*image_fact.dims)[0] &&
      (*image_fact.dims)[0]->constant_value()) {
    // The declared length of image_shape comes from the model: one dim is pushed per value, so
    // a length of 2^40 (or a negative one, cast to size_t) must not reach the loop below. The
    // output rank is 2 + the length, and import refuses ranks above 64.
    const int64_t declared = *(*image_fact.dims)[0]->constant_value();
    if (declared < 0 || declared > 62)
      return invalid_model("Col2Im: image_shape has " + std::to_string(declared) +
                           " values; the output rank 2 + that must be 1 to 64");
    spatial = static_cast<size_t>(declared);
  }
  if (spatial == 0) {
    ctx.set_output(0, TensorFact::unknown(in.dtype));
    return {};
  }
  DimList out;
  out.push_back(dim_at(in, 0));
  Dim channels;
  if (block && in.dims && in.dims->size() == 3 && (*in.dims)[1]) {
    SymExpr prod(int64_t{1});
    for (const SymExpr& b : *block) prod = prod * b;
    channels = ctx.simplify(sym::floordiv(*(*in.dims)[1], prod));
  }
  out.push_back(channels ? channels : Dim(ctx.execution_dim(0, 1, 0, sym::kDefaultMaxDim)));
  for (size_t i = 0; i < spatial; ++i)
    out.push_back(image ? Dim((*image)[i])
                        : Dim(ctx.execution_dim(0, i + 2, 0, sym::kDefaultMaxDim)));
  ctx.set_output(0, TensorFact::shaped(in.dtype, out));
  return {};
}

// AffineGrid-20: size [N, C, H, W] -> grid [N, H, W, 2]; [N, C, D, H, W] -> [N, D, H, W, 3].
Status affine_grid_rule(InferContext& ctx) {
  const TensorFact& theta = ctx.input(0);
  const auto* size = input_values(ctx, 1);
  if (!size || (size->size() != 4 && size->size() != 5)) {
    ctx.set_output(0, TensorFact::unknown(theta.dtype));
    return {};
  }
  DimList out{(*size)[0]};
  for (size_t i = 2; i < size->size(); ++i) out.push_back((*size)[i]);
  out.push_back(SymExpr(static_cast<int64_t>(size->size() - 2)));
  ctx.set_output(0, TensorFact::shaped(theta.dtype, out));
  return {};
}

}  // namespace

void register_conv_pool_ops(OpRegistry& registry) {
  registry.add({"Conv", 1, OpClass::kISDOS, {}, conv_rule});
  registry.add({"ConvInteger", 10, OpClass::kISDOS, {}, conv_integer_rule});
  registry.add({"QLinearConv", 10, OpClass::kISDOS, {}, qlinear_conv_rule});
  registry.add({"ConvTranspose", 1, OpClass::kISDOS, {}, conv_transpose_rule});
  registry.add({"DeformConv", 19, OpClass::kISDOS, {}, deform_conv_rule});
  // MaxPool-8 adds the Indices output (set when the node has it); -10 ceil_mode and dilations.
  registry.add({"MaxPool", 1, OpClass::kISDOS, {}, pool_rule<Pool::kMax, false, false>});
  registry.add({"MaxPool", 8, OpClass::kISDOS, {}, pool_rule<Pool::kMax, false, false>});
  registry.add({"MaxPool", 10, OpClass::kISDOS, {}, pool_rule<Pool::kMax, true, true>});
  registry.add({"AveragePool", 1, OpClass::kISDOS, {}, pool_rule<Pool::kAverage, false, false>});
  registry.add({"AveragePool", 10, OpClass::kISDOS, {}, pool_rule<Pool::kAverage, true, false>});
  registry.add({"AveragePool", 19, OpClass::kISDOS, {}, pool_rule<Pool::kAverage, true, true>});
  registry.add({"LpPool", 1, OpClass::kISDOS, {}, pool_rule<Pool::kLp, false, false>});
  registry.add({"LpPool", 18, OpClass::kISDOS, {}, pool_rule<Pool::kLp, true, true>});
  registry.add({"GlobalAveragePool", 1, OpClass::kISDOS, {}, global_pool_rule});
  registry.add({"GlobalMaxPool", 1, OpClass::kISDOS, {}, global_pool_rule});
  registry.add({"GlobalLpPool", 1, OpClass::kISDOS, {}, global_pool_rule});
  registry.add({"MaxRoiPool", 1, OpClass::kISDOS, {}, max_roi_pool_rule});
  registry.add({"RoiAlign", 10, OpClass::kISDOS, {}, roi_align_rule});
  registry.add({"MaxUnpool", 9, OpClass::kISVDOS, {2}, max_unpool_rule});
  registry.add({"DepthToSpace", 1, OpClass::kISDOS, {}, block_rearrange_rule<true>});
  registry.add({"SpaceToDepth", 1, OpClass::kISDOS, {}, block_rearrange_rule<false>});
  registry.add({"GridSample", 16, OpClass::kISDOS, {}, grid_sample_rule});
  // GridSample-20: N-D with modes linear/cubic; the rule is rank-generic already.
  registry.add({"GridSample", 20, OpClass::kISDOS, {}, grid_sample_rule});
  registry.add({"Col2Im", 18, OpClass::kISVDOS, {1, 2}, col2im_rule});
  registry.add({"AffineGrid", 20, OpClass::kISVDOS, {1}, affine_grid_rule});
}

}  // namespace sod2
