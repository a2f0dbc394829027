// The epilogue applied to accumulator vectors before they are stored, for the direct-loop
// kernels (depthwise and dense conv): per-channel bias and the activations written on vectors
// (Sigmoid and SiLU through math::sigmoid_lanes, as EpilogueRun::apply computes them). Same
// operations in the same order as EpilogueRun::apply, so results are equal. Residuals and Tanh
// stay with EpilogueRun::apply after the store (still on the tile just written, so in cache).
#pragma once

#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/simd.h"
#include "runtime/kernels/math/fast_math.h"

namespace sod2::rt {

// Whether inline_epilogue below computes `a`. Every enumerator is listed, so a new activation is
// a compiler warning here, and it stays with EpilogueRun::apply until added.
constexpr bool is_plain_arithmetic(Activation a) {
  switch (a) {
    case Activation::kNone:
    case Activation::kRelu:
    case Activation::kLeakyRelu:
    case Activation::kClip:
    case Activation::kHardSigmoid:
    case Activation::kHardSwish:
    case Activation::kSigmoid:
    case Activation::kSilu: return true;
    case Activation::kTanh:
    case Activation::kGeluErf: return false;
  }
  return false;
}

struct InlineEpilogue {
  bool on = false;  // false: nothing inline (empty epilogue, or apply() does it all)
  Activation act = Activation::kNone;
  float alpha = 0.f, beta = 0.f;
  const float* bias[2] = {nullptr, nullptr};

  // The inline part of `e`; when on, apply() is not needed afterwards.
  static InlineEpilogue from(const EpilogueRun& e) {
    InlineEpilogue p;
    p.on = !e.empty() && !e.residual && is_plain_arithmetic(e.activation);
    p.act = e.activation;
    p.alpha = e.alpha;
    p.beta = e.beta;
    p.bias[0] = e.bias[0];
    p.bias[1] = e.bias[1];
    return p;
  }
};

// v + bias0[ch] + bias1[ch], then the activation.
template <int VL>
SOD2_SIMD_INLINE simd::Vec<VL> inline_epilogue(simd::Vec<VL> v, const InlineEpilogue& p,
                                               int64_t ch) {
  using V = simd::Vec<VL>;
  if (p.bias[0]) v = v + p.bias[0][ch];
  if (p.bias[1]) v = v + p.bias[1][ch];
  const V zero{};
  const V one = simd::splat<VL>(1.f);
  switch (p.act) {
    case Activation::kRelu: return v > 0.f ? v : zero;
    case Activation::kLeakyRelu: return v < 0.f ? v * p.alpha : v;
    case Activation::kClip: {
      const V lo = simd::splat<VL>(p.alpha), hi = simd::splat<VL>(p.beta);
      const V t = v < lo ? lo : v;
      return t > hi ? hi : t;
    }
    case Activation::kHardSigmoid: {
      V t = p.alpha * v + p.beta;
      t = t > 0.f ? t : zero;
      return t < 1.f ? t : one;
    }
    case Activation::kHardSwish: {
      V t = v * (1.f / 6.f) + 0.5f;
      t = t > 0.f ? t : zero;
      return v * (t < 1.f ? t : one);
    }
    case Activation::kSigmoid: return math::sigmoid_lanes(v);
    case Activation::kSilu: return v * math::sigmoid_lanes(v);
    default: return v;
  }
}

// The whole epilogue for kernels that finish every tile in registers, a residual included: the
// biases and the residual kept apart from the activation, since a residual may come before it.
struct RegisterEpilogue {
  InlineEpilogue act;  // the activation alone (its biases cleared)
  const float* bias[2] = {nullptr, nullptr};
  const float* residual = nullptr;
  int residual_mode = 0;  // 0 none, 1 before the activation, 2 after it

  static RegisterEpilogue from(const EpilogueRun& e) {
    RegisterEpilogue r;
    r.act = InlineEpilogue::from(e);
    r.act.bias[0] = r.act.bias[1] = nullptr;
    r.bias[0] = e.bias[0];
    r.bias[1] = e.bias[1];
    r.residual = e.residual;
    r.residual_mode = !e.residual ? 0 : e.residual_before_activation ? 1 : 2;
    return r;
  }
};

}  // namespace sod2::rt
