// The epilogue arithmetic of the quantized convolutions (qlinear_conv.cpp), on one output
// channel's int32 sums, on the widest vectors the CPU has:
//   requantize_row: clamp(round_half_even(float(sum + bias) * mult) + zp, lo, hi), QLinearConv's
//     exact requantization (int8_vnni.cpp's requantizing store does the same operations);
//   dequantize_activate_row: a QDQ group's float epilogue, (sum + bias) * scale (+ offset, a
//     float bias, as one fused multiply-add where it is not 0), an activation, a clamp to
//     [lo, hi];
//   epilogue_float_sums: either epilogue, then the output's quantization, over many channels'
//     planes of sums held as exact integer floats (the depthwise path's) in one call: a 7x7
//     plane no longer pays several calls of its own.
//   QuantizedAdd: sod2:QAdd's arithmetic, which QFusedConv's residual join also runs on its
//     8-bit result (in the VNNI GEMM's store, or over the output).
// Sums and bias add modulo 2^32, as ONNX's int32 arithmetic does.
#pragma once

#include <cstdint>
#include <limits>

#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/tensor/dtype.h"

namespace sod2::rt::quant {

// sod2:QAdd's arithmetic (qlinear_add.cpp), which QFusedConv's residual join runs too:
//   y = quantize(clip((a - a_zp) * a_scale + (b - b_zp) * b_scale, lo, hi), y_scale, y_zp)
// in the float operations of DequantizeLinear ×2, Add, Relu/Clip and QuantizeLinear one by one,
// in their order and without fused multiply-adds, so a fused join writes the nodes' bytes (a NaN
// to y_zp, as quantize_floats); with a kFloat y_type (no QuantizeLinear after the join), the
// clamped sum itself.
struct QuantizedAdd {
  DType a_type = DType::kUint8, b_type = DType::kUint8, y_type = DType::kUint8;
  float a_scale = 1, b_scale = 1, y_scale = 1;
  int32_t a_zp = 0, b_zp = 0, y_zp = 0;
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};
// Elements [begin, end) of y from those of a and b (8-bit, of p's types); y may be a or b.
void quantized_add(const QuantizedAdd& p, const void* a, const void* b, int64_t begin, int64_t end,
                   void* y);

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

// A quantized convolution's epilogue, per output channel (arrays indexed by channel): what
// epilogue_float_sums and the VNNI GEMM's store (int8_vnni.h) both run.
struct ChannelEpilogue {
  DType out_type = DType::kUint8;  // kUint8, kInt8, or kFloat (float_epilogue only)
  const int32_t* bias = nullptr;   // int32, added to the sums, or nullptr
  int32_t zp = 0;                  // the output's zero point
  // The requantization, clamp(round_half_even(float(sum + bias) * mult) + zp, lo, hi).
  const float* mult = nullptr;
  int32_t lo = 0, hi = 255;
  // Or the float epilogue (dequantize_activate_row's, then quantize_row's with y_scale, or the
  // floats themselves for kFloat), where float_epilogue; `activation` one of inline_activation's.
  bool float_epilogue = false;
  const float* scale = nullptr;       // x_scale * w_scale
  const float* float_bias = nullptr;  // or nullptr
  Activation activation = Activation::kNone;
  float alpha = 0, beta = 0, clip_lo = 0, clip_hi = 0, y_scale = 1;

  // The same epilogue with channel `first` as channel 0 (a GEMM block's or a group's rows).
  ChannelEpilogue from_channel(int64_t first) const {
    ChannelEpilogue e = *this;
    auto at = [first](auto* p) { return p ? p + first : p; };
    e.bias = at(bias);
    e.mult = at(mult);
    e.scale = at(scale);
    e.float_bias = at(float_bias);
    return e;
  }
};
// Sums held as exact integer floats (the depthwise path's): planes of `plane` values at
// sums + p * plane, plane p being channel p % channels; the part to finish, positions [q0, q1)
// of planes [p0, p1).
struct FloatSums {
  const float* sums = nullptr;
  int64_t plane = 0, channels = 1;
  int64_t p0 = 0, p1 = 0, q0 = 0, q1 = 0;
};
// FloatSums' part through e, written at the same element offsets of out (of e.out_type): the
// same bytes as converting the sums to int32 and running requantize_row, or
// dequantize_activate_row and quantize_row, per plane. On AVX512-VNNI CPUs through the VNNI
// GEMM's store (int8_vnni.h).
void epilogue_float_sums(const ChannelEpilogue& e, const FloatSums& sums, void* out);

}  // namespace sod2::rt::quant
