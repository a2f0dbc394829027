// Generators (random, windows, mel matrices), signal transforms (DFT, STFT), quantization, string
// and text ops, and optionals. Window and matrix sizes are input values (ISVDOS); what they cannot
// tell becomes an execution dim, as does StringNormalizer's data-dependent length.
#include <algorithm>
#include <cstdint>
#include <memory>
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
using MaybeExpr = std::optional<SymExpr>;

Status ok() { return Status::ok_status(); }

// A `dtype`-like attribute; `fallback` when absent, nullopt when not an element type.
std::optional<DataType> dtype_attr(const InferContext& ctx, const char* name, DataType fallback) {
  const auto v = ctx.attr_int(name);
  if (!v) return fallback;
  if (*v < 0 || *v > 64) return std::nullopt;
  return data_type_from_onnx(static_cast<int32_t>(*v));
}

// The scalar value of input i, simplified, when known.
MaybeExpr scalar_value(const InferContext& ctx, size_t i) {
  return simplified(ctx, input_scalar(ctx, i));
}

Status random_rule(InferContext& ctx) {
  const auto shape = ctx.attr_ints("shape");
  if (!shape) return invalid_model("attribute 'shape' is missing");
  DimList d;
  for (int64_t s : *shape) {
    if (s < 0) return invalid_model("attribute 'shape' has a negative dim " + std::to_string(s));
    d.push_back(SymExpr(s));
  }
  ctx.set_output(0, TensorFact::shaped(
                        dtype_attr(ctx, "dtype", DataType::kFloat).value_or(DataType::kUndefined),
                        std::move(d)));
  return ok();
}

// RandomNormalLike, RandomUniformLike, Bernoulli, EyeLike: the input's shape, `dtype` or the
// input's type.
Status like_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (ctx.node().op_type == "EyeLike" && in.dims && in.rank() != 2)
    return invalid_model("EyeLike needs a 2-D input, got rank " + std::to_string(in.rank()));
  same_shape_as_input(ctx, 0, 0, dtype_attr(ctx, "dtype", in.dtype).value_or(DataType::kUndefined));
  return ok();
}

Status multinomial_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  TensorFact out = TensorFact::ranked(
      dtype_attr(ctx, "dtype", DataType::kInt32).value_or(DataType::kUndefined), 2);
  if (in.dims && in.rank() == 2) (*out.dims)[0] = (*in.dims)[0];
  (*out.dims)[1] = SymExpr(ctx.attr_int("sample_size", 1));
  ctx.set_output(0, std::move(out));
  return ok();
}

// A 1-D size from input i's value, or an execution dim when it is not known yet.
Dim size_from_value(InferContext& ctx, size_t i, size_t out, size_t dim) {
  if (MaybeExpr v = scalar_value(ctx, i)) return v;
  return ctx.execution_dim(out, dim, 0, sym::kDefaultMaxDim);
}

Status window_rule(InferContext& ctx) {
  TensorFact out = TensorFact::shaped(
      dtype_attr(ctx, "output_datatype", DataType::kFloat).value_or(DataType::kUndefined),
      {size_from_value(ctx, 0, 0, 0)});
  ctx.set_output(0, std::move(out));
  return ok();
}

// [floor(dft_length / 2) + 1, num_mel_bins].
Status mel_rule(InferContext& ctx) {
  const MaybeExpr bins = scalar_value(ctx, 0), dft = scalar_value(ctx, 1);
  DimList d(2);
  d[0] = dft ? ctx.simplify(sym::floordiv(*dft, 2) + 1)
             : ctx.execution_dim(0, 0, 1, sym::kDefaultMaxDim);
  d[1] = bins ? *bins : ctx.execution_dim(0, 1, 0, sym::kDefaultMaxDim);
  ctx.set_output(
      0, TensorFact::shaped(
             dtype_attr(ctx, "output_datatype", DataType::kFloat).value_or(DataType::kUndefined),
             std::move(d)));
  return ok();
}

// DFT-17: [batch, signal..., 1|2] → the same with the transformed axis resized (dft_length, halved
// plus one when onesided) and a last dim of 2 (complex).
Status dft_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  TensorFact out = TensorFact::unknown(x.dtype);
  if (x.dims && x.rank() >= 3) {
    const int64_t rank = x.rank();
    int64_t axis = ctx.attr_int("axis", 1);
    if (ctx.opset() >= 20) {  // DFT-20: the axis is input 2 (default -2)
      const auto v = ctx.has_input(2) ? ctx.input_ints(2)
                                      : std::optional<std::vector<int64_t>>(std::in_place, 1, -2);
      if (!v || v->size() != 1) {
        ctx.set_output(0, std::move(out));
        return ok();
      }
      axis = v->front();
    }
    const auto n = normalize_axis(axis, rank);
    if (!n || *n == rank - 1)
      return invalid_model("attribute 'axis' = " + std::to_string(axis) +
                           " does not name a signal axis of a rank " + std::to_string(rank) +
                           " input");
    const size_t a = static_cast<size_t>(*n);
    DimList d = *x.dims;
    const bool onesided = ctx.attr_int("onesided", 0) != 0;
    Dim len = ctx.has_input(1) ? scalar_value(ctx, 1) : d[a];
    if (len)
      d[a] = onesided ? ctx.simplify(sym::floordiv(*len, 2) + 1) : *len;
    else if (ctx.has_input(1))
      d[a] = ctx.execution_dim(0, a, 0, sym::kDefaultMaxDim);
    else
      d[a] = std::nullopt;
    d.back() = SymExpr(2);
    out.dims = std::move(d);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// STFT: [batch, frames, bins, 2] with frames = floor((len - frame_length) / frame_step) + 1 and
// bins = frame_length (halved plus one when onesided).
Status stft_rule(InferContext& ctx) {
  const TensorFact &signal = ctx.input(0), &window = ctx.input(2);
  TensorFact out = TensorFact::ranked(signal.dtype, 4);
  DimList& d = *out.dims;
  if (signal.dims && signal.rank() == 3) d[0] = (*signal.dims)[0];
  MaybeExpr frame_length = scalar_value(ctx, 3);
  if (!ctx.has_input(3) && ctx.has_input(2) && window.dims && window.rank() == 1)
    frame_length = (*window.dims)[0];
  const MaybeExpr step = scalar_value(ctx, 1);
  const Dim len = signal.dims && signal.rank() == 3 ? (*signal.dims)[1] : std::nullopt;
  if (len && frame_length && step && ctx.prove_lt(0, *step) == Tri::kTrue)
    d[1] = ctx.simplify(sym::floordiv(*len - *frame_length, *step) + 1);
  else
    d[1] = ctx.execution_dim(0, 1, 0, dim_bounds(ctx, len).second);
  const bool onesided = ctx.attr_int("onesided", 1) != 0;
  if (frame_length)
    d[2] = onesided ? ctx.simplify(sym::floordiv(*frame_length, 2) + 1) : *frame_length;
  else
    d[2] = ctx.execution_dim(0, 2, 0, sym::kDefaultMaxDim);
  d[3] = SymExpr(2);
  ctx.set_output(0, std::move(out));
  return ok();
}

// The output's type: output_dtype's (opset 21) or, without it, the zero point's; uint8 without
// either. Both given, they must agree.
Status quantize_rule(InferContext& ctx) {
  DataType dt = ctx.has_input(2) ? ctx.input(2).dtype : DataType::kUint8;
  const Attribute* od = ctx.node().attribute("output_dtype");
  if (od && od->i != 0) {
    const std::optional<DataType> t = data_type_from_onnx(static_cast<int32_t>(od->i));
    if (!t) return invalid_model("output_dtype " + std::to_string(od->i) + " is not a data type");
    if (ctx.has_input(2) && ctx.input(2).dtype != DataType::kUndefined &&
        ctx.input(2).dtype != *t) {
      return invalid_model("output_dtype " + std::string(data_type_name(*t)) +
                           " differs from y_zero_point's type " +
                           std::string(data_type_name(ctx.input(2).dtype)));
    }
    dt = *t;
  }
  same_shape_as_input(ctx, 0, 0, dt);
  return ok();
}

Status dequantize_rule(InferContext& ctx) {
  same_shape_as_input(ctx, 0, 0, DataType::kFloat);
  return ok();
}

// DequantizeLinear-19+: the output takes x_scale's type (float16/bfloat16 scales from 19), or
// output_dtype's (23).
Status dequantize_19_rule(InferContext& ctx) {
  DataType dt = ctx.input(1).dtype;
  if (dt == DataType::kUndefined) dt = DataType::kFloat;
  const Attribute* od = ctx.node().attribute("output_dtype");
  if (od && od->i != 0) {
    const std::optional<DataType> t = data_type_from_onnx(static_cast<int32_t>(od->i));
    if (!t || (*t != DataType::kFloat && *t != DataType::kFloat16 && *t != DataType::kBFloat16))
      return invalid_model("output_dtype " + std::to_string(od->i) +
                           " is not float, float16 or bfloat16");
    dt = *t;
  }
  same_shape_as_input(ctx, 0, 0, dt);
  return ok();
}

Status dynamic_quantize_rule(InferContext& ctx) {
  same_shape_as_input(ctx, 0, 0, DataType::kUint8);
  if (ctx.has_output(1)) ctx.set_output(1, TensorFact::shaped(DataType::kFloat, {}));
  if (ctx.has_output(2)) ctx.set_output(2, TensorFact::shaped(DataType::kUint8, {}));
  return ok();
}

// [C] or [1, C] → [C'] or [1, C']: stopwords remove a data-dependent number of strings; when all
// go, one empty string remains.
Status string_normalizer_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const Attribute* stop = ctx.node().attribute("stopwords");
  if (!stop || stop->strings.empty()) {
    same_shape_as_input(ctx);
    return ok();
  }
  TensorFact out = TensorFact::unknown(DataType::kString);
  if (in.dims && (in.rank() == 1 || in.rank() == 2)) {
    DimList d = *in.dims;
    const Dim& c = d.back();
    const int64_t lo = c && ctx.prove_le(1, *c) == Tri::kTrue ? 1 : 0;
    // At most every string stays; at least the one empty string.
    d.back() = ctx.bounded_execution_dim(
        0, d.size() - 1, lo, c ? std::optional<sym::SymExpr>(sym::max(*c, 1)) : std::nullopt);
    if (d.size() == 2) d[0] = SymExpr(1);
    out.dims = std::move(d);
  }
  ctx.set_output(0, std::move(out));
  return ok();
}

// StringConcat (opset 20): numpy broadcasting of two string tensors.
Status string_concat_rule(InferContext& ctx) {
  TensorFact out = TensorFact::unknown(DataType::kString);
  out.dims = broadcast_shapes(ctx, {&ctx.input(0), &ctx.input(1)});
  ctx.set_output(0, std::move(out));
  return ok();
}

// RegexFullMatch (opset 20): a bool per string.
Status regex_full_match_rule(InferContext& ctx) {
  same_shape_as_input(ctx, 0, 0, DataType::kBool);
  return ok();
}

// StringSplit (opset 20): Y is X's shape plus the most substrings any element split into (an
// execution dim: the data decides), Z the count per element.
Status string_split_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  TensorFact y = TensorFact::unknown(DataType::kString);
  TensorFact z = TensorFact::unknown(DataType::kInt64);
  if (in.dims) {
    DimList d = *in.dims;
    z.dims = d;
    d.push_back(ctx.execution_dim(0, d.size(), 0, sym::kDefaultMaxDim));
    y.dims = std::move(d);
  }
  ctx.set_output(0, std::move(y));
  ctx.set_output(1, std::move(z));
  return ok();
}

// [C] or [N, C] → [max(ngram_indexes) + 1] or [N, max(ngram_indexes) + 1].
Status tfidf_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  const auto idx = ctx.attr_ints("ngram_indexes");
  if (!idx || idx->empty()) return invalid_model("attribute 'ngram_indexes' is missing");
  const int64_t width = *std::max_element(idx->begin(), idx->end()) + 1;
  TensorFact out = TensorFact::unknown(DataType::kFloat);
  if (in.dims && in.rank() == 1) out.dims = DimList{SymExpr(width)};
  if (in.dims && in.rank() == 2) out.dims = DimList{(*in.dims)[0], SymExpr(width)};
  ctx.set_output(0, std::move(out));
  return ok();
}

Status optional_rule(InferContext& ctx) {
  TensorFact out = TensorFact::unknown();
  out.category = TypeCategory::kOptional;
  if (ctx.has_input(0)) out.element = std::make_shared<const TensorFact>(ctx.input(0));
  ctx.set_output(0, std::move(out));
  return ok();
}

Status optional_get_rule(InferContext& ctx) {
  const TensorFact& in = ctx.input(0);
  if (in.category == TypeCategory::kOptional)
    ctx.set_output(0, in.element ? *in.element : TensorFact::unknown());
  else if (in.category == TypeCategory::kSequence || in.rank_known())
    ctx.set_output(0, in);  // a non-optional input passes through
  else
    ctx.set_output(0, TensorFact::unknown(in.dtype));
  return ok();
}

Status optional_has_rule(InferContext& ctx) {
  ctx.set_output(0, TensorFact::shaped(DataType::kBool, {}));
  return ok();
}

}  // namespace

void register_misc_ops(OpRegistry& registry) {
  auto add = [&](const char* op, int64_t since, OpClass c, std::vector<int> value_inputs,
                 ShapeRule rule) {
    registry.add({op, since, c, std::move(value_inputs), rule});
  };
  add("RandomNormal", 1, OpClass::kISDOS, {}, random_rule);
  add("RandomUniform", 1, OpClass::kISDOS, {}, random_rule);
  add("RandomNormalLike", 1, OpClass::kISDOS, {}, like_rule);
  add("RandomUniformLike", 1, OpClass::kISDOS, {}, like_rule);
  add("Bernoulli", 15, OpClass::kISDOS, {}, like_rule);
  add("Multinomial", 7, OpClass::kISDOS, {}, multinomial_rule);
  add("EyeLike", 9, OpClass::kISDO, {}, like_rule);
  add("BlackmanWindow", 17, OpClass::kISVDOS, {0}, window_rule);
  add("HammingWindow", 17, OpClass::kISVDOS, {0}, window_rule);
  add("HannWindow", 17, OpClass::kISVDOS, {0}, window_rule);
  add("MelWeightMatrix", 17, OpClass::kISVDOS, {0, 1}, mel_rule);
  add("DFT", 17, OpClass::kISVDOS, {1}, dft_rule);
  add("DFT", 20, OpClass::kISVDOS, {1, 2}, dft_rule);
  add("STFT", 17, OpClass::kISVDOS, {1, 3}, stft_rule);
  add("QuantizeLinear", 10, OpClass::kISDOS, {}, quantize_rule);
  add("DequantizeLinear", 10, OpClass::kISDOS, {}, dequantize_rule);
  // Opsets 19-23 (saturate, block_size, output_dtype, precision; the attributes this build does
  // not implement are refused at import, core/onnx/opset_changes.cpp).
  for (int64_t v : {19, 21, 23}) {
    add("QuantizeLinear", v, OpClass::kISDOS, {}, quantize_rule);
    add("DequantizeLinear", v, OpClass::kISDOS, {}, dequantize_19_rule);
  }
  add("DynamicQuantizeLinear", 11, OpClass::kISDOS, {}, dynamic_quantize_rule);
  add("StringNormalizer", 10, OpClass::kEDO, {}, string_normalizer_rule);
  add("TfIdfVectorizer", 9, OpClass::kISDOS, {}, tfidf_rule);
  add("StringConcat", 20, OpClass::kISDOS, {}, string_concat_rule);
  add("RegexFullMatch", 20, OpClass::kISDOS, {}, regex_full_match_rule);
  add("StringSplit", 20, OpClass::kEDO, {}, string_split_rule);
  add("Optional", 15, OpClass::kISDOS, {}, optional_rule);
  add("OptionalGetElement", 15, OpClass::kISDOS, {}, optional_get_rule);
  add("OptionalHasElement", 15, OpClass::kISDOS, {}, optional_has_rule);
  // Opset 18 also takes plain tensors and sequences: the rules already pass them through.
  add("OptionalGetElement", 18, OpClass::kISDOS, {}, optional_get_rule);
  add("OptionalHasElement", 18, OpClass::kISDOS, {}, optional_has_rule);
}

}  // namespace sod2
