// LayerNormalization (opset 17), BatchNormalization (inference and training mode),
// InstanceNormalization, LRN and MeanVarianceNormalization. Statistics are taken in double with a
// two-pass variance; the per-element pass is a vectorisable multiply-add in the tensor's own type.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/math/accumulate.h"
#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

// y = (x - mean) * inv_std * scale + bias over one row; scale/bias may be null (1 and 0) and
// have stride 0 (one value) or 1.
template <class T>
void normalize_row(const T* x, T* y, int64_t n, T mean, T inv_std, const T* scale,
                   int64_t scale_stride, const T* bias, int64_t bias_stride) {
  if (scale && bias && scale_stride == 1 && bias_stride == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
  } else if (scale && !bias && scale_stride == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i];
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const T s = scale ? scale[i * scale_stride] : T(1);
      const T b = bias ? bias[i * bias_stride] : T(0);
      y[i] = (x[i] - mean) * inv_std * s + b;
    }
  }
}

// ---- LayerNormalization

class LayerNormKernel final : public Kernel {
 public:
  LayerNormKernel(int64_t axis, float epsilon, size_t num_outputs, bool stash_double)
      : axis_(axis), epsilon_(epsilon), num_outputs_(num_outputs), stash_double_(stash_double) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale) return invalid_argument("LayerNormalization: needs X and Scale");
    const int rank = x->shape.rank();
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("LayerNormalization", axis_, rank, &axis));
    const int64_t rows = dims_product(x->shape, 0, axis);
    const int64_t n = dims_product(x->shape, axis, rank);
    SOD2_RETURN_IF_ERROR(check_param(scale, *x, n, "Scale"));
    if (bias) SOD2_RETURN_IF_ERROR(check_param(bias, *x, n, "B"));
    // Mean and InvStdDev keep the leading dims and have 1 for the normalised ones.
    Shape stat_shape = x->shape;
    for (int i = axis; i < rank; ++i) stat_shape[i] = 1;
    return visit_dtype("LayerNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        const DType stat_dtype = stash_double_ ? DType::kDouble : DType::kFloat;
        Tensor* mean_out = nullptr;
        Tensor* inv_out = nullptr;
        if (num_outputs_ > 1) {
          SOD2_ASSIGN_OR_RETURN(mean_out, ctx.output(1, stat_dtype, stat_shape));
        }
        if (num_outputs_ > 2) {
          SOD2_ASSIGN_OR_RETURN(inv_out, ctx.output(2, stat_dtype, stat_shape));
        }
        if (rows == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const T* s = scale->as<const T>();
        const T* b = bias ? bias->as<const T>() : nullptr;
        const int64_t ss = scale->numel() == 1 ? 0 : 1;
        const int64_t bs = bias && bias->numel() == 1 ? 0 : 1;
        const double eps = epsilon_;
        if constexpr (std::is_same_v<T, float>) {
          if (n > 0) {
            run_float(ctx.pool(), in, out, rows, n, s, ss, b, bs, eps, mean_out, inv_out);
            return Status::ok_status();
          }
        }
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
        ctx.pool().parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const T* row = in + r * n;
            const double mean = n > 0 ? row_sum(row, n) / static_cast<double>(n) : 0.0;
            const double var =
                n > 0 ? row_squared_deviation(row, n, mean) / static_cast<double>(n) : 0.0;
            const double inv_std = 1.0 / std::sqrt(var + eps);
            normalize_row(row, out + r * n, n, static_cast<T>(mean), static_cast<T>(inv_std), s, ss,
                          b, bs);
            store_stat(mean_out, r, mean);
            store_stat(inv_out, r, inv_std);
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("LayerNormalization", x->dtype);
      }
    });
  }

 private:
  // float: the vectorised rows (vec_kernels.h), statistics staged per 64 rows.
  static void run_float(ThreadPool& pool, const float* in, float* out, int64_t rows, int64_t n,
                        const float* s, int64_t ss, const float* b, int64_t bs, double eps,
                        Tensor* mean_out, Tensor* inv_out) {
    const int64_t grain = std::max<int64_t>(1, kVecGrain / n);
    pool.parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      constexpr int64_t kBatch = 64;
      double mean[kBatch], inv[kBatch];
      const bool stats = mean_out || inv_out;
      for (int64_t r = begin; r < end; r += kBatch) {
        const int64_t count = std::min(kBatch, end - r);
        layer_norm_rows_f32(in + r * n, out + r * n, count, n, s, ss, b, bs, eps,
                            stats ? mean : nullptr, stats ? inv : nullptr);
        for (int64_t i = 0; stats && i < count; ++i) {
          store_stat(mean_out, r + i, mean[i]);
          store_stat(inv_out, r + i, inv[i]);
        }
      }
    });
  }

  static void store_stat(Tensor* t, int64_t i, double v) {
    if (!t) return;
    if (t->dtype == DType::kDouble) {
      t->as<double>()[i] = v;
    } else {
      t->as<float>()[i] = static_cast<float>(v);
    }
  }

  static Status check_param(const Tensor* p, const Tensor& x, int64_t n, const char* what) {
    if (p->dtype != x.dtype) {
      return invalid_argument(std::string("LayerNormalization: ") + what + " has type " +
                              dtype_name(p->dtype) + ", X " + dtype_name(x.dtype));
    }
    if (p->numel() != n && p->numel() != 1) {
      return invalid_argument(std::string("LayerNormalization: ") + what + " of shape " +
                              p->shape.to_string() + " does not match the normalised dims of " +
                              x.shape.to_string());
    }
    return Status::ok_status();
  }

  int64_t axis_;
  float epsilon_;
  size_t num_outputs_;
  bool stash_double_;
};

Expected<std::unique_ptr<Kernel>> layer_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ASSIGN_OR_RETURN(int64_t stash, node.attrs.get_int("stash_type", 1));
  if (stash != 1 && stash != 11) {
    return unsupported("LayerNormalization: stash_type " + std::to_string(stash) +
                       " (only float and double)");
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<LayerNormKernel>(axis, epsilon, node.num_outputs, stash == 11));
}

// ---- BatchNormalization
// Inference normalises with the running statistics (inputs 3 and 4). Training mode (opset 14+:
// training_mode=1; earlier opsets: more than one output) normalises with the batch's own mean
// and population variance per channel and outputs the updated running statistics,
// running = input * momentum + batch * (1 - momentum); opsets before 14 add the batch mean and
// variance as outputs 3 and 4 (saved_mean, saved_var).

class BatchNormKernel final : public Kernel {
 public:
  BatchNormKernel(float epsilon, bool spatial, bool training, float momentum, size_t num_outputs)
      : epsilon_(epsilon),
        spatial_(spatial),
        training_(training),
        momentum_(momentum),
        num_outputs_(num_outputs) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    for (size_t i = 0; i < 5; ++i) {
      if (!ctx.input(i)) return invalid_argument("BatchNormalization: needs five inputs");
      if (ctx.input(i)->dtype != x->dtype) {
        return invalid_argument(std::string("BatchNormalization: input ") + std::to_string(i) +
                                " has type " + dtype_name(ctx.input(i)->dtype) + ", X " +
                                dtype_name(x->dtype));
      }
    }
    const int rank = x->shape.rank();
    if (rank < 1) return invalid_argument("BatchNormalization: X must have a channel dim");
    const int64_t batch = x->shape[0];
    // spatial=0 (opsets < 9): one statistic per element of a sample, not per channel.
    const int64_t channels =
        spatial_ ? (rank > 1 ? x->shape[1] : 1) : dims_product(x->shape, 1, rank);
    const int64_t plane = spatial_ ? dims_product(x->shape, std::min(rank, 2), rank) : 1;
    for (size_t i = 1; i < 5; ++i) {
      if (ctx.input(i)->numel() != channels) {
        return invalid_argument("BatchNormalization: input " + std::to_string(i) + " of shape " +
                                ctx.input(i)->shape.to_string() + " does not match " +
                                std::to_string(channels) + " channels of X " +
                                x->shape.to_string());
      }
    }
    return visit_dtype("BatchNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        const T* in = x->as<const T>();
        const T* scale = ctx.input(1)->as<const T>();
        const T* bias = ctx.input(2)->as<const T>();
        const T* mean = ctx.input(3)->as<const T>();
        const T* var = ctx.input(4)->as<const T>();
        if (training_) {
          // The batch statistics replace the running ones in the normalisation below.
          if (batch == 0 || plane == 0) {
            return invalid_argument(
                "BatchNormalization: training mode needs a non-empty batch, X " +
                x->shape.to_string());
          }
          SOD2_ASSIGN_OR_RETURN(void* stats, ctx.scratch(2 * sizeof(T) * channels));
          T* batch_mean = static_cast<T*>(stats);
          T* batch_var = batch_mean + channels;
          batch_statistics(ctx.pool(), in, batch, channels, plane, batch_mean, batch_var);
          const Shape stat_shape = ctx.input(3)->shape;
          const T momentum = static_cast<T>(momentum_);
          for (size_t o = 1; o < num_outputs_ && o < 5; ++o) {
            SOD2_ASSIGN_OR_RETURN(Tensor * t, ctx.output(o, x->dtype, stat_shape));
            T* dst = t->as<T>();
            for (int64_t c = 0; c < channels; ++c) {
              switch (o) {
                case 1: dst[c] = mean[c] * momentum + batch_mean[c] * (T(1) - momentum); break;
                case 2: dst[c] = var[c] * momentum + batch_var[c] * (T(1) - momentum); break;
                case 3: dst[c] = batch_mean[c]; break;
                default: dst[c] = batch_var[c]; break;
              }
            }
          }
          mean = batch_mean;
          var = batch_var;
        }
        if (x->numel() == 0) return Status::ok_status();
        // y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a per channel.
        SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(2 * sizeof(T) * channels));
        T* a = static_cast<T*>(scratch);
        T* b = a + channels;
        for (int64_t c = 0; c < channels; ++c) {
          const double k = scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon_);
          a[c] = static_cast<T>(k);
          b[c] = static_cast<T>(bias[c] - mean[c] * k);
        }
        T* out = y->as<T>();
        const int64_t planes = batch * channels;
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(plane, 1));
        ctx.pool().parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
          if (plane == 1) {
            for (int64_t p = begin; p < end; ++p)
              out[p] = in[p] * a[p % channels] + b[p % channels];
            return;
          }
          for (int64_t p = begin; p < end; ++p) {
            const T ka = a[p % channels], kb = b[p % channels];
            const T* src = in + p * plane;
            T* dst = out + p * plane;
            for (int64_t i = 0; i < plane; ++i) dst[i] = src[i] * ka + kb;
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("BatchNormalization", x->dtype);
      }
    });
  }

 private:
  // Per channel c: the mean and population variance of x[n, c, i] over n and i (x is
  // [batch, channels, plane]), in double, two passes.
  template <class T>
  static void batch_statistics(ThreadPool& pool, const T* x, int64_t batch, int64_t channels,
                               int64_t plane, T* mean_out, T* var_out) {
    const double count = static_cast<double>(batch) * static_cast<double>(plane);
    const int64_t grain =
        std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, batch * plane));
    pool.parallel_for(channels, grain, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < batch; ++n) sum += row_sum(x + (n * channels + c) * plane, plane);
        const double mean = sum / count;
        double dev = 0;
        for (int64_t n = 0; n < batch; ++n)
          dev += row_squared_deviation(x + (n * channels + c) * plane, plane, mean);
        mean_out[c] = static_cast<T>(mean);
        var_out[c] = static_cast<T>(dev / count);
      }
    });
  }

  float epsilon_;
  bool spatial_;
  bool training_;
  float momentum_;
  size_t num_outputs_;
};

Expected<std::unique_ptr<Kernel>> batch_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 5));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ASSIGN_OR_RETURN(float momentum, node.attrs.get_float("momentum", 0.9f));
  SOD2_ASSIGN_OR_RETURN(int64_t training_mode, node.attrs.get_int("training_mode", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t spatial, node.attrs.get_int("spatial", 1));
  bool training = training_mode != 0;
  if (node.opset >= 14) {
    const size_t allowed = training ? 3 : 1;
    if (node.num_outputs > allowed) {
      return invalid_model("BatchNormalization: " + std::to_string(node.num_outputs) +
                           " outputs with training_mode=" + std::to_string(training_mode) +
                           " (at most " + std::to_string(allowed) + ")");
    }
  } else {
    // Before opset 14 the outputs say the mode: Y alone for inference.
    training = node.num_outputs > 1;
    if (node.num_outputs > 5) {
      return invalid_model("BatchNormalization: " + std::to_string(node.num_outputs) +
                           " outputs (at most 5)");
    }
  }
  return std::unique_ptr<Kernel>(std::make_unique<BatchNormKernel>(epsilon, spatial != 0, training,
                                                                   momentum, node.num_outputs));
}

// ---- InstanceNormalization

class InstanceNormKernel final : public Kernel {
 public:
  explicit InstanceNormKernel(float epsilon) : epsilon_(epsilon) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale || !bias) return invalid_argument("InstanceNormalization: needs three inputs");
    const int rank = x->shape.rank();
    if (rank < 2) {
      return invalid_argument("InstanceNormalization: X of shape " + x->shape.to_string() +
                              " has no channel dim");
    }
    const int64_t channels = x->shape[1];
    if (scale->numel() != channels || bias->numel() != channels || scale->dtype != x->dtype ||
        bias->dtype != x->dtype) {
      return invalid_argument("InstanceNormalization: scale " + scale->shape.to_string() +
                              " and B " + bias->shape.to_string() + " should be [" +
                              std::to_string(channels) + "] of X's type");
    }
    const int64_t planes = x->shape[0] * channels;
    const int64_t plane = dims_product(x->shape, 2, rank);
    return visit_dtype("InstanceNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const T* s = scale->as<const T>();
        const T* b = bias->as<const T>();
        const double eps = epsilon_;
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / plane);
        ctx.pool().parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const T* src = in + p * plane;
            if constexpr (std::is_same_v<T, float>) {
              // Each plane a row of LayerNormalization's vectorised loops (double statistics,
              // the channel's scale and bias as one value each).
              const int64_t c = p % channels;
              layer_norm_rows_f32(src, out + p * plane, 1, plane, s + c, 0, b + c, 0, eps, nullptr,
                                  nullptr);
              continue;
            }
            const double mean = row_sum(src, plane) / static_cast<double>(plane);
            const double var = row_squared_deviation(src, plane, mean) / static_cast<double>(plane);
            const int64_t c = p % channels;
            normalize_row(src, out + p * plane, plane, static_cast<T>(mean),
                          static_cast<T>(1.0 / std::sqrt(var + eps)), s + c, 0, b + c, 0);
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("InstanceNormalization", x->dtype);
      }
    });
  }

 private:
  float epsilon_;
};

Expected<std::unique_ptr<Kernel>> instance_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 3));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  return std::unique_ptr<Kernel>(std::make_unique<InstanceNormKernel>(epsilon));
}

// ---- LRN: each element divided by (bias + alpha / size * the sum of squares over a window of
// `size` channels around it) ^ beta; the window is [c - floor((size - 1) / 2),
// c + ceil((size - 1) / 2)] clipped to the channels.

class LrnKernel final : public Kernel {
 public:
  LrnKernel(float alpha, float beta, float bias, int64_t size)
      : alpha_(alpha), beta_(beta), bias_(bias), size_(size) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("LRN: input is missing");
    const int rank = x->shape.rank();
    if (rank < 2) {
      return invalid_argument("LRN: X of shape " + x->shape.to_string() +
                              " has no channel dim (needs [N, C, ...])");
    }
    const int64_t channels = x->shape[1];
    const int64_t planes = x->shape[0] * channels;
    const int64_t plane = dims_product(x->shape, 2, rank);
    return visit_dtype("LRN", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const int64_t before = (size_ - 1) / 2, after = size_ / 2;  // floor and ceil of (size-1)/2
        const double scale = static_cast<double>(alpha_) / static_cast<double>(size_);
        const double beta = beta_, bias = bias_;
        const int64_t work = plane * std::min<int64_t>(size_, channels);
        const int64_t grain =
            std::max<int64_t>(1, kTranscendentalGrain / std::max<int64_t>(1, work));
        ctx.pool().parallel_for(planes, grain, [&](int64_t begin, int64_t end) {
          for (int64_t p = begin; p < end; ++p) {
            const int64_t c = p % channels;
            const int64_t first = std::max<int64_t>(0, c - before);
            const int64_t last = std::min<int64_t>(channels - 1, c + after);
            const T* src = in + p * plane;
            T* dst = out + p * plane;
            for (int64_t i = 0; i < plane; ++i) {
              double sum = 0;
              for (int64_t k = first; k <= last; ++k) {
                const double v = in[(p - c + k) * plane + i];
                sum += v * v;
              }
              dst[i] = static_cast<T>(src[i] / std::pow(bias + scale * sum, beta));
            }
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("LRN", x->dtype);
      }
    });
  }

 private:
  float alpha_, beta_, bias_;
  int64_t size_;
};

Expected<std::unique_ptr<Kernel>> lrn_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  if (!node.attrs.has("size")) return invalid_model("LRN: attribute 'size' is missing");
  SOD2_ASSIGN_OR_RETURN(int64_t size, node.attrs.get_int("size", 1));
  if (size < 1) return invalid_model("LRN: size must be positive, got " + std::to_string(size));
  SOD2_ASSIGN_OR_RETURN(float alpha, node.attrs.get_float("alpha", 1e-4f));
  SOD2_ASSIGN_OR_RETURN(float beta, node.attrs.get_float("beta", 0.75f));
  SOD2_ASSIGN_OR_RETURN(float bias, node.attrs.get_float("bias", 1.0f));
  return std::unique_ptr<Kernel>(std::make_unique<LrnKernel>(alpha, beta, bias, size));
}

// ---- MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) with the mean and the
// population variance over `axes` (default [0, 2, 3]), as ONNX's function body defines it.

class MvnKernel final : public Kernel {
 public:
  explicit MvnKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("MeanVarianceNormalization: input is missing");
    const int rank = x->shape.rank();
    bool reduced[kMaxRank] = {};
    for (int64_t a : axes_) {
      int axis = 0;
      SOD2_RETURN_IF_ERROR(normalize_axis("MeanVarianceNormalization", a, rank, &axis));
      reduced[axis] = true;
    }
    // Each element's group (its index among the kept dims): a sum of per-dim group strides.
    int64_t group_stride[kMaxRank] = {};
    int64_t groups = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (reduced[d]) continue;
      group_stride[d] = groups;
      groups *= x->shape[d];
    }
    return visit_dtype("MeanVarianceNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        const int64_t n = x->numel();
        if (n == 0) return Status::ok_status();
        SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(2 * sizeof(double) * groups));
        double* mean = static_cast<double*>(scratch);
        double* dev = mean + groups;
        std::fill(mean, mean + 2 * groups, 0.0);
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const double per_group = static_cast<double>(n / groups);
        for_each_group(x->shape, group_stride, [&](int64_t i, int64_t g) { mean[g] += in[i]; });
        for (int64_t g = 0; g < groups; ++g) mean[g] /= per_group;
        for_each_group(x->shape, group_stride, [&](int64_t i, int64_t g) {
          const double d = in[i] - mean[g];
          dev[g] += d * d;
        });
        // dev becomes the divisor sqrt(variance) + epsilon.
        for (int64_t g = 0; g < groups; ++g) dev[g] = std::sqrt(dev[g] / per_group) + 1e-9;
        for_each_group(x->shape, group_stride, [&](int64_t i, int64_t g) {
          out[i] = static_cast<T>((in[i] - mean[g]) / dev[g]);
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("MeanVarianceNormalization", x->dtype);
      }
    });
  }

 private:
  // Calls f(flat index, group) for every element in row-major order.
  template <class F>
  static void for_each_group(const Shape& shape, const int64_t* group_stride, const F& f) {
    const int rank = shape.rank();
    const int64_t n = shape.numel();
    int64_t idx[kMaxRank] = {};
    int64_t g = 0;
    for (int64_t i = 0; i < n; ++i) {
      f(i, g);
      for (int d = rank - 1; d >= 0; --d) {
        g += group_stride[d];
        if (++idx[d] < shape[d]) break;
        g -= group_stride[d] * shape[d];
        idx[d] = 0;
      }
    }
  }

  std::vector<int64_t> axes_;
};

Expected<std::unique_ptr<Kernel>> mvn_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> axes, node.attrs.get_ints("axes", {0, 2, 3}));
  if (axes.size() > static_cast<size_t>(kMaxRank)) {
    return invalid_model("MeanVarianceNormalization: " + std::to_string(axes.size()) +
                         " axes (at most " + std::to_string(kMaxRank) + ")");
  }
  return std::unique_ptr<Kernel>(std::make_unique<MvnKernel>(std::move(axes)));
}

// ---- LpNormalization: each vector along `axis` divided by its L1 or L2 norm. A vector whose
// norm is 0 (all zeros) stays 0, as ONNX Runtime does, instead of becoming 0/0 = NaN.

class LpNormKernel final : public Kernel {
 public:
  LpNormKernel(int64_t axis, int64_t p) : axis_(axis), p_(p) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("LpNormalization: input is missing");
    const int rank = x->shape.rank();
    if (rank == 0) return invalid_argument("LpNormalization: the input is a scalar (no axis)");
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("LpNormalization", axis_, rank, &axis));
    const int64_t outer = dims_product(x->shape, 0, axis);
    const int64_t n = x->shape[axis];
    const int64_t inner = dims_product(x->shape, axis + 1, rank);
    return visit_dtype("LpNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
        if (x->numel() == 0) return Status::ok_status();
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n, 1));
        ctx.pool().parallel_for(outer * inner, grain, [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t) {
            const int64_t base = (t / inner) * n * inner + t % inner;
            double norm = 0;
            for (int64_t i = 0; i < n; ++i) {
              const double v = in[base + i * inner];
              norm += p_ == 1 ? std::fabs(v) : v * v;
            }
            if (p_ == 2) norm = std::sqrt(norm);
            for (int64_t i = 0; i < n; ++i) {
              const int64_t k = base + i * inner;
              out[k] = norm == 0 ? T(0) : static_cast<T>(in[k] / norm);
            }
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("LpNormalization", x->dtype);
      }
    });
  }

 private:
  int64_t axis_;
  int64_t p_;
};

Expected<std::unique_ptr<Kernel>> lp_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  SOD2_ASSIGN_OR_RETURN(int64_t p, node.attrs.get_int("p", 2));
  if (p != 1 && p != 2)
    return invalid_model("LpNormalization: p must be 1 or 2, got " + std::to_string(p));
  return std::unique_ptr<Kernel>(std::make_unique<LpNormKernel>(axis, p));
}

}  // namespace

void register_normalization(KernelRegistry& r) {
  r.add("", "LpNormalization", 1, &lp_norm_factory);
  r.add("", "LayerNormalization", 17, &layer_norm_factory);
  r.add("", "BatchNormalization", 1, &batch_norm_factory);
  r.add("", "InstanceNormalization", 1, &instance_norm_factory);
  r.add("", "LRN", 1, &lrn_factory);
  r.add("", "MeanVarianceNormalization", 9, &mvn_factory);
}

}  // namespace sod2::rt::math
