// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12 on).
//
// Scores are [N, C] or [N, C, d1, ..., dk] and targets [N] or [N, d1, ..., dk], viewed here as
// [N, C, D] and [N, D]. Each position's loss is -input[n][t][d] * weight[t] (weight 1 without a
// weight input), 0 where t == ignore_index. SoftmaxCrossEntropyLoss first takes the log-softmax
// of the scores along C (its optional output 1). Reductions: none keeps [N, d1, ...]; sum adds
// everything; mean divides the sum by the summed weights of the positions not ignored (so by
// their count without weights). A target outside [0, C) that is not ignore_index is an error.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

enum class Reduction { kNone, kSum, kMean };

struct LossConfig {
  Reduction reduction = Reduction::kMean;
  bool has_ignore_index = false;
  int64_t ignore_index = 0;
};

// The log-softmax along C of one [C, D] block, into `y` (which may be `x`), for columns
// [d0, d1): each column's max and sum of exponentials first, then its outputs.
template <class T>
void log_softmax_columns(const T* x, T* y, int64_t c, int64_t d, int64_t d0, int64_t d1) {
  constexpr int64_t kChunk = 64;
  double max[kChunk], lse[kChunk];
  for (int64_t j0 = d0; j0 < d1; j0 += kChunk) {
    const int64_t w = std::min(kChunk, d1 - j0);
    for (int64_t j = 0; j < w; ++j) max[j] = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < c; ++i) {
      const T* row = x + i * d + j0;
      for (int64_t j = 0; j < w; ++j) max[j] = std::max(max[j], static_cast<double>(row[j]));
    }
    // A column of -inf (or +inf) leaves exp/log to their own rules: shift by 0 instead.
    for (int64_t j = 0; j < w; ++j) {
      if (!std::isfinite(max[j])) max[j] = 0;
      lse[j] = 0;
    }
    for (int64_t i = 0; i < c; ++i) {
      const T* row = x + i * d + j0;
      for (int64_t j = 0; j < w; ++j) lse[j] += std::exp(static_cast<double>(row[j]) - max[j]);
    }
    for (int64_t j = 0; j < w; ++j) lse[j] = max[j] + std::log(lse[j]);
    for (int64_t i = 0; i < c; ++i) {
      const T* row = x + i * d + j0;
      T* out = y + i * d + j0;
      for (int64_t j = 0; j < w; ++j) out[j] = static_cast<T>(static_cast<double>(row[j]) - lse[j]);
    }
  }
}

template <bool kSoftmax>
class LossKernel final : public Kernel {
 public:
  LossKernel(LossConfig cfg, bool log_prob_output) : cfg_(cfg), log_prob_output_(log_prob_output) {}

  Status run(KernelContext& ctx) override {
    const char* name = kSoftmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
    const Tensor* x = ctx.input(0);
    const Tensor* target = ctx.input(1);
    const Tensor* weight = ctx.input(2);
    if (!x || !target) return invalid_argument(std::string(name) + ": an input is missing");
    SOD2_RETURN_IF_ERROR(check_shapes(name, *x, *target, weight));
    if (target->dtype != DType::kInt64 && target->dtype != DType::kInt32) {
      return invalid_argument(std::string(name) + ": targets should be int32 or int64, not " +
                              dtype_name(target->dtype));
    }
    return visit_dtype(name, x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        return run_typed<T>(ctx, name, *x, *target, weight);
      } else {
        return unsupported_dtype(name, x->dtype);
      }
    });
  }

 private:
  static Status check_shapes(const char* name, const Tensor& x, const Tensor& target,
                             const Tensor* weight) {
    const Shape& s = x.shape;
    const Shape& t = target.shape;
    bool ok = s.rank() >= 2 && t.rank() == s.rank() - 1 && t[0] == s[0];
    for (int i = 1; ok && i < t.rank(); ++i) ok = t[i] == s[i + 1];
    if (!ok) {
      return invalid_argument(std::string(name) + ": scores " + s.to_string() +
                              " must be [N, C, d1, ...] and targets [N, d1, ...], got targets " +
                              t.to_string());
    }
    if (weight) {
      if (weight->shape.rank() != 1 || weight->shape[0] != s[1]) {
        return invalid_argument(std::string(name) + ": weights must be [C] = [" +
                                std::to_string(s[1]) + "], got " + weight->shape.to_string());
      }
      if (weight->dtype != x.dtype) {
        return invalid_argument(std::string(name) + ": weights are " + dtype_name(weight->dtype) +
                                " but scores are " + dtype_name(x.dtype));
      }
    }
    return Status::ok_status();
  }

  template <class T>
  Status run_typed(KernelContext& ctx, const char* name, const Tensor& x, const Tensor& target,
                   const Tensor* weight) {
    const int64_t n = x.shape[0], c = x.shape[1];
    const int64_t d = dims_product(x.shape, 2, x.shape.rank());
    const T* log_prob = x.as<const T>();
    if constexpr (kSoftmax) {
      // Log-probabilities into output 1 when the model asks for it, else into scratch.
      T* lp = nullptr;
      if (log_prob_output_) {
        SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(1, x.dtype, x.shape));
        lp = out->as<T>();
      } else if (x.numel() > 0) {
        SOD2_ASSIGN_OR_RETURN(void* scratch,
                              ctx.scratch(static_cast<size_t>(x.numel()) * sizeof(T)));
        lp = static_cast<T*>(scratch);
      }
      if (x.numel() > 0) {
        const T* in = x.as<const T>();
        // Tasks of (sample, chunk of up to 256 columns).
        constexpr int64_t kWidth = 256;
        const int64_t chunks = (d + kWidth - 1) / kWidth;
        const int64_t grain =
            std::max<int64_t>(1, kTranscendentalGrain / (c * std::min(d, kWidth)));
        ctx.pool().parallel_for(n * chunks, grain, [&](int64_t b, int64_t e) {
          for (int64_t task = b; task < e; ++task) {
            const int64_t s = task / chunks, j = (task % chunks) * kWidth;
            log_softmax_columns(in + s * c * d, lp + s * c * d, c, d, j, std::min(d, j + kWidth));
          }
        });
      }
      log_prob = lp;
    }
    Shape loss_shape;
    if (cfg_.reduction == Reduction::kNone) loss_shape = target.shape;
    SOD2_ASSIGN_OR_RETURN(Tensor * loss, ctx.output(0, x.dtype, loss_shape));
    T* out = loss->as<T>();
    const T* w = weight ? weight->as<const T>() : nullptr;
    double sum = 0, weight_sum = 0;
    for (int64_t s = 0; s < n; ++s) {
      for (int64_t j = 0; j < d; ++j) {
        const int64_t pos = s * d + j;
        const int64_t t = target.dtype == DType::kInt64 ? target.as<const int64_t>()[pos]
                                                        : target.as<const int32_t>()[pos];
        double l = 0, wt = 0;
        if (!cfg_.has_ignore_index || t != cfg_.ignore_index) {
          if (t < 0 || t >= c) {
            return invalid_argument(
                std::string(name) + ": target " + std::to_string(t) + " at position " +
                std::to_string(pos) + " is out of range for " + std::to_string(c) + " classes" +
                (cfg_.has_ignore_index
                     ? " (ignore_index is " + std::to_string(cfg_.ignore_index) + ")"
                     : std::string()));
          }
          wt = w ? static_cast<double>(w[t]) : 1.0;
          l = -static_cast<double>(log_prob[(s * c + t) * d + j]) * wt;
        }
        if (cfg_.reduction == Reduction::kNone) {
          out[pos] = static_cast<T>(l);
        } else {
          sum += l;
          weight_sum += wt;
        }
      }
    }
    if (cfg_.reduction == Reduction::kSum) *out = static_cast<T>(sum);
    // No position counted (all ignored, or none at all): 0 / 0 = NaN, like numpy and PyTorch.
    if (cfg_.reduction == Reduction::kMean) *out = static_cast<T>(sum / weight_sum);
    return Status::ok_status();
  }

  LossConfig cfg_;
  bool log_prob_output_;  // SoftmaxCrossEntropyLoss's output 1 is asked for
};

template <bool kSoftmax>
Expected<std::unique_ptr<Kernel>> loss_factory(const NodeInfo& node) {
  const char* name = kSoftmax ? "SoftmaxCrossEntropyLoss" : "NegativeLogLikelihoodLoss";
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  LossConfig cfg;
  std::string reduction;
  SOD2_RETURN_IF_ERROR(get_string_attr(node, "reduction", "mean", &reduction));
  if (reduction == "none") {
    cfg.reduction = Reduction::kNone;
  } else if (reduction == "sum") {
    cfg.reduction = Reduction::kSum;
  } else if (reduction == "mean") {
    cfg.reduction = Reduction::kMean;
  } else {
    return invalid_model(std::string(name) + ": reduction '" + reduction +
                         "' is not none, sum or mean");
  }
  if (node.attrs.has("ignore_index")) {
    SOD2_ASSIGN_OR_RETURN(cfg.ignore_index, node.attrs.get_int("ignore_index", 0));
    cfg.has_ignore_index = true;
  }
  const size_t max_outputs = kSoftmax ? 2 : 1;
  if (node.num_outputs > max_outputs) {
    return invalid_model(std::string(name) + ": " + std::to_string(node.num_outputs) +
                         " outputs, at most " + std::to_string(max_outputs));
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<LossKernel<kSoftmax>>(cfg, kSoftmax && node.num_outputs > 1));
}

}  // namespace

void register_loss(KernelRegistry& r) {
  r.add("", "NegativeLogLikelihoodLoss", 12, &loss_factory<false>);
  r.add("", "SoftmaxCrossEntropyLoss", 12, &loss_factory<true>);
}

}  // namespace sod2::rt::math
