// Reference semantics of linear quantization, shared by the quantized kernels (QuantizeLinear,
// DequantizeLinear, DynamicQuantizeLinear, MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) and meant for any faster int8 path to reuse, so that all agree bit for bit:
//
//   quantize:    q = saturate(round_half_even(x / scale) + zero_point)
//   dequantize:  x = (q - zero_point) * scale
//   requantize:  q = saturate(round_half_even(float(acc) * multiplier) + zero_point)
//
// with saturation to the range of the quantized type (uint8 [0, 255], int8 [-128, 127]), in
// float32 arithmetic as ONNX and onnxruntime do. NaN quantizes to the zero point.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt::quant {

// Registers the quantized kernels (register.cpp calls it).
void register_quantized_kernels(KernelRegistry& r);

// The integer contractions (integer_gemm.cpp).
Expected<std::unique_ptr<Kernel>> make_matmul_integer(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_qlinear_matmul(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_conv_integer(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeInfo& node);

template <class Q>
inline constexpr float kQMin = static_cast<float>(std::numeric_limits<Q>::min());
template <class Q>
inline constexpr float kQMax = static_cast<float>(std::numeric_limits<Q>::max());

// round_half_even(v) + zero_point, saturated to Q. std::nearbyint rounds to nearest even in the
// default rounding mode, which the runtime never changes.
template <class Q>
inline Q round_saturate(float v, int32_t zero_point) {
  if (std::isnan(v)) return static_cast<Q>(zero_point);
  float r = std::nearbyint(v) + static_cast<float>(zero_point);
  r = r < kQMin<Q> ? kQMin<Q> : r;
  r = r > kQMax<Q> ? kQMax<Q> : r;
  return static_cast<Q>(r);
}

template <class Q>
inline Q quantize_value(float x, float scale, int32_t zero_point) {
  return round_saturate<Q>(x / scale, zero_point);
}

template <class Q>
inline float dequantize_value(Q q, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(q) - zero_point) * scale;
}

// An int32 accumulator of (a - a_zero_point) * (b - b_zero_point) products to Q, with
// multiplier = a_scale * b_scale / y_scale.
template <class Q>
inline Q requantize(int32_t acc, float multiplier, int32_t zero_point) {
  return round_saturate<Q>(static_cast<float>(acc) * multiplier, zero_point);
}

inline float requantize_multiplier(float a_scale, float b_scale, float y_scale) {
  return a_scale * b_scale / y_scale;
}

// One scale or zero-point input, per tensor (one value) or per index along one dim. Values are
// read through at() whatever the element type (float32 scales; int8/uint8/int32 zero points).
struct QuantParam {
  const Tensor* t = nullptr;  // nullptr: absent (zero point 0, or scale 1)
  int64_t count = 1;          // values: 1 per tensor, else the dim's size

  bool per_tensor() const { return count == 1; }
  float scale(int64_t i) const { return t ? t->as<const float>()[count == 1 ? 0 : i] : 1.0f; }
  int32_t zero_point(int64_t i) const {
    if (!t) return 0;
    const int64_t j = count == 1 ? 0 : i;
    switch (t->dtype) {
      case DType::kUint8: return t->as<const uint8_t>()[j];
      case DType::kInt8: return t->as<const int8_t>()[j];
      case DType::kInt32: return t->as<const int32_t>()[j];
      default: return 0;
    }
  }
};

// Checks a scale (float32) or zero point (`zp_dtype`) input against a dim of `dim_size` values:
// one value means per tensor; otherwise it must be 1-D with dim_size values (per axis), unless
// `per_axis_ok` is false. `op` and `what` name it in errors.
Status read_quant_param(const char* op, const char* what, const Tensor* t, bool is_scale,
                        DType zp_dtype, int64_t dim_size, bool per_axis_ok, QuantParam* out);

}  // namespace sod2::rt::quant
