// The epilogue arithmetic of the quantized convolutions (qlinear_conv.cpp), on one output
// channel's int32 sums, on the widest vectors the CPU has:
//   requantize_row: clamp(round_half_even(float(sum + bias) * mult) + zp, lo, hi), QLinearConv's
//     exact requantization (int8_vnni.cpp's requantizing store does the same operations);
//   dequantize_activate_row: a QDQ group's float epilogue, (sum + bias) * scale (+ offset, a
//     float bias, as one fused multiply-add where it is not 0), an activation, a clamp to
//     [lo, hi].
// Sums and bias add modulo 2^32, as ONNX's int32 arithmetic does.
#pragma once

#include <cstdint>

#include "runtime/kernels/linalg/epilogue.h"

namespace sod2::rt::quant {

void requantize_row(const int32_t* acc, int64_t count, int32_t bias, float mult, int32_t zp,
                    int32_t lo, int32_t hi, uint8_t* out);
void requantize_row(const int32_t* acc, int64_t count, int32_t bias, float mult, int32_t zp,
                    int32_t lo, int32_t hi, int8_t* out);

// Whether dequantize_activate_row computes activation `a` itself (the plain-arithmetic ones, with
// EpilogueRun::apply's operations); for the others it is called with kNone and the caller
// applies the activation and the clamp.
constexpr bool inline_activation(Activation a) {
  return a == Activation::kNone || a == Activation::kRelu || a == Activation::kLeakyRelu ||
         a == Activation::kHardSigmoid || a == Activation::kHardSwish;
}
void dequantize_activate_row(Activation a, const int32_t* acc, int64_t n, int32_t bias, float scale,
                             float offset, float alpha, float beta, float lo, float hi, float* v);

}  // namespace sod2::rt::quant
