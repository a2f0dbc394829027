#include "runtime/kernels/linalg/int_conv_epilogue.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

namespace sod2::rt::quant {
namespace {

// y = quantize(clip(act((acc + bias) * x_scale * w_scale[oc] + float_bias[oc]))), in chunks on
// the stack; for float y, without the quantize.
template <class Q>
void activate_row(const IntConvEpilogue& e, const int32_t* acc, int64_t count, int32_t bias,
                  int64_t oc, Q* out) {
  constexpr int64_t kChunk = 256;
  float v[kChunk];
  // Locals: stores through Q* may alias anything, e included.
  const float scale = e.x_scale * e.w_scale->scale(oc), lo = e.clip_lo, hi = e.clip_hi,
              ys = e.y_scale, offset = e.float_bias ? e.float_bias[oc] : 0.f;
  const int32_t zp = e.zp;
  const Activation act = e.activation.activation;
  const float alpha = e.activation.alpha, beta = e.activation.beta;
  const bool inlined = inline_activation(act);
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t t0 = 0; t0 < count; t0 += kChunk) {
    const int64_t n = std::min(kChunk, count - t0);
    // A float result goes straight to the output.
    float* dst = v;
    if constexpr (std::is_same_v<Q, float>) {
      if (inlined) dst = out + t0;
    }
    if (inlined) {
      dequantize_activate_row(act, acc + t0, n, bias, scale, offset, alpha, beta, lo, hi, dst);
    } else {  // Sigmoid, Tanh, SiLU: EpilogueRun's, between the dequantization and the clamp
      dequantize_activate_row(Activation::kNone, acc + t0, n, bias, scale, offset, 0, 0, -inf, inf,
                              v);
      e.activation.apply(v, nullptr, 1, n, n, 0, true);
      for (int64_t t = 0; t < n; ++t) v[t] = std::min(std::max(v[t], lo), hi);
    }
    if constexpr (std::is_same_v<Q, float>) {
      if (!inlined) std::copy(v, v + n, out + t0);
    } else {
      quantize_row(v, n, ys, zp, out + t0);
    }
  }
}

}  // namespace

void IntConvEpilogue::finish(const int32_t* acc, int64_t count, int64_t oc, int64_t y_off,
                             Tensor* y) const {
  const IntConvEpilogue& e = *this;
  const int32_t b = e.bias ? e.bias[oc] : 0;
  if (!requant) {
    int32_t* out = y->as<int32_t>() + y_off;
    std::memcpy(out, acc, static_cast<size_t>(count) * sizeof(int32_t));
    return;
  }
  if (e.out_type == DType::kFloat) {  // QFusedConv without y_scale: dequantized, activated
    activate_row(e, acc, count, b, oc, y->as<float>() + y_off);
    return;
  }
  if (e.float_epilogue()) {
    if (e.out_type == DType::kUint8)
      activate_row(e, acc, count, b, oc, y->as<uint8_t>() + y_off);
    else
      activate_row(e, acc, count, b, oc, y->as<int8_t>() + y_off);
    return;
  }
  const float mult = e.multiplier(oc);
  if (e.out_type == DType::kUint8)
    requantize_row(acc, count, b, mult, e.zp, e.lo, e.hi, y->as<uint8_t>() + y_off);
  else
    requantize_row(acc, count, b, mult, e.zp, e.lo, e.hi, y->as<int8_t>() + y_off);
}

}  // namespace sod2::rt::quant
