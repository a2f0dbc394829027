// sod2:FusedBatchNormalization (fused_ops.h): inference BatchNormalization — y = x * a + b per
// channel (dim 1), a = scale / sqrt(var + epsilon), b = B - mean * a, as the plain kernel
// computes them — with the contraction ops' epilogue applied to each plane while it is in cache,
// so DenseNet's BatchNorm -> ReLU reads and writes its tensor once instead of twice.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/kernels/cpu_clones.h"
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/fused_ops.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt {
namespace {

constexpr int kStatistics = 5;  // X, scale, B, mean, var: the epilogue's slots follow

using V16f = float __attribute__((vector_size(64)));
using V8f = float __attribute__((vector_size(32)));

// y = x * a + b (then max(y, 0) where relu) over `count` positions of `width` lanes, lane l
// scaled by a[l] and shifted by b[l]: one vector a position for blocks of 16 or 8. No FMA, so
// each value rounds as the NCHW loop's does.
template <class V, int W>
[[gnu::always_inline]] inline void affine_positions(const float* src, float* dst, int64_t count,
                                                    const float* a, const float* b, bool relu) {
  V va, vb, zero = {};
  std::memcpy(&va, a, sizeof va);
  std::memcpy(&vb, b, sizeof vb);
  for (int64_t p = 0; p < count; ++p) {
    V v;
    std::memcpy(&v, src + p * W, sizeof v);
    v = v * va;
    v = v + vb;
    if (relu) v = v < zero ? zero : v;  // std::max(v, 0.f): NaN stays NaN
    std::memcpy(dst + p * W, &v, sizeof v);
  }
}

__attribute__((optimize("fp-contract=off"))) SOD2_CPU_CLONES void affine_lanes(
    const float* src, float* dst, int64_t count, int width, const float* a, const float* b,
    bool relu) {
  if (width == 16) return affine_positions<V16f, 16>(src, dst, count, a, b, relu);
  if (width == 8) return affine_positions<V8f, 8>(src, dst, count, a, b, relu);
  for (int64_t p = 0; p < count; ++p)
    for (int l = 0; l < width; ++l) {
      const float v = src[p * width + l] * a[l] + b[l];
      dst[p * width + l] = relu ? std::max(v, 0.f) : v;
    }
}

class FusedBatchNormKernel final : public Kernel {
 public:
  FusedBatchNormKernel(float epsilon, Epilogue e) : epsilon_(epsilon), e_(e) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    for (int i = 0; i < kStatistics; ++i) {
      const Tensor* t = ctx.input(static_cast<size_t>(i));
      if (!t || t->dtype != DType::kFloat)
        return invalid_argument("FusedBatchNormalization: input " + std::to_string(i) +
                                " must be a float32 tensor");
    }
    if (x->shape.rank() < 2)
      return invalid_argument("FusedBatchNormalization: X " + x->shape.to_string() +
                              " has no channel dim");
    const int64_t batch = x->shape[0], channels = x->shape[1];
    const int64_t plane = math::dims_product(x->shape, 2, x->shape.rank());
    for (int i = 1; i < kStatistics; ++i) {
      if (ctx.input(static_cast<size_t>(i))->numel() != channels)
        return invalid_argument("FusedBatchNormalization: input " + std::to_string(i) + " of " +
                                ctx.input(static_cast<size_t>(i))->shape.to_string() +
                                " does not match the " + std::to_string(channels) +
                                " channels of X " + x->shape.to_string());
    }
    SOD2_ASSIGN_OR_RETURN(
        const EpilogueRun run,
        resolve_epilogue(e_, ctx, "FusedBatchNormalization", x->shape, channels, nullptr));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, x->shape));
    if (x->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(2 * sizeof(float) * channels));
    float* a = static_cast<float*>(scratch);
    float* b = a + channels;
    const float* scale = ctx.input(1)->as<float>();
    const float* bias = ctx.input(2)->as<float>();
    const float* mean = ctx.input(3)->as<float>();
    const float* var = ctx.input(4)->as<float>();
    for (int64_t c = 0; c < channels; ++c) {
      const double k = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon_);
      a[c] = static_cast<float>(k);
      b[c] = static_cast<float>(bias[c] - mean[c] * k);
    }
    const float* in = x->as<float>();
    float* out = y->as<float>();
    // The common tail, ReLU alone, runs in the same pass; anything else after it.
    const bool relu_only =
        run.activation == Activation::kRelu && !run.residual && !run.bias[0] && !run.bias[1];
    if (block_ > 0) return run_blocked(ctx, run, relu_only, in, out, x->shape, a, b);
    const int64_t planes = batch * channels;
    const int64_t grain =
        std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(plane, 1));
    ctx.pool().parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const int64_t c = p % channels;
        const float ka = a[c], kb = b[c];
        const float* src = in + p * plane;
        float* dst = out + p * plane;
        if (relu_only) {  // the common tail, in the same pass
          for (int64_t i = 0; i < plane; ++i) dst[i] = std::max(src[i] * ka + kb, 0.f);
          continue;
        }
        for (int64_t i = 0; i < plane; ++i) dst[i] = src[i] * ka + kb;
        // One row of `plane` columns whose channel is c, while it is in cache.
        run.apply(dst, run.residual ? run.residual + p * plane : nullptr, 1, plane, plane, c, true);
      }
    });
    return Status::ok_status();
  }

  // X and Y held alike (kernel.h): each lane of a block is one channel, a narrow last block
  // included. With a residual the tie would reach a third tensor; such a node stays NCHW.
  BlockedIo blocked_io(int block) const override {
    return e_.residual_input >= 0 ? BlockedIo{} : tied_blocked_io(block);
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    block_ = tied_block_used(block, inputs, output);
  }

 private:
  // y = x * a + b (and the epilogue) on a held [N, C, H, W] X: per image and block, `width`
  // lanes per position, lane l being channel c0 + l.
  Status run_blocked(KernelContext& ctx, const EpilogueRun& run, bool relu_only, const float* in,
                     float* out, const Shape& shape, const float* a, const float* b) const {
    if (shape.rank() != 4)
      return internal_error("FusedBatchNormalization: X " + shape.to_string() +
                            " cannot be held in channel blocks of " + std::to_string(block_));
    const int64_t channels = shape[1], count = shape[2] * shape[3];
    const int64_t blocks = (channels + block_ - 1) / block_;
    const int64_t grain =
        std::max<int64_t>(1, math::kElementwiseGrain / std::max<int64_t>(count * block_, 1));
    ctx.pool().parallel_for(shape[0] * blocks, grain, [&](int64_t begin, int64_t end) {
      for (int64_t item = begin; item < end; ++item) {
        const int64_t c0 = item % blocks * block_;
        const int width = held_block_width(block_, channels, c0);
        const int64_t at = item / blocks * channels * count + c0 * count;
        const float* src = in + at;
        float* dst = out + at;
        affine_lanes(src, dst, count, width, a + c0, b + c0, relu_only);
        if (!relu_only) run.apply(dst, nullptr, count, width, width, c0, false);
      }
    });
    return Status::ok_status();
  }

  float epsilon_;
  Epilogue e_;
  int block_ = 0;  // channels per block of X and Y where they are held blocked
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fused_batch_norm(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(Epilogue e, read_fused_epilogue(node, "FusedBatchNormalization"));
  for (const int slot : {e.bias_input, e.residual_input}) {
    if (slot >= 0 && slot < kStatistics)
      return invalid_argument("FusedBatchNormalization: an epilogue slot (" + std::to_string(slot) +
                              ") names one of the five BatchNormalization inputs");
  }
  float epsilon = 1e-5f;
  int64_t training = 0, spatial = 1;
  SOD2_ATTR(epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ATTR(training, node.attrs.get_int("training_mode", 0));
  SOD2_ATTR(spatial, node.attrs.get_int("spatial", 1));
  if (training != 0 || spatial != 1)
    return invalid_argument(
        "FusedBatchNormalization: only inference form (training_mode 0, spatial 1) fuses");
  return std::unique_ptr<Kernel>(new FusedBatchNormKernel(epsilon, e));
}

}  // namespace sod2::rt
