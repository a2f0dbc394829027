#include "runtime/kernels/math/vec_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/math/fast_math.h"

// One clone per x86-64 level (cpu_clones.h). The helpers below are inline and get compiled into
// each clone with its instruction set. (vec_isa_test.cpp defines the macro empty and compiles this
// file once per level, to test the levels this machine would not pick.)
#if !defined(SOD2_MATH_CLONES)
#define SOD2_MATH_CLONES SOD2_CPU_CLONES
#endif

namespace sod2::rt::math {
namespace {

// GCC vector types, for what the auto-vectoriser will not do: reductions (it does not reassociate
// a float max or sum without -ffast-math), a running sum next to the exp, binary rows without
// per-row overlap checks. Each clone lowers them to its widest registers (one zmm, two ymm or
// four xmm per V16f).
using V16f = float __attribute__((vector_size(64)));
using V8f = float __attribute__((vector_size(32)));
using V8d = double __attribute__((vector_size(64)));
using V16i = int32_t __attribute__((vector_size(64)));

// Unaligned loads (through out-parameters: returning a vector by value from a non-inlined
// baseline function would have a different ABI from the AVX clones').
SOD2_FORCE_INLINE void load(V16f* v, const float* p) { std::memcpy(v, p, sizeof(*v)); }
SOD2_FORCE_INLINE void load(V8f* v, const float* p) { std::memcpy(v, p, sizeof(*v)); }

template <class F>
SOD2_FORCE_INLINE void map(const float* x, float* y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

// The logistic function on whole vectors, then the tail one float at a time with the same
// operations (sigmoid_lanes): the auto-vectoriser turns its clamps into masked copies of the
// whole formula.
SOD2_FORCE_INLINE void sigmoid_row(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    V16f v;
    load(&v, x + i);
    v = sigmoid_lanes(v);
    std::memcpy(y + i, &v, sizeof v);
  }
  for (; i < n; ++i) y[i] = vec_sigmoidf(x[i]);
}

// The largest element of x[0, n), n >= 1. A NaN may or may not win; the caller's sum turns NaN
// either way, so a row with a NaN comes out all NaN. Also prefetches `ahead` floats further on in
// x, and in y for writing (the row after next), so that the input arrives and the output lines
// are owned while this row is computed.
SOD2_FORCE_INLINE float row_max(const float* x, float* y, int64_t n, int64_t ahead) {
  float m = x[0];
  int64_t i = 0;
  if (n >= 16) {
    V16f acc, v;
    load(&acc, x);
    __builtin_prefetch(x + ahead);
    __builtin_prefetch(y + ahead, 1);
    for (i = 16; i + 16 <= n; i += 16) {
      load(&v, x + i);
      __builtin_prefetch(x + i + ahead);
      __builtin_prefetch(y + i + ahead, 1);
      acc = v > acc ? v : acc;
    }
    for (int j = 0; j < 16; ++j) m = acc[j] > m ? acc[j] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

// e^x for x <= 0 or NaN (what x - max gives): below -87.34 (e^x under FLT_MIN) and for -inf it
// is 0. Without the overflow side vec_expf needs, 2^n is one factor.
constexpr float kExpLo = -87.3365479f;
SOD2_FORCE_INLINE float exp_nonpositive(float x) {
  const float e = vec_expf_in_range(x < kExpLo ? kExpLo : x);
  return x < kExpLo ? 0.0f : e;
}

// The same on 16 lanes, written with vector types so the caller can keep a running sum in
// registers. The steps are exactly those of exp_reduced.
SOD2_FORCE_INLINE void exp_nonpositive(V16f* v) {
  const V16f x = *v;
  const V16i under = x < kExpLo;
  const V16f xc = under ? V16f{} + kExpLo : x;
  constexpr float kMagic = 12582912.0f;
  const V16f r = xc * 1.44269504088896341f + kMagic;
  const V16f nf = r - kMagic;
  const V16i n = __builtin_bit_cast(V16i, r) - std::bit_cast<int32_t>(kMagic);
  V16f f = xc - nf * 0.693359375f;
  f = f - nf * -2.12194440e-4f;
  V16f p = V16f{} + 1.9875691500e-4f;
  p = p * f + 1.3981999507e-3f;
  p = p * f + 8.3334519073e-3f;
  p = p * f + 4.1665795894e-2f;
  p = p * f + 1.6666665459e-1f;
  p = p * f + 5.0000001201e-1f;
  p = p * f * f + f + 1.0f;
  const V16i scale_bits = (n + 127) << 23;
  const V16f y = p * __builtin_bit_cast(V16f, scale_bits);
  *v = under ? V16f{} : y;
}

// y[i] = e^(x[i] - max) for i in [0, n); returns the sum of y in double. Float lanes add up to
// 256 elements (16 each), then fold into double lanes, so the sum stays accurate on long rows;
// the order is fixed for a given n.
SOD2_FORCE_INLINE double exp_and_sum(const float* x, float* y, int64_t n, float max) {
  V8d d0 = {}, d1 = {};
  int64_t i = 0;
  while (i + 16 <= n) {
    V16f acc = {};
    const int64_t stop = std::min(n, i + 256);
    for (; i + 16 <= stop; i += 16) {
      V16f v;
      load(&v, x + i);
      v -= max;
      exp_nonpositive(&v);
      std::memcpy(y + i, &v, sizeof(v));
      acc += v;
    }
    V8f lo, hi;
    std::memcpy(&lo, &acc, sizeof(lo));
    std::memcpy(&hi, reinterpret_cast<const char*>(&acc) + sizeof(lo), sizeof(hi));
    d0 += __builtin_convertvector(lo, V8d);
    d1 += __builtin_convertvector(hi, V8d);
  }
  const V8d d = d0 + d1;
  double s = ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]));
  for (; i < n; ++i) {
    y[i] = exp_nonpositive(x[i] - max);
    s += static_cast<double>(y[i]);
  }
  return s;
}

// The sum of x[0, n) and of (x - mean)^2, in 16 double lanes.
SOD2_FORCE_INLINE double row_sum_d(const float* x, int64_t n) {
  V8d a0 = {}, a1 = {};
  V8f u, v;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    load(&u, x + i);
    load(&v, x + i + 8);
    a0 += __builtin_convertvector(u, V8d);
    a1 += __builtin_convertvector(v, V8d);
  }
  const V8d a = a0 + a1;
  double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  for (; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}
SOD2_FORCE_INLINE double row_squared_deviation_d(const float* x, int64_t n, double mean) {
  V8d a0 = {}, a1 = {};
  V8f u, v;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    load(&u, x + i);
    load(&v, x + i + 8);
    const V8d du = __builtin_convertvector(u, V8d) - mean;
    const V8d dv = __builtin_convertvector(v, V8d) - mean;
    a0 += du * du;
    a1 += dv * dv;
  }
  const V8d a = a0 + a1;
  double s = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    s += d * d;
  }
  return s;
}

template <BinaryF32 kOp>
SOD2_FORCE_INLINE float apply(float x, float y) {
  if constexpr (kOp == BinaryF32::kAdd) return x + y;
  if constexpr (kOp == BinaryF32::kSub) return x - y;
  if constexpr (kOp == BinaryF32::kMul) return x * y;
  if constexpr (kOp == BinaryF32::kDiv) return x / y;
}
template <BinaryF32 kOp>
SOD2_FORCE_INLINE void apply(const V16f& x, const V16f& y, float* out) {
  V16f z;
  if constexpr (kOp == BinaryF32::kAdd) z = x + y;
  if constexpr (kOp == BinaryF32::kSub) z = x - y;
  if constexpr (kOp == BinaryF32::kMul) z = x * y;
  if constexpr (kOp == BinaryF32::kDiv) z = x / y;
  std::memcpy(out, &z, sizeof(z));
}

// Rows of a binary op, written with 16-lane vector types rather than left to the vectoriser:
// each block loads its operands before it stores, so out may be a or b without the runtime
// overlap checks (and their scalar fallback) an auto-vectorised loop adds per row.
template <BinaryF32 kOp>
SOD2_FORCE_INLINE void rows_op(float* out, const float* a, int64_t a_row, int64_t a_step,
                               const float* b, int64_t b_row, int64_t b_step, int64_t rows,
                               int64_t n) {
  V16f x, y;
  // Rows of one vector against the same row of the other operand: a channel-blocked tensor
  // against a per-channel [N, C, 1, 1] one (16 channels a position). The shared row is loaded
  // once.
  if (n == 16 && a_step == 1 && b_step == 1 && (a_row == 0 || b_row == 0)) {
    if (b_row == 0) {
      load(&y, b);
      for (int64_t r = 0; r < rows; ++r) {
        load(&x, a + r * a_row);
        apply<kOp>(x, y, out + r * 16);
      }
    } else {
      load(&x, a);
      for (int64_t r = 0; r < rows; ++r) {
        load(&y, b + r * b_row);
        apply<kOp>(x, y, out + r * 16);
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* pa = a + r * a_row;
    const float* pb = b + r * b_row;
    float* o = out + r * n;
    int64_t i = 0;
    if (a_step == 1 && b_step == 1) {
      for (; i + 16 <= n; i += 16) {
        load(&x, pa + i);
        load(&y, pb + i);
        apply<kOp>(x, y, o + i);
      }
      for (; i < n; ++i) o[i] = apply<kOp>(pa[i], pb[i]);
    } else if (a_step == 1 && b_step == 0) {
      const float s = *pb;
      y = V16f{} + s;
      for (; i + 16 <= n; i += 16) {
        load(&x, pa + i);
        apply<kOp>(x, y, o + i);
      }
      for (; i < n; ++i) o[i] = apply<kOp>(pa[i], s);
    } else if (a_step == 0 && b_step == 1) {
      const float s = *pa;
      x = V16f{} + s;
      for (; i + 16 <= n; i += 16) {
        load(&y, pb + i);
        apply<kOp>(x, y, o + i);
      }
      for (; i < n; ++i) o[i] = apply<kOp>(s, pb[i]);
    } else {
      for (; i < n; ++i) o[i] = apply<kOp>(pa[i * a_step], pb[i * b_step]);
    }
  }
}

}  // namespace

SOD2_MATH_CLONES
void gelu_erf_f32(const float* x, float* y, int64_t n, float k, bool divide, float one,
                  float half) {
  if (divide) {
    for (int64_t i = 0; i < n; ++i) y[i] = ((vec_erff(x[i] / k) + one) * x[i]) * half;
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = ((vec_erff(x[i] * k) + one) * x[i]) * half;
  }
}

SOD2_MATH_CLONES
void unary_f32(UnaryF32 op, const float* x, float* y, int64_t n, float alpha, float beta) {
  switch (op) {
    case UnaryF32::kRelu: return map(x, y, n, [](float v) { return v > 0.0f ? v : 0.0f; });
    case UnaryF32::kLeakyRelu:
      return map(x, y, n, [alpha](float v) { return v < 0.0f ? v * alpha : v; });
    case UnaryF32::kSigmoid: return sigmoid_row(x, y, n);
    case UnaryF32::kHardSigmoid:
      return map(x, y, n, [alpha, beta](float v) {
        float t = alpha * v + beta;
        t = t > 0.0f ? t : 0.0f;  // NaN gives 0, like std::max(0, NaN)
        return t < 1.0f ? t : 1.0f;
      });
    case UnaryF32::kHardSwish:
      // ONNX: x * max(0, min(1, x / 6 + 1 / 2)), with the division as a product like ORT.
      return map(x, y, n, [](float v) {
        float t = v * (1.0f / 6.0f) + 0.5f;
        t = t > 0.0f ? t : 0.0f;
        return v * (t < 1.0f ? t : 1.0f);
      });
    case UnaryF32::kTanh: return map(x, y, n, [](float v) { return vec_tanhf(v); });
    case UnaryF32::kErf: return map(x, y, n, [](float v) { return vec_erff(v); });
    case UnaryF32::kExp: return map(x, y, n, [](float v) { return vec_expf(v); });
    case UnaryF32::kSqrt: return map(x, y, n, [](float v) { return std::sqrt(v); });
    case UnaryF32::kReciprocal: return map(x, y, n, [](float v) { return 1.0f / v; });
    case UnaryF32::kNeg: return map(x, y, n, [](float v) { return -v; });
    case UnaryF32::kAbs: return map(x, y, n, [](float v) { return std::fabs(v); });
    case UnaryF32::kFloor: return map(x, y, n, [](float v) { return std::floor(v); });
    case UnaryF32::kCeil: return map(x, y, n, [](float v) { return std::ceil(v); });
    case UnaryF32::kRound: return map(x, y, n, [](float v) { return std::nearbyint(v); });
    case UnaryF32::kSoftsign:
      return map(x, y, n, [](float v) { return v / (1.0f + std::fabs(v)); });
  }
}

SOD2_MATH_CLONES
void binary_rows_f32(BinaryF32 op, float* out, const float* a, int64_t a_row, int64_t a_step,
                     const float* b, int64_t b_row, int64_t b_step, int64_t rows, int64_t n) {
  switch (op) {
    case BinaryF32::kAdd:
      return rows_op<BinaryF32::kAdd>(out, a, a_row, a_step, b, b_row, b_step, rows, n);
    case BinaryF32::kSub:
      return rows_op<BinaryF32::kSub>(out, a, a_row, a_step, b, b_row, b_step, rows, n);
    case BinaryF32::kMul:
      return rows_op<BinaryF32::kMul>(out, a, a_row, a_step, b, b_row, b_step, rows, n);
    case BinaryF32::kDiv:
      return rows_op<BinaryF32::kDiv>(out, a, a_row, a_step, b, b_row, b_step, rows, n);
  }
}

SOD2_MATH_CLONES
void softmax_rows_f32(const float* x, float* y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float max = row_max(xr, yr, n, 2 * n);
    const double sum = exp_and_sum(xr, yr, n, max);
    if (log) {
      // (x - max) - log(sum), not x - (max + log(sum)): near the maximum the result is small
      // and the second form would leave it with the rounding error of max.
      const float lse = static_cast<float>(std::log(sum));
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - max) - lse;
    } else {
      const float scale = static_cast<float>(1.0 / sum);
      for (int64_t i = 0; i < n; ++i) yr[i] *= scale;
    }
  }
}

SOD2_MATH_CLONES
void softmax_cols_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t cols, bool log) {
  float max[kSoftmaxMaxCols];
  double sum[kSoftmaxMaxCols];
  float k[kSoftmaxMaxCols];
  for (int64_t j = 0; j < cols; ++j) {
    max[j] = x[j];
    sum[j] = 0;
  }
  for (int64_t i = 1; i < n; ++i) {
    const float* row = x + i * inner;
    for (int64_t j = 0; j < cols; ++j) max[j] = row[j] > max[j] ? row[j] : max[j];
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* row = x + i * inner;
    float* out = y + i * inner;
    for (int64_t j = 0; j < cols; ++j) {
      const float e = exp_nonpositive(row[j] - max[j]);
      out[j] = e;
      sum[j] += static_cast<double>(e);
    }
  }
  if (log) {
    for (int64_t j = 0; j < cols; ++j) k[j] = static_cast<float>(std::log(sum[j]));
    for (int64_t i = 0; i < n; ++i) {
      const float* row = x + i * inner;
      float* out = y + i * inner;
      for (int64_t j = 0; j < cols; ++j) out[j] = (row[j] - max[j]) - k[j];
    }
  } else {
    for (int64_t j = 0; j < cols; ++j) k[j] = static_cast<float>(1.0 / sum[j]);
    for (int64_t i = 0; i < n; ++i) {
      float* out = y + i * inner;
      for (int64_t j = 0; j < cols; ++j) out[j] *= k[j];
    }
  }
}

SOD2_MATH_CLONES
void layer_norm_rows_f32(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                         int64_t scale_step, const float* bias, int64_t bias_step, double eps,
                         double* mean_out, double* inv_std_out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const double mean = row_sum_d(xr, n) / static_cast<double>(n);
    const double var = row_squared_deviation_d(xr, n, mean) / static_cast<double>(n);
    const double inv_std = 1.0 / std::sqrt(var + eps);
    const float m = static_cast<float>(mean), k = static_cast<float>(inv_std);
    if (scale_step == 1 && bias && bias_step == 1) {
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * k * scale[i] + bias[i];
    } else if (scale_step == 1 && !bias) {
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * k * scale[i];
    } else if (scale_step == 0 && (!bias || bias_step == 0)) {
      // One scale and bias for the row (InstanceNormalization's per-channel ones): hoisted, the
      // loop vectorises; with a variable step of 0 it ran a scalar load per element.
      const float s = scale[0], b = bias ? bias[0] : 0.0f;
      for (int64_t i = 0; i < n; ++i) yr[i] = (xr[i] - m) * k * s + b;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const float b = bias ? bias[i * bias_step] : 0.0f;
        yr[i] = (xr[i] - m) * k * scale[i * scale_step] + b;
      }
    }
    if (mean_out) mean_out[r] = mean;
    if (inv_std_out) inv_std_out[r] = inv_std;
  }
}

}  // namespace sod2::rt::math
