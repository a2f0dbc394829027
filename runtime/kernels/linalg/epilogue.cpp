#include "runtime/kernels/linalg/epilogue.h"

#include <algorithm>
#include <cmath>

#include "runtime/kernels/linalg/simd.h"
#include "runtime/kernels/math/fast_math.h"

namespace sod2::rt {
namespace {

// The activations with the math family's formulas (runtime/kernels/math/vec_kernels.cpp), so
// a fused chain matches the separate ops; branch-free, so the row loops vectorise.
template <Activation A>
SOD2_SIMD_INLINE float activate(float v, float alpha, float beta) {
  if constexpr (A == Activation::kNone) {
    return v;
  } else if constexpr (A == Activation::kRelu) {
    return v > 0.f ? v : 0.f;
  } else if constexpr (A == Activation::kLeakyRelu) {
    return v < 0.f ? v * alpha : v;
  } else if constexpr (A == Activation::kClip) {
    const float t = v < alpha ? alpha : v;
    return t > beta ? beta : t;
  } else if constexpr (A == Activation::kSigmoid) {
    return math::vec_sigmoidf(v);
  } else if constexpr (A == Activation::kHardSigmoid) {
    float t = alpha * v + beta;
    t = t > 0.f ? t : 0.f;
    return t < 1.f ? t : 1.f;
  } else if constexpr (A == Activation::kHardSwish) {
    float t = v * (1.f / 6.f) + 0.5f;
    t = t > 0.f ? t : 0.f;
    return v * (t < 1.f ? t : 1.f);
  } else if constexpr (A == Activation::kSilu) {
    // Sigmoid's formula, then the Mul (the chain torch exports). No NaN for finite v: e^-v
    // reaches inf below about -88.0 (the sigmoid is then 0 and v * 0 is -0) and the sigmoid
    // rounds to 1 above 87.3.
    return v * math::vec_sigmoidf(v);
  } else if constexpr (A == Activation::kGeluErf) {
    // math::gelu_erf_f32's steps in their order. This library contracts multiply-adds and the
    // math one does not, so a result may differ from the five ops' in the last bit.
    const float t = beta != 0.f ? v / alpha : v * alpha;
    return ((math::vec_erff(t) + 1.f) * v) * 0.5f;
  } else {
    static_assert(A == Activation::kTanh);
    return math::vec_tanhf(v);
  }
}

// One row: NB column-bias vectors (0-2), RM residual mode (0 none, 1 before the activation,
// 2 after). No branch in the loop, so it vectorises.
template <Activation A, int NB, int RM>
SOD2_SIMD_INLINE void row_pass(float* __restrict y, const float* __restrict res, int64_t n,
                               const float* __restrict b0, const float* __restrict b1, float rb0,
                               float rb1, float alpha, float beta) {
  int64_t j = 0;
  if constexpr (A == Activation::kSigmoid || A == Activation::kSilu) {
    // The auto-vectoriser turns the logistic's clamps into masked copies of the whole formula;
    // written on vectors it is one pass (math::sigmoid_lanes, the same operations as the scalar
    // tail below).
    using V16 = simd::Vec<16>;
    using simd::load;
    for (; j + 16 <= n; j += 16) {
      V16 v = load<16>(y + j) + rb0 + rb1;
      if constexpr (NB >= 1) v += load<16>(b0 + j);
      if constexpr (NB >= 2) v += load<16>(b1 + j);
      if constexpr (RM == 1) v += load<16>(res + j);
      const V16 s = math::sigmoid_lanes(v);
      v = A == Activation::kSilu ? v * s : s;
      if constexpr (RM == 2) v += load<16>(res + j);
      simd::store<16>(y + j, v);
    }
  }
  for (; j < n; ++j) {
    float v = y[j] + rb0 + rb1;
    if constexpr (NB >= 1) v += b0[j];
    if constexpr (NB >= 2) v += b1[j];
    if constexpr (RM == 1) v += res[j];
    v = activate<A>(v, alpha, beta);
    if constexpr (RM == 2) v += res[j];
    y[j] = v;
  }
}

// Rows of exactly L contiguous columns (a channel-blocked tile: a position's L channels per
// row): row_pass with the row length known, so each row is one vector and the activation's
// constants stay in registers across rows.
template <Activation A, int NB, int RM, int L>
SOD2_SIMD_INLINE void lanes_pass(float* y, const float* res, int64_t rows, const float* b0,
                                 const float* b1, float alpha, float beta) {
  for (int64_t r = 0; r < rows; ++r)
    row_pass<A, NB, RM>(y + r * L, res ? res + r * L : nullptr, L, b0, b1, 0.f, 0.f, alpha, beta);
}

template <Activation A, int NB, int RM>
SOD2_SIMD_INLINE void tile_pass(const EpilogueRun& e, float* y, const float* res, int64_t rows,
                                int64_t cols, int64_t ld, int64_t ch0, bool channel_is_row) {
  // Column biases (channel = column), or per-row scalars (channel = row).
  const float* cb0 = nullptr;
  const float* cb1 = nullptr;
  if (!channel_is_row) {
    const float* first = e.bias[0] ? e.bias[0] : e.bias[1];
    cb0 = first ? first + ch0 : nullptr;
    cb1 = e.bias[0] && e.bias[1] ? e.bias[1] + ch0 : nullptr;
    if (ld == cols && cols == 16)
      return lanes_pass<A, NB, RM, 16>(y, res, rows, cb0, cb1, e.alpha, e.beta);
    if (ld == cols && cols == 8)
      return lanes_pass<A, NB, RM, 8>(y, res, rows, cb0, cb1, e.alpha, e.beta);
  }
  for (int64_t r = 0; r < rows; ++r) {
    float rb0 = 0.f, rb1 = 0.f;
    if (channel_is_row) {
      if (e.bias[0]) rb0 = e.bias[0][ch0 + r];
      if (e.bias[1]) rb1 = e.bias[1][ch0 + r];
    }
    row_pass<A, NB, RM>(y + r * ld, res ? res + r * ld : nullptr, cols, cb0, cb1, rb0, rb1, e.alpha,
                        e.beta);
  }
}

template <Activation A>
SOD2_SIMD_INLINE void tile_act(const EpilogueRun& e, float* y, const float* res, int64_t rows,
                               int64_t cols, int64_t ld, int64_t ch0, bool channel_is_row) {
  const int nb = channel_is_row ? 0 : (e.bias[0] != nullptr) + (e.bias[1] != nullptr);
  const int rm = !res ? 0 : e.residual_before_activation ? 1 : 2;
  switch (nb * 3 + rm) {
#define SOD2_EPI_CASE(NB, RM) \
  case NB * 3 + RM: return tile_pass<A, NB, RM>(e, y, res, rows, cols, ld, ch0, channel_is_row);
    SOD2_EPI_CASE(0, 0)
    SOD2_EPI_CASE(0, 1)
    SOD2_EPI_CASE(0, 2)
    SOD2_EPI_CASE(1, 0)
    SOD2_EPI_CASE(1, 1)
    SOD2_EPI_CASE(1, 2)
    SOD2_EPI_CASE(2, 0)
    SOD2_EPI_CASE(2, 1)
    SOD2_EPI_CASE(2, 2)
#undef SOD2_EPI_CASE
    default: break;
  }
}

SOD2_SIMD_INLINE void apply_impl(const EpilogueRun& e, float* y, const float* res, int64_t rows,
                                 int64_t cols, int64_t ld, int64_t ch0, bool channel_is_row) {
  switch (e.activation) {
#define SOD2_EPI_CASE(A) \
  case A: return tile_act<A>(e, y, res, rows, cols, ld, ch0, channel_is_row);
    SOD2_EPI_CASE(Activation::kNone)
    SOD2_EPI_CASE(Activation::kRelu)
    SOD2_EPI_CASE(Activation::kLeakyRelu)
    SOD2_EPI_CASE(Activation::kClip)
    SOD2_EPI_CASE(Activation::kSigmoid)
    SOD2_EPI_CASE(Activation::kHardSigmoid)
    SOD2_EPI_CASE(Activation::kHardSwish)
    SOD2_EPI_CASE(Activation::kTanh)
    SOD2_EPI_CASE(Activation::kSilu)
    SOD2_EPI_CASE(Activation::kGeluErf)
#undef SOD2_EPI_CASE
  }
}

// One copy per instruction set (simd.h), picked at run time.
#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void apply_avx512(const EpilogueRun& e, float* y, const float* res, int64_t rows,
                                     int64_t cols, int64_t ld, int64_t ch0, bool channel_is_row) {
  apply_impl(e, y, res, rows, cols, ld, ch0, channel_is_row);
}
SOD2_TARGET_AVX2 void apply_avx2(const EpilogueRun& e, float* y, const float* res, int64_t rows,
                                 int64_t cols, int64_t ld, int64_t ch0, bool channel_is_row) {
  apply_impl(e, y, res, rows, cols, ld, ch0, channel_is_row);
}
#endif
void apply_base(const EpilogueRun& e, float* y, const float* res, int64_t rows, int64_t cols,
                int64_t ld, int64_t ch0, bool channel_is_row) {
  apply_impl(e, y, res, rows, cols, ld, ch0, channel_is_row);
}

}  // namespace

void EpilogueRun::apply(float* y, const float* residual_tile, int64_t rows, int64_t cols,
                        int64_t ld, int64_t channel0, bool channel_is_row) const {
  if (empty() || rows <= 0 || cols <= 0) return;
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512:
      return apply_avx512(*this, y, residual_tile, rows, cols, ld, channel0, channel_is_row);
    case simd::Level::kAvx2:
      return apply_avx2(*this, y, residual_tile, rows, cols, ld, channel0, channel_is_row);
    default: break;
  }
#endif
  apply_base(*this, y, residual_tile, rows, cols, ld, channel0, channel_is_row);
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
      {"Tanh", Activation::kTanh},
      {"Silu", Activation::kSilu},
      {"GeluErf", Activation::kGeluErf}};
  for (const auto& [n, a] : kNames)
    if (name == n) {
      *out = a;
      return true;
    }
  *out = Activation::kNone;
  return false;
}

}  // namespace sod2::rt
