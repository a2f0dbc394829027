// Resize and its deprecated predecessor Upsample: ISVDOS, the output dims come from the `sizes`
// values (often symbolic, built by Shape → Slice → Concat) or from float `scales` applied to the
// input dims as ONNX Runtime does: floor(in * scale) in float arithmetic.
#include <cmath>
#include <string>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// The float contents of a constant tensor feeding input i: an initializer (not one a graph input
// may override), a Constant node's value, or values the engine tracked (integral ones only).
std::optional<std::vector<double>> input_floats(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return std::nullopt;
  const Graph* g = &ctx.graph();
  ValueId id = ctx.node().inputs[i];
  if (g->value(id).kind == ValueKind::kOuterScope && g->value(id).outer_graph) {
    const Value& v = g->value(id);
    g = v.outer_graph;
    id = v.outer_value;
  }
  const Value& v = g->value(id);
  const Tensor* t = nullptr;
  std::vector<double> out;
  if (v.kind == ValueKind::kInitializer) {
    t = g->initializer_of(id);
  } else if (v.kind == ValueKind::kNodeOutput && v.producer != kNoNode) {
    const Node& p = g->node(v.producer);
    if (p.op_type == "Constant" && p.domain.empty()) {
      if (const Attribute* a = p.attribute("value"); a && a->type == AttributeType::kTensor)
        t = &a->t;
      else if (const Attribute* fs = p.attribute("value_floats"))
        out.assign(fs->floats.begin(), fs->floats.end());
      else if (const Attribute* f = p.attribute("value_float"))
        out.push_back(f->f);
    }
  }
  if (t) {
    if (t->numel() > kMaxTrackedElements) return std::nullopt;
    for (int64_t k = 0; k < t->numel(); ++k) {
      const auto d = t->double_at(k);
      if (!d) return std::nullopt;
      out.push_back(*d);
    }
    return out;
  }
  if (!out.empty()) return out;
  if (const auto ints = ctx.input(i).int_values())
    return std::vector<double>(ints->begin(), ints->end());
  return std::nullopt;
}

// floor(in * scale) as ONNX Runtime computes it (float(in) * scale, truncated), exactly, when the
// scale is p / 2^e with small p and e: then the float product is exact for every in * p < 2^24,
// i.e. for every realistic dim. Other scales (1/3 rounds in float) give nullopt.
std::optional<SymExpr> scaled_dim(const SymExpr& in, double scale) {
  const auto f = static_cast<double>(static_cast<float>(scale));  // ORT holds scales as float
  int64_t q = 1;
  double p = f;
  while (p != std::floor(p) && q < (int64_t{1} << 16)) {
    p *= 2;
    q *= 2;
  }
  if (p != std::floor(p) || p > double(int64_t{1} << 16)) return std::nullopt;
  return sym::floordiv(static_cast<int64_t>(p) * in, q);
}

// The length of a rank-1 input, or -1 when unknown; 0 when absent.
int64_t input_length(const InferContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return 0;
  const TensorFact& f = ctx.input(i);
  if (f.value) return static_cast<int64_t>(f.value->size());
  if (f.dims && f.dims->size() == 1 && (*f.dims)[0])
    return (*f.dims)[0]->constant_value().value_or(-1);
  return -1;
}

struct ResizeInputs {
  int scales = -1;  // input index, or -1 when the op has none (Upsample-7 uses an attribute)
  int sizes = -1;
  std::optional<std::vector<double>> scale_attr;

  static ResizeInputs from_inputs(int scales, int sizes) { return {scales, sizes, std::nullopt}; }
  static ResizeInputs from_attr(std::vector<double> s) { return {-1, -1, std::move(s)}; }
};

Status resize_common(InferContext& ctx, const ResizeInputs& in) {
  const TensorFact& x = ctx.input(0);
  const std::string op = ctx.node().op_type;
  const int64_t scales_len =
      in.scale_attr ? static_cast<int64_t>(in.scale_attr->size())
                    : (in.scales >= 0 ? input_length(ctx, static_cast<size_t>(in.scales)) : 0);
  const int64_t sizes_len = in.sizes >= 0 ? input_length(ctx, static_cast<size_t>(in.sizes)) : 0;
  // Exactly one of them is non-empty in a valid model; sizes wins when both could be.
  enum { kScales, kSizes, kUnknown } source = kUnknown;
  int64_t len = -1;
  if (sizes_len > 0) {
    source = kSizes;
    len = sizes_len;
  } else if (scales_len > 0) {
    source = kScales;
    len = scales_len;
  } else if (sizes_len == 0 && scales_len == 0) {
    return invalid_model(op + " needs non-empty 'scales' or 'sizes'");
  } else if (scales_len == 0) {
    source = kSizes;  // sizes of unknown length
  }

  // Resize-18's `axes` restricts scales/sizes to some dims (harmless before: the attribute is
  // absent).
  int64_t rank = x.rank();
  const auto axes_attr = ctx.attr_ints("axes");
  if (rank < 0 && !axes_attr) rank = len;
  if (rank < 0) {
    ctx.set_output(0, TensorFact::unknown(x.dtype));
    return {};
  }
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) axes[static_cast<size_t>(d)] = d;
  if (axes_attr) {
    auto a = normalize_axes(*axes_attr, rank);
    if (!a) return invalid_model(op + " 'axes' out of range or repeated");
    axes = *a;
  }
  if (len >= 0 && len != static_cast<int64_t>(axes.size()))
    return invalid_model(op + (source == kSizes ? " 'sizes'" : " 'scales'") + " has " +
                         std::to_string(len) + " values for " + std::to_string(axes.size()) +
                         " dims");

  DimList out = x.dims ? *x.dims : DimList(static_cast<size_t>(rank));
  std::optional<std::vector<double>> scales;
  if (source == kScales)
    scales = in.scale_attr ? in.scale_attr : input_floats(ctx, static_cast<size_t>(in.scales));
  const TensorFact* sizes = source == kSizes ? &ctx.input(static_cast<size_t>(in.sizes)) : nullptr;
  // Sizes other than "stretch" are fitted to one common scale (Resize-18).
  const bool fitted = ctx.attr_string("keep_aspect_ratio_policy").value_or("stretch") != "stretch";
  for (size_t t = 0; t < axes.size(); ++t) {
    const auto d = static_cast<size_t>(axes[t]);
    Dim dim;
    if (sizes && sizes->value && !fitted) {
      dim = (*sizes->value)[t];
    } else if (scales) {
      const double s = (*scales)[t];
      if (!(s > 0)) return invalid_model(op + " 'scales' must be > 0");
      if (!out[d]) {
        out[d] = Dim();
        continue;
      }
      if (s == 1.0) continue;
      if (auto e = scaled_dim(*out[d], s)) dim = ctx.simplify(*e);
    }
    out[d] = dim ? dim : Dim(ctx.execution_dim(0, d, 0, sym::kDefaultMaxDim));
  }
  ctx.set_output(0, TensorFact::shaped(x.dtype, std::move(out)));
  return {};
}

Status resize_10_rule(InferContext& ctx) {
  return resize_common(ctx, ResizeInputs::from_inputs(1, -1));
}
// Resize-11/13: X, roi, scales, sizes. roi does not change the shape (ONNX Runtime and the ONNX
// reference both size the output from scales alone, tf_crop_and_resize included).
Status resize_11_rule(InferContext& ctx) {
  return resize_common(ctx, ResizeInputs::from_inputs(2, 3));
}

Status upsample_1_rule(InferContext& ctx) {
  const auto h = ctx.attr_float("height_scale"), w = ctx.attr_float("width_scale");
  if (!h || !w) return invalid_model("Upsample-1 needs 'height_scale' and 'width_scale'");
  if (ctx.input(0).dims && ctx.input(0).rank() != 4)
    return invalid_model("Upsample-1 input must be 4-D");
  return resize_common(ctx, ResizeInputs::from_attr({1.0, 1.0, *h, *w}));
}

Status upsample_7_rule(InferContext& ctx) {
  const auto s = ctx.attr_floats("scales");
  if (!s) return invalid_model("Upsample needs the 'scales' attribute");
  return resize_common(ctx, ResizeInputs::from_attr({s->begin(), s->end()}));
}

Status upsample_9_rule(InferContext& ctx) {
  return resize_common(ctx, ResizeInputs::from_inputs(1, -1));
}

}  // namespace

void register_resize_ops(OpRegistry& registry) {
  registry.add({"Resize", 10, OpClass::kISVDOS, {1}, resize_10_rule});
  registry.add({"Resize", 11, OpClass::kISVDOS, {2, 3}, resize_11_rule});
  // Resize-13 made roi and scales optional; the rule already treats them so.
  registry.add({"Resize", 13, OpClass::kISVDOS, {2, 3}, resize_11_rule});
  // Resize-18 (axes, keep_aspect_ratio_policy, antialias) and 19 (half_pixel_symmetric): the rule
  // reads axes and leaves fitted sizes to execution.
  registry.add({"Resize", 18, OpClass::kISVDOS, {2, 3}, resize_11_rule});
  registry.add({"Resize", 19, OpClass::kISVDOS, {2, 3}, resize_11_rule});
  registry.add({"Upsample", 1, OpClass::kISDOS, {}, upsample_1_rule});
  registry.add({"Upsample", 7, OpClass::kISDOS, {}, upsample_7_rule});
  registry.add({"Upsample", 9, OpClass::kISVDOS, {1}, upsample_9_rule});
}

}  // namespace sod2
