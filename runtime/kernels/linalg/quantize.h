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

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "runtime/threads/thread_pool.h"

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/qdq_epilogue.h"

namespace sod2::rt::quant {

// Registers the quantized kernels (register.cpp calls it).
void register_quantized_kernels(KernelRegistry& r);

// The integer contractions (integer_gemm.cpp).
Expected<std::unique_ptr<Kernel>> make_matmul_integer(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_qlinear_matmul(const NodeInfo& node);
// sod2:QFusedMatMul, a QDQ MatMul/Gemm group: QLinearMatMul plus an int32 bias and QFusedConv's
// epilogue (attributes trans_b, clip_min/clip_max, activation/alpha/beta; a float output
// without y_scale).
Expected<std::unique_ptr<Kernel>> make_qfused_matmul(const NodeInfo& node);
// The integer convolutions (qlinear_conv.cpp); sod2:QFusedConv is QLinearConv with a clamp
// (attributes clip_min/clip_max: a fused Relu or Clip) or a float activation (activation, alpha,
// beta), kernel_fusion.h's QDQ groups, and optionally a residual join after its 8-bit result:
// inputs 9-15 (residual, residual_scale, residual_zero_point, the scale and zero point that
// dequantize the result, join y_scale, join y_zero_point: both absent for a float result) and
// join_clip_min/join_clip_max, sod2:QAdd's arithmetic, whose output is the kernel's.
Expected<std::unique_ptr<Kernel>> make_conv_integer(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_qlinear_conv(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_qfused_conv(const NodeInfo& node);
// sod2:QAdd, a fused quantized residual join (qlinear_add.cpp).
Expected<std::unique_ptr<Kernel>> make_qadd(const NodeInfo& node);

template <class Q>
inline constexpr float kQMin = static_cast<float>(std::numeric_limits<Q>::min());
template <class Q>
inline constexpr float kQMax = static_cast<float>(std::numeric_limits<Q>::max());

// Round half to even of v, for |v| <= 2^22 (beyond, the caller's saturation decides anyway: v is
// clamped there first): adding and subtracting 1.5 * 2^23 rounds in the default rounding mode,
// which the runtime never changes, and unlike std::nearbyint it vectorises. NaN stays NaN.
inline float round_half_even(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  v = std::min(std::max(v, -4194304.0f), 4194304.0f);
  return (v + kMagic) - kMagic;
}

// round_half_even(v) + zero_point, saturated to Q.
template <class Q>
inline Q round_saturate(float v, int32_t zero_point) {
  float r = round_half_even(v) + static_cast<float>(zero_point);
  r = v != v ? static_cast<float>(zero_point) : r;
  r = r < kQMin<Q> ? kQMin<Q> : r;
  r = r > kQMax<Q> ? kQMax<Q> : r;
  // Through int32: float to int32 vectorises on every x86-64, float to 8 bits does not.
  return static_cast<Q>(static_cast<int32_t>(r));
}

template <class Q>
inline Q quantize_value(float x, float scale, int32_t zero_point) {
  return round_saturate<Q>(x / scale, zero_point);
}

// quantize_value over an array, written out so that it vectorises (restrict pointers, the
// bounds in registers; callers compile it without FP traps).
template <class Q>
inline __attribute__((always_inline)) void quantize_floats(const float* __restrict in, int64_t n,
                                                           float scale, int32_t zp,
                                                           Q* __restrict out) {
  const float lo = kQMin<Q>, hi = kQMax<Q>, zpf = static_cast<float>(zp);
  for (int64_t i = 0; i < n; ++i) {
    const float v = in[i] / scale;
    float r = round_half_even(v) + zpf;
    r = v != v ? zpf : r;
    r = std::min(std::max(r, lo), hi);
    out[i] = static_cast<Q>(static_cast<int32_t>(r));
  }
}

// quantize_floats on the widest vectors this CPU has (the loop divides: AVX-512 quarters it);
// math/quantize_rows.h's, which the fused elementwise groups call too.
void quantize_row(const float* in, int64_t n, float scale, int32_t zp, uint8_t* out);
void quantize_row(const float* in, int64_t n, float scale, int32_t zp, int8_t* out);

// A QuantizedAdd (qdq_epilogue.h) from a kernel's per-tensor inputs: a's scale and zero point
// at slots a_params and a_params + 1 (a of type a_type), b's at b_params, y's at y_params (y's
// type that of its zero point, uint8 without one; y's scale usable; float without y's scale and
// zero point); lo and hi unbounded.
Expected<QuantizedAdd> read_quantized_add(const char* op, KernelContext& ctx, DType a_type,
                                          int a_params, DType b_type, int b_params, int y_params);

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

// ---- Shared by the integer kernels ------------------------------------------------------------

inline bool is_8bit(DType t) { return t == DType::kUint8 || t == DType::kInt8; }

inline Status require_8bit(const char* op, const char* what, const Tensor* t) {
  if (!t) return invalid_argument(std::string(op) + ": input " + what + " is missing");
  if (!is_8bit(t->dtype)) {
    return unsupported(std::string(op) + ": " + what + " of type " + dtype_name(t->dtype) +
                       " is not supported (uint8 or int8)");
  }
  return Status::ok_status();
}

// Value i of a uint8/int8 tensor.
inline int32_t load8(const Tensor& t, int64_t i) {
  return t.dtype == DType::kUint8 ? int32_t{t.as<const uint8_t>()[i]}
                                  : int32_t{t.as<const int8_t>()[i]};
}

// Parallel jobs over at most num_threads slots, each job given its slot (for per-slot scratch).
template <class F>
void for_slots(ThreadPool& pool, int64_t jobs, int64_t slots, F&& f) {
  pool.parallel_for(slots, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      for (int64_t j = jobs * s / slots; j < jobs * (s + 1) / slots; ++j) f(j, s);
    }
  });
}

inline int64_t slot_count(ThreadPool& pool, int64_t jobs) {
  return std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), jobs));
}

// The reference integer loop: acc[j] = sum over kk < k of a[kk] * b[kk * ldb + j] modulo 2^32,
// j < n, for one row of A (operands centred on their zero points into int16).
inline void dot_row(const int16_t* a, const int16_t* b, int64_t k, int64_t n, int64_t ldb,
                    uint32_t* acc) {
  std::fill(acc, acc + n, 0u);
  for (int64_t kk = 0; kk < k; ++kk) {
    const int32_t av = a[kk];
    if (av == 0) continue;
    const int16_t* brow = b + kk * ldb;
    for (int64_t j = 0; j < n; ++j)
      acc[j] += static_cast<uint32_t>(av * static_cast<int32_t>(brow[j]));
  }
}

// Elements per parallel chunk of the elementwise quantization kernels: ~20 us of work, what
// waking a thread costs.
inline constexpr int64_t kQuantGrain = 65536;

// A scale must be a positive finite number: zero would divide by zero (a crafted file's favourite),
// and a negative or NaN one has no meaning. `i` is the value's index, for the error.
inline Status check_scale(const char* op, const char* what, float scale, int64_t i) {
  if (scale > 0 && std::isfinite(scale)) return Status::ok_status();
  return invalid_argument(std::string(op) + ": " + what + "[" + std::to_string(i) + "] is " +
                          std::to_string(scale) + "; scales must be positive and finite");
}

// check_scale over every value of a scale input in one loop with no call per value (a call per
// value cost a MobileNetV3's run 1.4%: its per-channel scales are checked every run); the
// message, on failure, names the first bad value.
Status check_scales(const char* op, const char* what, const QuantParam& scales);

// check_scales for one input of a kernel, once where that input is a constant (the same values
// at the same address every run): a network's per-channel scales, thousands of floats, are cold
// by the time their node runs, and reading them again every run cost more than the check.
class ScaleCheck {
 public:
  explicit ScaleCheck(bool constant) : constant_(constant) {}
  Status check(const char* op, const char* what, const QuantParam& scales) {
    const void* data = scales.t ? scales.t->data : nullptr;
    if (constant_ && data && data == checked_ && scales.count == checked_count_)
      return Status::ok_status();
    SOD2_RETURN_IF_ERROR(check_scales(op, what, scales));
    if (constant_) {
      checked_ = data;
      checked_count_ = scales.count;
    }
    return Status::ok_status();
  }

 private:
  bool constant_;
  const void* checked_ = nullptr;
  int64_t checked_count_ = 0;
};

// Checks a scale (float32) or zero point (`zp_dtype`) input against a dim of `dim_size` values:
// one value means per tensor; otherwise it must be 1-D with dim_size values (per axis), unless
// `per_axis_ok` is false. `op` and `what` name it in errors.
Status read_quant_param(const char* op, const char* what, const Tensor* t, bool is_scale,
                        DType zp_dtype, int64_t dim_size, bool per_axis_ok, QuantParam* out);

// A requantizing kernel's output parameters (y_scale required, per tensor and valid; y_zero_point
// optional, per tensor) and the output type: the zero point's, else `fallback`; uint8 or int8.
Status read_output_quantization(const char* op, const Tensor* y_scale, const Tensor* y_zero_point,
                                DType fallback, QuantParam* scale, QuantParam* zero_point,
                                DType* out_type);

}  // namespace sod2::rt::quant
