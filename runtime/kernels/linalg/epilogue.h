// An elementwise tail fused into Conv / MatMul / Gemm: applied to each output tile right after
// the GEMM writes it, while the tile is still in cache, instead of as separate passes over memory.
//
//   y = act(acc + bias[channel] + residual)        (residual_before_activation = true)
//   y = act(acc + bias[channel]) + residual        (residual_before_activation = false)
//
// Bias and residual arrive at run time as extra kernel inputs (the fused node's), so the
// description names input slots rather than holding data. "Channel" is the output channel: the
// dim-1 index for Conv/ConvTranspose (NCHW), the last-dim (column) index for MatMul/Gemm.
#pragma once

#include <cstdint>
#include <string>

#include "core/status/status.h"
#include "runtime/kernels/kernel.h"

namespace sod2::rt {

enum class Activation : uint8_t {
  kNone,
  kRelu,
  kLeakyRelu,  // alpha = slope
  kClip,       // alpha = min, beta = max
  kSigmoid,
  kHardSigmoid,  // max(0, min(1, alpha * x + beta))
  kHardSwish,    // x * max(0, min(1, x / 6 + 0.5))
  kTanh,
  kSilu,  // x * sigmoid(x) (torch's SiLU / Swish: Conv -> Sigmoid -> Mul(conv, sigmoid))
  // GELU as torch exports it, the five ops' own arithmetic in their order:
  // ((erf(t) + 1) * x) * 0.5 with t = x / alpha where beta is 1 (Div), x * alpha where beta is 0
  // (Mul); alpha is sqrt(2) or its reciprocal as the model writes it.
  kGeluErf,
};

struct Epilogue {
  int bias_input = -1;      // kernel input slot of a [channels] tensor, or -1
  int residual_input = -1;  // kernel input slot of a tensor shaped like the output, or -1
  bool residual_before_activation = true;
  Activation activation = Activation::kNone;
  float alpha = 0.f;
  float beta = 0.f;

  bool empty() const {
    return bias_input < 0 && residual_input < 0 && activation == Activation::kNone;
  }
};

// What one run applies: the epilogue resolved against the run's inputs. Up to two bias vectors
// (the op's own, e.g. Conv's B, and the epilogue's) so neither has to be copied into a sum.
struct EpilogueRun {
  const float* bias[2] = {nullptr, nullptr};
  const float* residual = nullptr;  // same layout as the output
  bool residual_before_activation = true;
  Activation activation = Activation::kNone;
  float alpha = 0.f, beta = 0.f;

  bool empty() const {
    return !bias[0] && !bias[1] && !residual && activation == Activation::kNone;
  }
  // Applies to rows [0, rows) x cols [0, cols) of y (row stride ld). `residual` points at the
  // same element as y[0] and shares ld. The channel of element (r, c) is channel0 + r when
  // channel_is_row, else channel0 + c.
  void apply(float* y, const float* residual_tile, int64_t rows, int64_t cols, int64_t ld,
             int64_t channel0, bool channel_is_row) const;
};

// Checks the epilogue's inputs against the output (`op` names the op in errors) and resolves it.
// `channels`: the output's channel count; `op_bias`: the op's own bias data or nullptr.
Expected<EpilogueRun> resolve_epilogue(const Epilogue& e, KernelContext& ctx, const char* op,
                                       const Shape& out_shape, int64_t channels,
                                       const float* op_bias);

// Activation from its ONNX op name ("Relu", "Clip", ...; "Silu" for x * sigmoid(x) and "GeluErf"
// for kGeluErf, which have no ONNX op of their own); kNone with ok=false when unknown.
bool activation_from_name(const std::string& name, Activation* out);

}  // namespace sod2::rt
