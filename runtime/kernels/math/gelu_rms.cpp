// Activations and normalisations of opsets 18-23: Gelu (20; approximate "none" or "tanh"), Mish
// (18), GroupNormalization (18: scale and bias per group; 21: per channel) and RMSNormalization
// (23). float and double; the statistics are computed in double.
#include <cmath>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

template <class T>
Status visit_float(const char* op, DType t, T&& f) {
  switch (t) {
    case DType::kFloat: return f(Tag<float>{});
    case DType::kDouble: return f(Tag<double>{});
    default: return unsupported_dtype(op, t);
  }
}

// True when a dim is 0: the tensor is empty, and its other dims may be huge (their product,
// taken before the zero, need not fit in int64).
bool has_zero_dim(const Shape& s) {
  for (int64_t d : s.dims())
    if (d == 0) return true;
  return false;
}

// ---- Gelu and Mish: elementwise.

enum class Act { kGeluErf, kGeluTanh, kMish };

template <class T>
T activate(Act a, T x) {
  switch (a) {
    case Act::kGeluErf: return T(0.5) * x * (T(1) + std::erf(x * T(M_SQRT1_2)));
    case Act::kGeluTanh: {
      const T k = T(0.7978845608028654);  // sqrt(2 / pi)
      return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
    }
    case Act::kMish: {
      // softplus(x) = log(1 + exp(x)); above 20 it equals x to float precision.
      const T sp = x > T(20) ? x : std::log1p(std::exp(x));
      return x * std::tanh(sp);
    }
  }
  return x;
}

class ActivationKernel final : public Kernel {
 public:
  ActivationKernel(Act act, const char* op) : act_(act), op_(op) {}
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op_) + ": missing input X");
    return visit_float(op_, x->dtype, [&]<class T>(Tag<T>) -> Status {
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
      const T* in = x->as<T>();
      T* out = y->as<T>();
      const Act act = act_;
      ctx.pool().parallel_for(x->numel(), kTranscendentalGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = activate(act, in[i]);
      });
      return Status::ok_status();
    });
  }

 private:
  Act act_;
  const char* op_;
};

Expected<std::unique_ptr<Kernel>> gelu_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  std::string approx;
  SOD2_RETURN_IF_ERROR(get_string_attr(node, "approximate", "none", &approx));
  if (approx != "none" && approx != "tanh")
    return invalid_model("Gelu: approximate must be 'none' or 'tanh', not '" + approx + "'");
  return std::unique_ptr<Kernel>(std::make_unique<ActivationKernel>(
      approx == "tanh" ? Act::kGeluTanh : Act::kGeluErf, "Gelu"));
}

Expected<std::unique_ptr<Kernel>> mish_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  return std::unique_ptr<Kernel>(std::make_unique<ActivationKernel>(Act::kMish, "Mish"));
}

// ---- GroupNormalization: X [N, C, D...]; each of num_groups groups of C / num_groups channels
// is normalised over its channels and spatial positions. Opset 18 scales and shifts per group
// (scale, bias [num_groups]), opset 21 per channel ([C]).

class GroupNormKernel final : public Kernel {
 public:
  GroupNormKernel(int64_t groups, float epsilon, bool per_channel)
      : groups_(groups), epsilon_(epsilon), per_channel_(per_channel) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *scale = ctx.input(1), *bias = ctx.input(2);
    if (!x || !scale || !bias)
      return invalid_argument("GroupNormalization: X, scale and bias are required");
    const Shape& s = x->shape;
    if (s.rank() < 2)
      return invalid_argument("GroupNormalization: X must be at least [N, C], got " +
                              s.to_string());
    const int64_t n = s[0], c = s[1];
    if (c % groups_ != 0)
      return invalid_argument(
          "GroupNormalization: " + std::to_string(c) +
          " channels do not split into num_groups = " + std::to_string(groups_) + " groups");
    const int64_t params = per_channel_ ? c : groups_;
    for (const Tensor* p : {scale, bias}) {
      if (p->dtype != x->dtype || p->numel() != params || p->shape.rank() != 1)
        return invalid_argument("GroupNormalization: scale and bias must be [" +
                                std::to_string(params) + "] of X's type, got " +
                                p->shape.to_string());
    }
    const int64_t per_group = c / groups_;
    return visit_float("GroupNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, s));
      // An empty X: nothing to normalise, and n * num_groups groups of nothing (both from the
      // model, C possibly 0) must not be iterated or multiplied.
      if (has_zero_dim(s)) return Status::ok_status();
      const int64_t spatial = dims_product(s, 2, s.rank());
      const T* in = x->as<T>();
      const T* sc = scale->as<T>();
      const T* bi = bias->as<T>();
      T* out = y->as<T>();
      const int64_t block = per_group * spatial;
      const double eps = epsilon_;
      const bool per_channel = per_channel_;
      ctx.pool().parallel_for(n * groups_, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t ng = lo; ng < hi; ++ng) {
          const int64_t g = ng % groups_;
          const T* src = in + ng * block;
          T* dst = out + ng * block;
          double sum = 0, sq = 0;
          for (int64_t i = 0; i < block; ++i) sum += static_cast<double>(src[i]);
          const double mean = block ? sum / static_cast<double>(block) : 0.0;
          for (int64_t i = 0; i < block; ++i) {
            const double d = static_cast<double>(src[i]) - mean;
            sq += d * d;
          }
          const double inv = 1.0 / std::sqrt((block ? sq / static_cast<double>(block) : 0.0) + eps);
          for (int64_t k = 0; k < per_group; ++k) {
            const int64_t p = per_channel ? g * per_group + k : g;
            const double a = inv * static_cast<double>(sc[p]), b = static_cast<double>(bi[p]);
            const T* srow = src + k * spatial;
            T* drow = dst + k * spatial;
            for (int64_t i = 0; i < spatial; ++i)
              drow[i] = static_cast<T>((static_cast<double>(srow[i]) - mean) * a + b);
          }
        }
      });
      return Status::ok_status();
    });
  }

 private:
  int64_t groups_;
  float epsilon_;
  bool per_channel_;
};

Expected<std::unique_ptr<Kernel>> group_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 3));
  if (!node.attrs.has("num_groups"))
    return invalid_model("GroupNormalization: attribute 'num_groups' is missing");
  SOD2_ASSIGN_OR_RETURN(int64_t groups, node.attrs.get_int("num_groups", 0));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ASSIGN_OR_RETURN(int64_t stash, node.attrs.get_int("stash_type", 1));
  if (groups <= 0)
    return invalid_model("GroupNormalization: num_groups must be positive, got " +
                         std::to_string(groups));
  if (stash != 1)
    return unsupported("GroupNormalization: stash_type " + std::to_string(stash) +
                       " (only 1, float)");
  return std::unique_ptr<Kernel>(
      std::make_unique<GroupNormKernel>(groups, epsilon, node.opset >= 21));
}

// ---- RMSNormalization (23): Y = X / sqrt(mean(X^2 over axes [axis, rank)) + epsilon) * scale,
// scale broadcast (right-aligned) onto the normalised dims.

class RmsNormKernel final : public Kernel {
 public:
  RmsNormKernel(int64_t axis, float epsilon) : axis_(axis), epsilon_(epsilon) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *scale = ctx.input(1);
    if (!x || !scale) return invalid_argument("RMSNormalization: X and scale are required");
    const Shape& s = x->shape;
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("RMSNormalization", axis_, s.rank(), &axis));
    // An empty X: its rows or cols may still be huge (cols * 8 scratch bytes wrapping around), so
    // nothing below is computed for it.
    if (has_zero_dim(s)) {
      if (scale->dtype != x->dtype)
        return invalid_argument("RMSNormalization: scale and X differ in type");
      return visit_float("RMSNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
        return ctx.output(0, x->dtype, s).status();
      });
    }
    const int64_t rows = dims_product(s, 0, axis), cols = dims_product(s, axis, s.rank());
    // The scale's offset for each normalised element: right-aligned broadcasting.
    const Shape& ss = scale->shape;
    const int norm_rank = s.rank() - axis;
    if (scale->dtype != x->dtype || ss.rank() > norm_rank)
      return invalid_argument("RMSNormalization: scale " + ss.to_string() +
                              " does not broadcast to the normalised dims of X " + s.to_string());
    int64_t sstride[kMaxRank] = {};
    int64_t stride = 1;
    for (int i = ss.rank() - 1; i >= 0; --i) {
      const int xd = axis + (norm_rank - ss.rank()) + i;
      if (ss[i] != 1 && ss[i] != s[xd])
        return invalid_argument("RMSNormalization: scale " + ss.to_string() +
                                " does not broadcast to the normalised dims of X " + s.to_string());
      sstride[xd] = ss[i] == 1 ? 0 : stride;
      stride *= ss[i];
    }
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(cols) * sizeof(int64_t)));
    auto* offset = static_cast<int64_t*>(mem);
    for (int64_t j = 0; j < cols; ++j) {
      int64_t rem = j, off = 0;
      for (int d = s.rank() - 1; d >= axis; --d) {
        off += (rem % s[d]) * sstride[d];
        rem /= s[d];
      }
      offset[j] = off;
    }
    return visit_float("RMSNormalization", x->dtype, [&]<class T>(Tag<T>) -> Status {
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, s));
      const T* in = x->as<T>();
      const T* sc = scale->as<T>();
      T* out = y->as<T>();
      const double eps = epsilon_;
      ctx.pool().parallel_for(rows, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r) {
          const T* src = in + r * cols;
          T* dst = out + r * cols;
          double sq = 0;
          for (int64_t j = 0; j < cols; ++j) sq += static_cast<double>(src[j]) * src[j];
          const double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
          for (int64_t j = 0; j < cols; ++j)
            dst[j] = static_cast<T>(static_cast<double>(src[j]) * inv * sc[offset[j]]);
        }
      });
      return Status::ok_status();
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

Expected<std::unique_ptr<Kernel>> rms_norm_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ASSIGN_OR_RETURN(int64_t stash, node.attrs.get_int("stash_type", 1));
  if (stash != 1)
    return unsupported("RMSNormalization: stash_type " + std::to_string(stash) +
                       " (only 1, float)");
  return std::unique_ptr<Kernel>(std::make_unique<RmsNormKernel>(axis, epsilon));
}

}  // namespace

void register_gelu_rms(KernelRegistry& r) {
  r.add("", "Gelu", 20, gelu_factory);
  r.add("", "Mish", 18, mish_factory);
  r.add("", "GroupNormalization", 18, group_norm_factory);
  r.add("", "GroupNormalization", 21, group_norm_factory);
  r.add("", "RMSNormalization", 23, rms_norm_factory);
}

}  // namespace sod2::rt::math
