// Float loops of the hot elementwise, activation and Softmax kernels, compiled once per x86-64
// level (AVX-512, AVX2+FMA, baseline SSE2) and picked when the library loads: the runtime is
// built for baseline x86-64, where the vectoriser only has 4-lane SSE2. Each entry point runs a
// whole range (many rows, or a thread's chunk) per call, so the indirect call and the switch on
// the op cost nothing per element. Results are identical however a range is split into calls,
// so kernels stay bit-identical across thread counts.
#pragma once

#include <cstdint>

namespace sod2::rt::math {

enum class UnaryF32 : int {
  kRelu,
  kLeakyRelu,  // alpha
  kSigmoid,
  kHardSigmoid,  // alpha, beta
  kHardSwish,
  kTanh,
  kErf,
  kExp,
  kSqrt,
  kReciprocal,
  kNeg,
  kAbs,
  kFloor,
  kCeil,
  kRound,  // half to even
  kSoftsign,
};

// y[i] = op(x[i]) for i in [0, n). y may be x.
void unary_f32(UnaryF32 op, const float* x, float* y, int64_t n, float alpha, float beta);

// GELU as PyTorch exports it, five ops in one pass over x:
//   y[i] = ((erf(x[i] / k) + one) * x[i]) * half        (`divide`; x[i] * k otherwise)
// the same float operations, in the same order, as Div (or Mul), Erf, Add, Mul, Mul one by one
// (Add and Mul commute exactly), so the result is bit for bit theirs. y may be x.
void gelu_erf_f32(const float* x, float* y, int64_t n, float k, bool divide, float one, float half);

enum class BinaryF32 : int { kAdd, kSub, kMul, kDiv };

// `rows` output rows of n contiguous elements each, out[r * n + i] =
// a[r * a_row + i * a_step] op b[r * b_row + i * b_step]. A step of 0 broadcasts one value along
// the row, a row stride of 0 repeats one row. out may be a or b (same elements).
void binary_rows_f32(BinaryF32 op, float* out, const float* a, int64_t a_row, int64_t a_step,
                     const float* b, int64_t b_row, int64_t b_step, int64_t rows, int64_t n);

// Softmax (or LogSoftmax) of `rows` contiguous rows of n elements: one pass for the maximum,
// one for exp(x - max) into y with the sum, one to scale (or shift) y. Sums are kept in double.
void softmax_rows_f32(const float* x, float* y, int64_t rows, int64_t n, bool log);

// Softmax along a strided axis: `cols` adjacent columns of an [n, inner] block (x and y point at
// the first column's top element; element (i, j) is at i * inner + j), vectorised across the
// columns. cols <= kSoftmaxMaxCols.
inline constexpr int64_t kSoftmaxMaxCols = 256;
void softmax_cols_f32(const float* x, float* y, int64_t n, int64_t inner, int64_t cols, bool log);

// LayerNormalization of `rows` contiguous rows of n >= 1 elements: mean and 1 / sqrt(var + eps)
// in double (two passes, 16 lanes), then y = (x - mean) * inv_std * scale + bias in float.
// scale/bias have a step of 1 (n values) or 0 (one value); bias may be null. mean and inv_std,
// when not null, receive each row's statistics.
void layer_norm_rows_f32(const float* x, float* y, int64_t rows, int64_t n, const float* scale,
                         int64_t scale_step, const float* bias, int64_t bias_step, double eps,
                         double* mean, double* inv_std);

}  // namespace sod2::rt::math
