// QuantizeLinear, DequantizeLinear (opsets 10 and 13: per tensor, from 13 per axis, from 19
// to and from the float8 types, from 21 blocked along an axis) and
// DynamicQuantizeLinear (11), with the arithmetic of quantize.h. Also registers the quantized
// kernels of integer_gemm.cpp.
#include "runtime/kernels/linalg/quantize.h"
#include "runtime/kernels/math/quantize_rows.h"
#include "runtime/tensor/float8.h"
#include "runtime/tensor/narrow_float.h"

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

namespace sod2::rt::quant {
namespace {

Status check_axis(const char* op, int64_t axis, int rank, int* out) {
  if (axis < -rank || axis >= rank) {
    return invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                            " is out of range for rank " + std::to_string(rank));
  }
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return Status::ok_status();
}

int64_t product(const Shape& s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s[i];
  return n;
}

// The [outer, dim, inner] view of x around the quantization axis, and the checked scale and
// zero point. Per tensor when the scale holds one value (the axis is then not read).
struct AxisView {
  int64_t outer = 1, dim = 1, inner = 1;
  QuantParam scale, zero_point;
  // Blocked (opset 21, block_size > 0): the parameters have x's shape with the axis dim cut into
  // blocks of `block`; element (o, a, k) of the [outer, dim, inner] view reads parameter
  // (o, a / block, k) of a [outer, blocks, inner] view.
  int64_t block = 0, blocks = 0;
  int64_t param_index(int64_t row, int64_t k) const {
    return block > 0 ? ((row / dim) * blocks + (row % dim) / block) * inner + k : row % dim;
  }
};

// Blocked parameters: x's rank and dims, except ceil(dim / block) along the axis; a zero point of
// the scale's shape.
Status blocked_view(const char* op, const char* scale_name, const char* zp_name, const Tensor& x,
                    const Tensor& scale, const Tensor* zp, DType zp_dtype, int axis, int64_t block,
                    AxisView* v) {
  const int rank = x.shape.rank();
  v->outer = product(x.shape, 0, axis);
  v->dim = x.shape[axis];
  v->inner = product(x.shape, axis + 1, rank);
  v->block = block;
  v->blocks = (v->dim + block - 1) / block;
  Shape want = x.shape;
  want[axis] = v->blocks;
  if (scale.dtype != DType::kFloat || scale.shape != want) {
    return invalid_argument(std::string(op) + ": with block_size " + std::to_string(block) +
                            " on axis " + std::to_string(axis) + ", " + scale_name +
                            " must be float32 " + want.to_string() + ", got " +
                            dtype_name(scale.dtype) + " " + scale.shape.to_string());
  }
  v->scale = QuantParam{&scale, scale.numel()};
  if (zp) {
    if (zp->dtype != zp_dtype || zp->shape != want) {
      return invalid_argument(std::string(op) + ": " + zp_name + " must be " +
                              dtype_name(zp_dtype) + " " + want.to_string() + " like " +
                              scale_name + ", got " + dtype_name(zp->dtype) + " " +
                              zp->shape.to_string());
    }
    v->zero_point = QuantParam{zp, zp->numel()};
  }
  return Status::ok_status();
}

Status axis_view(const char* op, const char* scale_name, const char* zp_name, const Tensor& x,
                 const Tensor* scale, const Tensor* zp, DType zp_dtype, int64_t axis_attr,
                 bool per_axis_ok, int64_t block, AxisView* v) {
  if (!scale) return invalid_argument(std::string(op) + ": input '" + scale_name + "' is missing");
  if (block > 0) {
    int axis = 0;
    SOD2_RETURN_IF_ERROR(check_axis(op, axis_attr, x.shape.rank(), &axis));
    return blocked_view(op, scale_name, zp_name, x, *scale, zp, zp_dtype, axis, block, v);
  }
  v->inner = x.numel();  // per tensor: one run
  if (scale->numel() != 1) {
    const int rank = x.shape.rank();
    int axis = 0;
    if (per_axis_ok) SOD2_RETURN_IF_ERROR(check_axis(op, axis_attr, rank, &axis));
    v->outer = product(x.shape, 0, axis);
    v->dim = rank > 0 ? x.shape[axis] : 1;
    v->inner = product(x.shape, axis + 1, rank);
  }
  SOD2_RETURN_IF_ERROR(
      read_quant_param(op, scale_name, scale, true, DType::kFloat, v->dim, per_axis_ok, &v->scale));
  if (zp) {
    SOD2_RETURN_IF_ERROR(
        read_quant_param(op, zp_name, zp, false, zp_dtype, v->dim, per_axis_ok, &v->zero_point));
    if (v->zero_point.count != v->scale.count) {
      return invalid_argument(std::string(op) + ": " + scale_name + " " + scale->shape.to_string() +
                              " and " + zp_name + " " + zp->shape.to_string() + " differ in size");
    }
  }
  return Status::ok_status();
}

// A float8 zero point's value (opset 19). ONNX keeps the formula of the integer types for float8
// (the zero point is added before rounding, and removed after widening), though models leave it 0.
float float8_zero_point(const QuantParam& p, int64_t i) {
  if (!p.t) return 0.0f;
  return float8_to_float(p.t->dtype, p.t->as<const uint8_t>()[p.count == 1 ? 0 : i]);
}

// Runs f(row, begin, end) over runs of elements [begin, end) of one row (an [outer, dim] index
// of the view: one axis index), in parallel chunks of about kQuantGrain elements (per tensor: one
// row, the whole tensor in chunks).
template <class F>
void for_runs(ThreadPool& pool, const AxisView& v, F&& f) {
  const int64_t total = v.outer * v.dim * v.inner;
  pool.parallel_for(total, kQuantGrain, [&](int64_t b, int64_t e) {
    for (int64_t pos = b; pos < e;) {
      const int64_t row = pos / v.inner;
      const int64_t end = std::min(e, (row + 1) * v.inner);
      f(row, pos, end);
      pos = end;
    }
  });
}

// ---- QuantizeLinear -------------------------------------------------------------------------

class QuantizeLinearKernel final : public Kernel {
 public:
  QuantizeLinearKernel(int64_t axis, bool per_axis_ok, int64_t block, DType declared, bool saturate)
      : axis_(axis),
        per_axis_ok_(per_axis_ok),
        block_(block),
        declared_(declared),
        saturate_(saturate) {}

  Status run(KernelContext& ctx) override {
    constexpr const char* kOp = "QuantizeLinear";
    const Tensor* x = ctx.input(0);
    const Tensor* zp = ctx.input(2);
    if (!x) return invalid_argument("QuantizeLinear: input x is missing");
    if (x->dtype != DType::kFloat && x->dtype != DType::kInt32) {
      return unsupported(std::string(kOp) + ": x of type " + dtype_name(x->dtype) +
                         " is not supported (float32 or int32)");
    }
    // Without a zero point, the type output_dtype (opset 21) declares, else uint8.
    const DType out = zp ? zp->dtype : declared_ != DType::kUndefined ? declared_ : DType::kUint8;
    if (zp && declared_ != DType::kUndefined && zp->dtype != declared_) {
      return invalid_argument(std::string(kOp) + ": y_zero_point's type " + dtype_name(zp->dtype) +
                              " differs from the output's, " + dtype_name(declared_) +
                              " (output_dtype)");
    }
    if (out != DType::kUint8 && out != DType::kInt8 && !is_float8(out)) {
      return unsupported(std::string(kOp) + ": output type " + dtype_name(out) +
                         " is not supported (uint8, int8 or a float8 type)");
    }
    AxisView v;
    SOD2_RETURN_IF_ERROR(axis_view(kOp, "y_scale", "y_zero_point", *x, ctx.input(1), zp, out, axis_,
                                   per_axis_ok_, block_, &v));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out, x->shape));
    if (y->numel() == 0) return Status::ok_status();
    if (is_float8(out)) {
      run_float8(ctx, *x, v, out, saturate_, y->as<uint8_t>());
    } else if (out == DType::kUint8) {
      run_typed<uint8_t>(ctx, *x, v, y->as<uint8_t>());
    } else {
      run_typed<int8_t>(ctx, *x, v, y->as<int8_t>());
    }
    return Status::ok_status();
  }

 private:
  // saturate(x / scale + zero_point), rounded to nearest even in the float8 type `out`; the sum
  // is taken in float, as ONNX's reference does.
  static void run_float8(KernelContext& ctx, const Tensor& x, const AxisView& v, DType out,
                         bool saturate, uint8_t* y) {
    const bool f32 = x.dtype == DType::kFloat;
    for_runs(ctx.pool(), v, [&](int64_t row, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t j = v.block > 0 ? v.param_index(row, i - row * v.inner) : row % v.dim;
        const float xi =
            f32 ? x.as<const float>()[i] : static_cast<float>(x.as<const int32_t>()[i]);
        y[i] = float8_from_float(out, xi / v.scale.scale(j) + float8_zero_point(v.zero_point, j),
                                 saturate);
      }
    });
  }

  template <class Q>
  static void run_typed(KernelContext& ctx, const Tensor& x, const AxisView& v, Q* y) {
    const bool f32 = x.dtype == DType::kFloat;
    for_runs(ctx.pool(), v, [&](int64_t row, int64_t b, int64_t e) {
      if (v.block > 0) {  // a parameter per element
        for (int64_t i = b; i < e; ++i) {
          const int64_t j = v.param_index(row, i - row * v.inner);
          const float xi =
              f32 ? x.as<const float>()[i] : static_cast<float>(x.as<const int32_t>()[i]);
          y[i] = quantize_value<Q>(xi, v.scale.scale(j), v.zero_point.zero_point(j));
        }
        return;
      }
      const float scale = v.scale.scale(row % v.dim);
      const int32_t zp = v.zero_point.zero_point(row % v.dim);
      if (f32) {
        quantize_row(x.as<const float>() + b, e - b, scale, zp, y + b);
      } else {
        const int32_t* in = x.as<const int32_t>();
        for (int64_t i = b; i < e; ++i)
          y[i] = quantize_value<Q>(static_cast<float>(in[i]), scale, zp);
      }
    });
  }

  int64_t axis_;
  bool per_axis_ok_;
  int64_t block_;
  DType declared_;  // the node's output type, as the model declares it (kUndefined: unknown)
  bool saturate_;   // float8 outputs only (opset 19)
};

// block_size (opset 21): 0 per tensor or per axis, > 0 blocked.
Expected<int64_t> block_size(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t block, node.attrs.get_int("block_size", 0));
  if (block < 0)
    return invalid_model(node.op_type + ": block_size must be >= 0, got " + std::to_string(block));
  return block;
}

Expected<std::unique_ptr<Kernel>> make_quantize_linear(const NodeInfo& node) {
  if (node.input_present.size() < 2 || !node.input_present[0] || !node.input_present[1])
    return invalid_model("QuantizeLinear: needs inputs x and y_scale");
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t block, block_size(node));
  const DType declared = node.output_dtypes.empty() ? DType::kUndefined : node.output_dtypes[0];
  // saturate (opset 19, default 1) only matters for float8 outputs.
  int64_t saturate = 1;
  if (node.opset >= 19) {
    SOD2_ASSIGN_OR_RETURN(saturate, node.attrs.get_int("saturate", 1));
  }
  if (saturate != 0 && saturate != 1)
    return invalid_model("QuantizeLinear: attribute 'saturate' must be 0 or 1, got " +
                         std::to_string(saturate));
  return std::unique_ptr<Kernel>(std::make_unique<QuantizeLinearKernel>(
      axis, node.opset >= 13, block, declared, saturate == 1));
}

// ---- DequantizeLinear -----------------------------------------------------------------------

class DequantizeLinearKernel final : public Kernel {
 public:
  DequantizeLinearKernel(int64_t axis, bool per_axis_ok, int64_t block, DType declared)
      : axis_(axis), per_axis_ok_(per_axis_ok), block_(block), declared_(declared) {}

  Status run(KernelContext& ctx) override {
    constexpr const char* kOp = "DequantizeLinear";
    const Tensor* x = ctx.input(0);
    const Tensor* zp = ctx.input(2);
    if (!x) return invalid_argument("DequantizeLinear: input x is missing");
    if (x->dtype != DType::kUint8 && x->dtype != DType::kInt8 && x->dtype != DType::kInt32 &&
        !is_float8(x->dtype)) {
      return unsupported(std::string(kOp) + ": x of type " + dtype_name(x->dtype) +
                         " is not supported (uint8, int8, int32 or a float8 type)");
    }
    AxisView v;
    SOD2_RETURN_IF_ERROR(axis_view(kOp, "x_scale", "x_zero_point", *x, ctx.input(1), zp, x->dtype,
                                   axis_, per_axis_ok_, block_, &v));
    // float16/bfloat16 output (opset 23's output_dtype with a float scale): computed in float,
    // rounded once.
    const bool narrow = declared_ == DType::kFloat16 || declared_ == DType::kBFloat16;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, narrow ? declared_ : DType::kFloat, x->shape));
    if (y->numel() == 0) return Status::ok_status();
    float* out = y->as<float>();
    if (narrow) {
      SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(y->numel()) * 4));
      out = static_cast<float*>(mem);
    }
    switch (x->dtype) {
      case DType::kFloat8E4M3FN:
      case DType::kFloat8E4M3FNUZ:
      case DType::kFloat8E5M2:
      case DType::kFloat8E5M2FNUZ: run_float8(ctx, *x, v, out); break;
      case DType::kUint8: run_typed<uint8_t>(ctx, *x, v, out); break;
      case DType::kInt8: run_typed<int8_t>(ctx, *x, v, out); break;
      default: run_typed<int32_t>(ctx, *x, v, out); break;
    }
    if (narrow) narrow_from_float(declared_, out, y->as<uint16_t>(), y->numel());
    return Status::ok_status();
  }

 private:
  // (x - zero_point) * scale with x and the zero point widened exactly to float.
  static void run_float8(KernelContext& ctx, const Tensor& x, const AxisView& v, float* y) {
    float table[256];
    for (int b = 0; b < 256; ++b) table[b] = float8_to_float(x.dtype, static_cast<uint8_t>(b));
    const uint8_t* in = x.as<const uint8_t>();
    for_runs(ctx.pool(), v, [&](int64_t row, int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t j = v.block > 0 ? v.param_index(row, i - row * v.inner) : row % v.dim;
        y[i] = (table[in[i]] - float8_zero_point(v.zero_point, j)) * v.scale.scale(j);
      }
    });
  }

  template <class Q>
  static void run_typed(KernelContext& ctx, const Tensor& x, const AxisView& v, float* y) {
    // int64 for int32 x (x minus its zero point cannot overflow); int32 for 8-bit x, which
    // vectorises.
    using Wide = std::conditional_t<sizeof(Q) == 1, int32_t, int64_t>;
    for_runs(ctx.pool(), v, [&](int64_t row, int64_t b, int64_t e) {
      const Q* in = x.as<const Q>();
      if (v.block > 0) {  // a parameter per element
        for (int64_t i = b; i < e; ++i) {
          const int64_t j = v.param_index(row, i - row * v.inner);
          y[i] = static_cast<float>(static_cast<Wide>(in[i]) - v.zero_point.zero_point(j)) *
                 v.scale.scale(j);
        }
        return;
      }
      const float scale = v.scale.scale(row % v.dim);
      const Wide zp = v.zero_point.zero_point(row % v.dim);
      for (int64_t i = b; i < e; ++i)
        y[i] = static_cast<float>(static_cast<Wide>(in[i]) - zp) * scale;
    });
  }

  int64_t axis_;
  bool per_axis_ok_;
  int64_t block_;
  DType declared_;  // the node's output type, as the model declares it (kUndefined: unknown)
};

Expected<std::unique_ptr<Kernel>> make_dequantize_linear(const NodeInfo& node) {
  if (node.input_present.size() < 2 || !node.input_present[0] || !node.input_present[1])
    return invalid_model("DequantizeLinear: needs inputs x and x_scale");
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t block, block_size(node));
  const DType declared = node.output_dtypes.empty() ? DType::kUndefined : node.output_dtypes[0];
  return std::unique_ptr<Kernel>(
      std::make_unique<DequantizeLinearKernel>(axis, node.opset >= 13, block, declared));
}

// ---- DynamicQuantizeLinear ------------------------------------------------------------------

// uint8 with y_scale = (max(0, max(x)) - min(0, min(x))) / 255 and
// y_zero_point = saturate(round_half_even(-min(0, min(x)) / y_scale)); an all-zero x gets
// scale 0 and zero point 0.
class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("DynamicQuantizeLinear: input x is missing");
    if (x->dtype != DType::kFloat) {
      return unsupported(std::string("DynamicQuantizeLinear: x of type ") + dtype_name(x->dtype) +
                         " is not supported (float32)");
    }
    const int64_t n = x->numel();
    const float* in = x->as<const float>();
    float lo = 0.0f, hi = 0.0f;  // the range always includes 0
    for (int64_t i = 0; i < n; ++i) {
      lo = in[i] < lo ? in[i] : lo;
      hi = in[i] > hi ? in[i] : hi;
    }
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zp = scale == 0.0f ? 0 : round_saturate<uint8_t>(-lo / scale, 0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kUint8, x->shape));
    SOD2_ASSIGN_OR_RETURN(Tensor * ys, ctx.output(1, DType::kFloat, Shape{}));
    SOD2_ASSIGN_OR_RETURN(Tensor * yz, ctx.output(2, DType::kUint8, Shape{}));
    *ys->as<float>() = scale;
    *yz->as<uint8_t>() = zp;
    uint8_t* out = y->as<uint8_t>();
    ctx.pool().parallel_for(n, kQuantGrain, [&](int64_t b, int64_t e) {
      if (scale == 0.0f) {
        std::fill(out + b, out + e, uint8_t{0});
        return;
      }
      for (int64_t i = b; i < e; ++i) out[i] = quantize_value<uint8_t>(in[i], scale, zp);
    });
    return Status::ok_status();
  }
};

Expected<std::unique_ptr<Kernel>> make_dynamic_quantize_linear(const NodeInfo& node) {
  if (node.input_present.empty() || !node.input_present[0])
    return invalid_model("DynamicQuantizeLinear: needs input x");
  return std::unique_ptr<Kernel>(std::make_unique<DynamicQuantizeLinearKernel>());
}

}  // namespace

Status read_quant_param(const char* op, const char* what, const Tensor* t, bool is_scale,
                        DType zp_dtype, int64_t dim_size, bool per_axis_ok, QuantParam* out) {
  const DType want = is_scale ? DType::kFloat : zp_dtype;
  if (t->dtype != want) {
    return invalid_argument(std::string(op) + ": " + what + " is " + dtype_name(t->dtype) +
                            ", expected " + dtype_name(want));
  }
  out->t = t;
  if (t->numel() == 1) {
    out->count = 1;
    return Status::ok_status();
  }
  if (per_axis_ok && t->shape.rank() == 1 && t->shape[0] == dim_size) {
    out->count = dim_size;
    return Status::ok_status();
  }
  return invalid_argument(
      std::string(op) + ": " + what + " must hold one value" +
      (per_axis_ok ? " or be 1-D with " + std::to_string(dim_size) + " values" : std::string()) +
      ", got " + t->shape.to_string());
}

Status read_output_quantization(const char* op, const Tensor* y_scale, const Tensor* y_zero_point,
                                DType fallback, QuantParam* scale, QuantParam* zero_point,
                                DType* out_type) {
  if (!y_scale) return invalid_argument(std::string(op) + ": y_scale is required");
  SOD2_RETURN_IF_ERROR(
      read_quant_param(op, "y_scale", y_scale, true, DType::kFloat, 1, false, scale));
  SOD2_RETURN_IF_ERROR(check_scale(op, "y_scale", scale->scale(0), 0));
  *out_type = y_zero_point ? y_zero_point->dtype : fallback;
  if (!is_8bit(*out_type)) {
    return unsupported(std::string(op) + ": y_zero_point of type " + dtype_name(*out_type) +
                       " is not supported (uint8 or int8)");
  }
  if (!y_zero_point) return Status::ok_status();
  return read_quant_param(op, "y_zero_point", y_zero_point, false, *out_type, 1, false, zero_point);
}

void register_quantized_kernels(KernelRegistry& r) {
  for (int v : {10, 13}) r.add("", "QuantizeLinear", v, make_quantize_linear);
  for (int v : {10, 13}) r.add("", "DequantizeLinear", v, make_dequantize_linear);
  r.add("", "DynamicQuantizeLinear", 11, make_dynamic_quantize_linear);
  r.add("", "MatMulInteger", 10, make_matmul_integer);
  r.add("", "QLinearMatMul", 10, make_qlinear_matmul);
  r.add("", "ConvInteger", 10, make_conv_integer);
  r.add("", "QLinearConv", 10, make_qlinear_conv);
  r.add("sod2", "QFusedConv", 1, make_qfused_conv);
  r.add("sod2", "QFusedMatMul", 1, make_qfused_matmul);
  r.add("sod2", "QAdd", 1, make_qadd);
}

Status check_scales(const char* op, const char* what, const QuantParam& scales) {
  if (!scales.t) return Status::ok_status();
  const float* s = scales.t->as<const float>();
  const int64_t n = scales.per_tensor() ? 1 : scales.count;
  bool valid = true;
  // NaN fails the first comparison, infinity the second.
  for (int64_t i = 0; i < n; ++i) valid &= s[i] > 0.f && s[i] <= std::numeric_limits<float>::max();
  if (valid) return Status::ok_status();
  for (int64_t i = 0; i < n; ++i) SOD2_RETURN_IF_ERROR(check_scale(op, what, s[i], i));
  return Status::ok_status();
}

void quantize_row(const float* in, int64_t n, float scale, int32_t zp, uint8_t* out) {
  math::quantize_rows(in, n, scale, zp, out);
}
void quantize_row(const float* in, int64_t n, float scale, int32_t zp, int8_t* out) {
  math::quantize_rows(in, n, scale, zp, out);
}

}  // namespace sod2::rt::quant
