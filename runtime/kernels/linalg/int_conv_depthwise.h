// The integer convolutions' depthwise case (one input and one output channel per group), any
// zero points: three ways to the same int32 sums (quantize.h's semantics, bit for bit), finished
// through IntConvEpilogue:
//   - int8_depthwise_vnni.h's kernel where the CPU has AVX512-VNNI and -VBMI, output rows are 28
//     wide or more and the centred weights fit in int8, the epilogue in its store;
//   - else the float depthwise kernels (channels in lanes, or vectorised along output rows, as
//     for float models) over the centred values where the sums stay below 2^24 (exact there),
//     each work item's sums finished by its thread;
//   - else an int16 stencil per channel (int8_conv_layout.h's DwLayout).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/int_conv_epilogue.h"
#include "runtime/kernels/linalg/quantize.h"

namespace sod2::rt::quant {

class DepthwiseIntConv {
 public:
  // constant_weights: w is the same constant tensor every run, so its centred copies are kept.
  explicit DepthwiseIntConv(bool constant_weights) : constant_weights_(constant_weights) {}

  // x [n, c, spatial...], w [c, 1, kernel...], y [n, c, out...] of e's type.
  Status run(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
             const QuantParam& x_zp, const QuantParam& w_zp, const IntConvEpilogue& e, Tensor* y);

 private:
  // The weights centred on their zero points (weights()), and the tensor they came from.
  struct Weights {
    std::vector<float> floats;
    // Where every one fits in [-128, 127] (taps_fit), int8_depthwise_vnni.h's packed taps of
    // each channel (for 1-D and 2-D windows), and each channel's sum.
    bool taps_fit = false;
    std::vector<int32_t> tap_words;
    std::vector<int32_t> tap_sums;
    std::vector<int32_t> zero_points;
    const void* source = nullptr;
  };

  const Weights& weights(const Window3& g, const Tensor& w, const QuantParam& w_zp, int64_t c);
  Status vnni(KernelContext& ctx, const Window3& g, const Tensor& x, int32_t xzp,
              const IntConvEpilogue& e, Tensor* y);
  Status in_float(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
                  const QuantParam& x_zp, const QuantParam& w_zp, const IntConvEpilogue& e,
                  Tensor* y);
  Status stencil(KernelContext& ctx, const Window3& g, const Tensor& x, const Tensor& w,
                 const QuantParam& x_zp, const QuantParam& w_zp, const IntConvEpilogue& e,
                 Tensor* y) const;

  bool constant_weights_;
  Weights weights_;  // weights()
};

}  // namespace sod2::rt::quant
