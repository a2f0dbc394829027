// What an integer convolution's int32 sums become, per output channel, and the call that makes
// them so: ConvInteger's output is the sums; QLinearConv requantizes them (quantize.h's
// arithmetic); sod2:QFusedConv may dequantize, activate in float and quantize instead, add a
// float bias, write floats, and join a residual (sod2:QAdd's arithmetic). Every path of the
// integer convolutions (qlinear_conv.cpp, int_conv_depthwise.cpp) finishes through it or through
// the store kernels' ChannelEpilogue (qdq_epilogue.h) it describes.
#pragma once

#include <cstdint>

#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/qdq_epilogue.h"
#include "runtime/kernels/linalg/quantize.h"
#include "runtime/tensor/tensor.h"

namespace sod2::rt::quant {

struct IntConvEpilogue {
  // QLinearConv's and QFusedConv's requantization (or float epilogue); false for ConvInteger,
  // whose sums are its output.
  bool requant = false;
  DType out_type = DType::kInt32;
  const int32_t* bias = nullptr;
  // A float bias instead, added after the dequantization: the float epilogue runs.
  const float* float_bias = nullptr;
  int32_t zp = 0, lo = 0, hi = 0;
  float x_scale = 1, y_scale = 1;
  const QuantParam* w_scale = nullptr;
  float multiplier(int64_t oc) const {
    return requantize_multiplier(x_scale, w_scale->scale(oc), y_scale);
  }
  // The sums are dequantized, activated in float and quantized (int_conv_epilogue.cpp's
  // activate_row), rather than requantized in one multiply.
  bool float_epilogue() const {
    return out_type == DType::kFloat || activation.activation != Activation::kNone ||
           float_bias != nullptr;
  }
  // The epilogue as the store kernels take it (qdq_epilogue.h), for m output channels:
  // per_channel (m floats) receives the float epilogue's scales or the multipliers.
  ChannelEpilogue channel_epilogue(int64_t m, float* per_channel) const {
    ChannelEpilogue c;
    c.out_type = out_type;
    c.bias = bias;
    c.zp = zp;
    c.lo = lo;
    c.hi = hi;
    c.float_epilogue = float_epilogue();
    for (int64_t oc = 0; oc < m; ++oc)
      per_channel[oc] = c.float_epilogue ? x_scale * w_scale->scale(oc) : multiplier(oc);
    (c.float_epilogue ? c.scale : c.mult) = per_channel;
    c.float_bias = float_bias;
    c.activation = activation.activation;
    c.alpha = activation.alpha;
    c.beta = activation.beta;
    c.clip_lo = clip_lo;
    c.clip_hi = clip_hi;
    c.y_scale = y_scale;
    return c;
  }
  // Another activation than a clamp: the sums are dequantized, activated in float, clamped to
  // [clip_lo, clip_hi] and quantized.
  EpilogueRun activation;
  float clip_lo = 0, clip_hi = 0;
  // A residual join (sod2:QAdd's arithmetic) after the 8-bit result, and its other operand.
  // A path that runs it in its store sets `joined`; the kernel runs it over the output after
  // any other.
  const QuantizedAdd* join = nullptr;
  const void* residual = nullptr;
  mutable bool joined = false;

  // `count` sums of output channel oc into y at element offset y_off: copied (ConvInteger),
  // requantized, or dequantized, activated and quantized (int_conv_epilogue.cpp's activate_row).
  void finish(const int32_t* acc, int64_t count, int64_t oc, int64_t y_off, Tensor* y) const;
};

}  // namespace sod2::rt::quant
