// sod2:FusedBatchNormalization (fused_ops.h): inference BatchNormalization — y = x * a + b per
// channel (dim 1), a = scale / sqrt(var + epsilon), b = B - mean * a, as the plain kernel
// computes them — with the contraction ops' epilogue applied to each plane while it is in cache,
// so DenseNet's BatchNorm -> ReLU reads and writes its tensor once instead of twice.
#include <algorithm>
#include <cmath>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/fused_ops.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt {
namespace {

constexpr int kStatistics = 5;  // X, scale, B, mean, var: the epilogue's slots follow

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
    const int64_t planes = batch * channels;
    const bool relu_only =
        run.activation == Activation::kRelu && !run.residual && !run.bias[0] && !run.bias[1];
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

 private:
  float epsilon_;
  Epilogue e_;
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
