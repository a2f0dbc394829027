// The ai.onnx.preview.training optimizers (domain opset 1): one update step of Adagrad, Adam and
// Momentum (standard or Nesterov) for several tensors at once.
//
// Inputs are R (learning rate, a float or double scalar), T (update count, an int64 scalar) and
// then, for n optimised tensors, n X's, n G's (gradients) and n of each state (Adagrad: H;
// Momentum: V; Adam: V then H). Outputs follow the same grouping: n new X's, then n of each new
// state. Each tensor and its gradient and states must share shape and element type; the
// arithmetic is done in double. Missing required attributes (Momentum's) and unknown modes are
// errors when the model loads; shape or type mismatches when it runs.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Optimizer { kAdagrad, kAdam, kMomentum };

const char* optimizer_name(Optimizer o) {
  switch (o) {
    case Optimizer::kAdagrad: return "Adagrad";
    case Optimizer::kAdam: return "Adam";
    case Optimizer::kMomentum: return "Momentum";
  }
  return "Optimizer?";
}

// Per tensor: X and G, then 1 state (Adagrad: H; Momentum: V) or 2 (Adam: V, H).
constexpr int states_of(Optimizer o) { return o == Optimizer::kAdam ? 2 : 1; }

struct OptimizerConfig {
  double alpha = 0, beta = 0, epsilon = 0, norm_coefficient = 0, norm_coefficient_post = 0;
  double decay_factor = 0;
  bool nesterov = false;
};

// The per-run scalars the update uses, from R, T and the attributes.
struct StepScalars {
  double rate = 0;        // the learning rate, adjusted (Adagrad's decay, Adam's bias correction)
  double grad_scale = 1;  // Momentum's coefficient of the gradient (beta, 1 at the first step)
};

template <Optimizer O>
struct Update;

template <>
struct Update<Optimizer::kAdagrad> {
  // s0 = H.
  static void apply(const OptimizerConfig& c, const StepScalars& k, double x, double g, double* s,
                    double* x_new, double* s_new) {
    const double gr = c.norm_coefficient * x + g;
    const double h = s[0] + gr * gr;
    *x_new = x - k.rate * gr / (std::sqrt(h) + c.epsilon);
    s_new[0] = h;
  }
};

template <>
struct Update<Optimizer::kAdam> {
  // s0 = V (first moment), s1 = H (second moment).
  static void apply(const OptimizerConfig& c, const StepScalars& k, double x, double g, double* s,
                    double* x_new, double* s_new) {
    const double gr = c.norm_coefficient * x + g;
    const double v = c.alpha * s[0] + (1 - c.alpha) * gr;
    const double h = c.beta * s[1] + (1 - c.beta) * gr * gr;
    const double moved = x - k.rate * (v / (std::sqrt(h) + c.epsilon));
    *x_new = (1 - c.norm_coefficient_post) * moved;
    s_new[0] = v;
    s_new[1] = h;
  }
};

template <>
struct Update<Optimizer::kMomentum> {
  // s0 = V.
  static void apply(const OptimizerConfig& c, const StepScalars& k, double x, double g, double* s,
                    double* x_new, double* s_new) {
    const double gr = c.norm_coefficient * x + g;
    const double v = c.alpha * s[0] + k.grad_scale * gr;
    *x_new = c.nesterov ? x - k.rate * (gr + c.alpha * v) : x - k.rate * v;
    s_new[0] = v;
  }
};

template <Optimizer O>
class OptimizerKernel final : public Kernel {
  static constexpr int kStates = states_of(O);

 public:
  OptimizerKernel(OptimizerConfig cfg, int64_t tensors, size_t num_outputs)
      : cfg_(cfg), tensors_(tensors), num_outputs_(num_outputs) {}

  Status run(KernelContext& ctx) override {
    const char* name = optimizer_name(O);
    double rate = 0;
    int64_t step = 0;
    SOD2_RETURN_IF_ERROR(read_rate(name, ctx.input(0), &rate));
    SOD2_RETURN_IF_ERROR(read_scalar_int(name, "T", ctx.input(1), &step));
    StepScalars k;
    k.rate = rate;
    if constexpr (O == Optimizer::kAdagrad) {
      k.rate = rate / (1 + static_cast<double>(step) * cfg_.decay_factor);
    } else if constexpr (O == Optimizer::kAdam) {
      // Bias correction of both moments from the first update on (T > 0).
      if (step > 0) {
        const double t = static_cast<double>(step);
        k.rate = rate * std::sqrt(1 - std::pow(cfg_.beta, t)) / (1 - std::pow(cfg_.alpha, t));
      }
    } else {
      k.grad_scale = step > 0 ? cfg_.beta : 1.0;
    }
    for (int64_t i = 0; i < tensors_; ++i) SOD2_RETURN_IF_ERROR(update_tensor(ctx, name, i, k));
    return Status::ok_status();
  }

 private:
  static Status read_rate(const char* name, const Tensor* r, double* out) {
    if (!r) return invalid_argument(std::string(name) + ": input 'R' is missing");
    if (r->numel() != 1) {
      return invalid_argument(std::string(name) + ": 'R' should hold one value, not " +
                              r->shape.to_string());
    }
    if (r->dtype == DType::kFloat) {
      *out = *r->as<const float>();
    } else if (r->dtype == DType::kDouble) {
      *out = *r->as<const double>();
    } else {
      return unsupported(std::string(name) + ": 'R' of type " + dtype_name(r->dtype) +
                         " is not supported (float or double)");
    }
    return Status::ok_status();
  }

  // Tensor i: its X, G and states, each checked against X.
  Status update_tensor(KernelContext& ctx, const char* name, int64_t i, const StepScalars& k) {
    constexpr int kInputs = 2 + kStates;  // X, G, states
    const Tensor* in[kInputs];
    // Input names, as the spec calls them.
    const char* const roles[] = {"X", "G", O == Optimizer::kAdagrad ? "H" : "V", "H"};
    for (int j = 0; j < kInputs; ++j) {
      in[j] = ctx.input(static_cast<size_t>(2 + j * tensors_ + i));
      if (!in[j]) {
        return invalid_argument(std::string(name) + ": input " + roles[j] + " of tensor " +
                                std::to_string(i) + " is missing");
      }
      if (j > 0 && (in[j]->shape != in[0]->shape || in[j]->dtype != in[0]->dtype)) {
        return invalid_argument(std::string(name) + ": " + roles[j] + " of tensor " +
                                std::to_string(i) + " is " + dtype_name(in[j]->dtype) + " " +
                                in[j]->shape.to_string() + " but X is " + dtype_name(in[0]->dtype) +
                                " " + in[0]->shape.to_string());
      }
    }
    const Tensor& x = *in[0];
    return visit_dtype(name, x.dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        // Outputs: X_new then the new states; the ones the model does not ask for go to scratch.
        T* out[1 + kStates];
        for (int j = 0; j <= kStates; ++j) {
          const size_t index = static_cast<size_t>(j * tensors_ + i);
          if (index < num_outputs_) {
            SOD2_ASSIGN_OR_RETURN(Tensor * t, ctx.output(index, x.dtype, x.shape));
            out[j] = t->as<T>();
          } else {
            SOD2_ASSIGN_OR_RETURN(void* s, ctx.scratch(static_cast<size_t>(x.numel()) * sizeof(T)));
            out[j] = static_cast<T*>(s);
          }
        }
        const T* src[kInputs];
        for (int j = 0; j < kInputs; ++j) src[j] = in[j]->template as<const T>();
        const OptimizerConfig& cfg = cfg_;
        ctx.pool().parallel_for(x.numel(), kTranscendentalGrain, [&](int64_t b, int64_t e) {
          for (int64_t p = b; p < e; ++p) {
            double s[kStates], x_new = 0, s_new[kStates];
            for (int j = 0; j < kStates; ++j) s[j] = static_cast<double>(src[2 + j][p]);
            Update<O>::apply(cfg, k, static_cast<double>(src[0][p]), static_cast<double>(src[1][p]),
                             s, &x_new, s_new);
            out[0][p] = static_cast<T>(x_new);
            for (int j = 0; j < kStates; ++j) out[1 + j][p] = static_cast<T>(s_new[j]);
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype(name, x.dtype);
      }
    });
  }

  OptimizerConfig cfg_;
  int64_t tensors_;
  size_t num_outputs_;
};

// A float attribute as double: `fallback` when absent, or an error when the spec requires it
// (required = true).
Status float_attr(const NodeInfo& node, const char* op, const char* attr, bool required,
                  double fallback, double* out) {
  if (!node.attrs.has(attr)) {
    if (required) {
      return invalid_model(std::string(op) + ": the required attribute '" + attr + "' is missing");
    }
    *out = fallback;
    return Status::ok_status();
  }
  SOD2_ASSIGN_OR_RETURN(float v, node.attrs.get_float(attr, 0.0f));
  *out = v;
  return Status::ok_status();
}

template <Optimizer O>
Expected<std::unique_ptr<Kernel>> optimizer_factory(const NodeInfo& node) {
  const char* name = optimizer_name(O);
  constexpr int64_t kPerTensor = 2 + states_of(O);
  const auto inputs = static_cast<int64_t>(node.input_present.size());
  if (inputs < 2 + kPerTensor || (inputs - 2) % kPerTensor != 0) {
    return invalid_model(std::string(name) + ": " + std::to_string(inputs) +
                         " inputs; expected R, T and " + std::to_string(kPerTensor) +
                         " inputs per optimised tensor");
  }
  const int64_t tensors = (inputs - 2) / kPerTensor;
  const auto max_outputs = static_cast<size_t>(tensors * (1 + states_of(O)));
  if (node.num_outputs > max_outputs) {
    return invalid_model(std::string(name) + ": " + std::to_string(node.num_outputs) +
                         " outputs for " + std::to_string(tensors) + " tensors, at most " +
                         std::to_string(max_outputs));
  }
  OptimizerConfig cfg;
  if constexpr (O == Optimizer::kAdagrad) {
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "decay_factor", false, 0.0, &cfg.decay_factor));
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "epsilon", false, 1e-6, &cfg.epsilon));
    SOD2_RETURN_IF_ERROR(
        float_attr(node, name, "norm_coefficient", false, 0.0, &cfg.norm_coefficient));
  } else if constexpr (O == Optimizer::kAdam) {
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "alpha", false, 0.9, &cfg.alpha));
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "beta", false, 0.999, &cfg.beta));
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "epsilon", false, 1e-6, &cfg.epsilon));
    SOD2_RETURN_IF_ERROR(
        float_attr(node, name, "norm_coefficient", false, 0.0, &cfg.norm_coefficient));
    SOD2_RETURN_IF_ERROR(
        float_attr(node, name, "norm_coefficient_post", false, 0.0, &cfg.norm_coefficient_post));
  } else {
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "alpha", true, 0.0, &cfg.alpha));
    SOD2_RETURN_IF_ERROR(float_attr(node, name, "beta", true, 0.0, &cfg.beta));
    SOD2_RETURN_IF_ERROR(
        float_attr(node, name, "norm_coefficient", true, 0.0, &cfg.norm_coefficient));
    if (!node.attrs.has("mode"))
      return invalid_model("Momentum: the required attribute 'mode' is missing");
    std::string mode;
    SOD2_RETURN_IF_ERROR(get_string_attr(node, "mode", "", &mode));
    if (mode != "standard" && mode != "nesterov") {
      return invalid_model("Momentum: mode '" + mode + "' is not standard or nesterov");
    }
    cfg.nesterov = mode == "nesterov";
  }
  return std::unique_ptr<Kernel>(
      std::make_unique<OptimizerKernel<O>>(cfg, tensors, node.num_outputs));
}

}  // namespace

void register_optimizers(KernelRegistry& r) {
  r.add(kTrainingDomain, "Adagrad", 1, &optimizer_factory<Optimizer::kAdagrad>);
  r.add(kTrainingDomain, "Adam", 1, &optimizer_factory<Optimizer::kAdam>);
  r.add(kTrainingDomain, "Momentum", 1, &optimizer_factory<Optimizer::kMomentum>);
}

}  // namespace sod2::rt::math
