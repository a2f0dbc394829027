#include "runtime/kernels/linalg/epilogue.h"

#include <algorithm>
#include <cmath>

namespace sod2::rt {
namespace {

inline float activate(float v, Activation a, float alpha, float beta) {
  switch (a) {
    case Activation::kNone: return v;
    case Activation::kRelu: return v > 0.f ? v : 0.f;
    case Activation::kLeakyRelu: return v >= 0.f ? v : v * alpha;
    case Activation::kClip: return std::min(std::max(v, alpha), beta);
    case Activation::kSigmoid: return 1.f / (1.f + std::exp(-v));
    case Activation::kHardSigmoid: return std::min(1.f, std::max(0.f, alpha * v + beta));
    case Activation::kHardSwish: return v * std::min(1.f, std::max(0.f, v / 6.f + 0.5f));
    case Activation::kTanh: return std::tanh(v);
  }
  return v;
}

// One row with a fixed activation, so the switch leaves the inner loop and it vectorises.
template <Activation A>
void row_pass(float* y, const float* res, int64_t n, const float* bias0, const float* bias1,
              float row_bias, bool res_first, float alpha, float beta) {
  for (int64_t j = 0; j < n; ++j) {
    float v = y[j] + row_bias;
    if (bias0) v += bias0[j];
    if (bias1) v += bias1[j];
    if (res && res_first) v += res[j];
    v = activate(v, A, alpha, beta);
    if (res && !res_first) v += res[j];
    y[j] = v;
  }
}

template <Activation A>
void tile_pass(const EpilogueRun& e, float* y, const float* res, int64_t rows, int64_t cols,
               int64_t ld, int64_t ch0, bool channel_is_row) {
  for (int64_t r = 0; r < rows; ++r) {
    float row_bias = 0.f;
    const float* b0 = nullptr;
    const float* b1 = nullptr;
    if (channel_is_row) {
      if (e.bias[0]) row_bias += e.bias[0][ch0 + r];
      if (e.bias[1]) row_bias += e.bias[1][ch0 + r];
    } else {
      b0 = e.bias[0] ? e.bias[0] + ch0 : nullptr;
      b1 = e.bias[1] ? e.bias[1] + ch0 : nullptr;
    }
    row_pass<A>(y + r * ld, res ? res + r * ld : nullptr, cols, b0, b1, row_bias,
                e.residual_before_activation, e.alpha, e.beta);
  }
}

}  // namespace

void EpilogueRun::apply(float* y, const float* residual_tile, int64_t rows, int64_t cols,
                        int64_t ld, int64_t channel0, bool channel_is_row) const {
  switch (activation) {
#define SOD2_EPI_CASE(A) \
  case A: tile_pass<A>(*this, y, residual_tile, rows, cols, ld, channel0, channel_is_row); break;
    SOD2_EPI_CASE(Activation::kNone)
    SOD2_EPI_CASE(Activation::kRelu)
    SOD2_EPI_CASE(Activation::kLeakyRelu)
    SOD2_EPI_CASE(Activation::kClip)
    SOD2_EPI_CASE(Activation::kSigmoid)
    SOD2_EPI_CASE(Activation::kHardSigmoid)
    SOD2_EPI_CASE(Activation::kHardSwish)
    SOD2_EPI_CASE(Activation::kTanh)
#undef SOD2_EPI_CASE
  }
}

Expected<EpilogueRun> resolve_epilogue(const Epilogue& e, KernelContext& ctx, const char* op,
                                       const Shape& out_shape, int64_t channels,
                                       const float* op_bias) {
  EpilogueRun run;
  run.bias[0] = op_bias;
  run.activation = e.activation;
  run.alpha = e.alpha;
  run.beta = e.beta;
  run.residual_before_activation = e.residual_before_activation;
  if (e.bias_input >= 0) {
    const Tensor* b = ctx.input(static_cast<size_t>(e.bias_input));
    if (!b || b->dtype != DType::kFloat || b->numel() != channels)
      return invalid_argument(std::string(op) + ": fused bias must be float32 with " +
                              std::to_string(channels) + " elements" +
                              (b ? ", got " + b->shape.to_string() : ", got none"));
    run.bias[1] = b->as<float>();
  }
  if (e.residual_input >= 0) {
    const Tensor* r = ctx.input(static_cast<size_t>(e.residual_input));
    if (!r || r->dtype != DType::kFloat || !(r->shape == out_shape))
      return invalid_argument(std::string(op) + ": fused residual must be float32 shaped " +
                              out_shape.to_string() +
                              (r ? ", got " + r->shape.to_string() : ", got none"));
    run.residual = r->as<float>();
  }
  return run;
}

bool activation_from_name(const std::string& name, Activation* out) {
  static const std::pair<const char*, Activation> kNames[] = {
      {"Relu", Activation::kRelu},
      {"LeakyRelu", Activation::kLeakyRelu},
      {"Clip", Activation::kClip},
      {"Sigmoid", Activation::kSigmoid},
      {"HardSigmoid", Activation::kHardSigmoid},
      {"HardSwish", Activation::kHardSwish},
      {"Tanh", Activation::kTanh}};
  for (const auto& [n, a] : kNames)
    if (name == n) {
      *out = a;
      return true;
    }
  *out = Activation::kNone;
  return false;
}

}  // namespace sod2::rt
