// The generator ops: RandomUniform, RandomNormal (shape from an attribute), their *Like forms
// (shape, and by default type, of the input), Bernoulli and Multinomial. With a `seed` attribute
// a node draws numpy's legacy stream for that seed (numpy_random.h), the same values every run;
// without one each run draws fresh values, which the spec allows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/kernels/math/half_float.h"
#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/numpy_random.h"

namespace sod2::rt::math {
namespace {

enum class Distribution { kUniform, kNormal };

// The `seed` attribute (a float in the spec): its integer part's low 32 bits, numpy's range.
Expected<std::optional<uint32_t>> read_seed(const NodeInfo& node, const char* op) {
  if (!node.attrs.has("seed")) return std::optional<uint32_t>();
  SOD2_ASSIGN_OR_RETURN(float seed, node.attrs.get_float("seed", 0.f));
  if (!std::isfinite(seed) || std::fabs(seed) >= 9.2e18f)
    return invalid_model(std::string(op) + ": seed " + std::to_string(seed) +
                         " is not a finite integer in range");
  return std::optional<uint32_t>(
      static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(seed))));
}

// The output type from `dtype`, or `fallback` (kUndefined: the attribute is required).
Expected<DType> read_dtype(const NodeInfo& node, const char* op, DType fallback) {
  if (!node.attrs.has("dtype")) {
    if (fallback == DType::kUndefined)
      return invalid_model(std::string(op) + ": attribute 'dtype' is missing");
    return fallback;
  }
  SOD2_ASSIGN_OR_RETURN(int64_t t, node.attrs.get_int("dtype", 0));
  if (t < 0 || t > 255 || !is_known_dtype(static_cast<uint8_t>(t)))
    return invalid_model(std::string(op) + ": unknown dtype " + std::to_string(t));
  return static_cast<DType>(t);
}

// Calls f(Tag<T>) for the float types a generator may produce.
template <class F>
Status visit_float_output(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kFloat16:
    case DType::kBFloat16: return visit_dtype_narrow(op, t, std::forward<F>(f));
    default:
      return unsupported(std::string(op) + ": output type " + dtype_name(t) +
                         " is not supported (float16, bfloat16, float or double)");
  }
}

template <class T>
T from_double(double v) {
  if constexpr (kIsNarrowFloat<T>) {
    return narrow_from<T>(v);
  } else {
    return static_cast<T>(v);
  }
}

// RandomUniform / RandomNormal and the *Like forms.
class GeneratorKernel final : public Kernel {
 public:
  struct Config {
    const char* op = "";
    Distribution dist = Distribution::kUniform;
    double a = 0, b = 1;  // uniform: low, high; normal: mean, scale
    DType dtype = DType::kFloat;
    bool like = false;  // the shape (and, without `dtype`, the type) of input 0
    bool dtype_given = true;
    Shape shape;  // without `like`
    std::optional<uint32_t> seed;
  };
  explicit GeneratorKernel(Config c) : c_(std::move(c)), fresh_(this) {}

  Status run(KernelContext& ctx) override {
    Shape shape = c_.shape;
    DType dtype = c_.dtype;
    if (c_.like) {
      const Tensor* x = ctx.input(0);
      if (!x) return invalid_argument(std::string(c_.op) + ": input is missing");
      shape = x->shape;
      if (!c_.dtype_given) dtype = x->dtype;
    }
    return visit_float_output(c_.op, dtype, [&]<class T>(Tag<T>) -> Status {
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, dtype, shape));
      NumpyRandom gen(c_.seed ? *c_.seed : fresh_.next());
      T* out = y->as<T>();
      const int64_t n = y->numel();
      for (int64_t i = 0; i < n; ++i) {
        const double v = c_.dist == Distribution::kUniform ? c_.a + (c_.b - c_.a) * gen.uniform()
                                                           : c_.a + c_.b * gen.gauss();
        out[i] = from_double<T>(v);
      }
      return Status::ok_status();
    });
  }

 private:
  Config c_;
  FreshSeeds fresh_;
};

template <Distribution D, bool Like>
Expected<std::unique_ptr<Kernel>> generator_factory(const NodeInfo& node) {
  GeneratorKernel::Config c;
  c.op = D == Distribution::kUniform ? (Like ? "RandomUniformLike" : "RandomUniform")
                                     : (Like ? "RandomNormalLike" : "RandomNormal");
  c.dist = D;
  c.like = Like;
  if (Like) SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  if (D == Distribution::kUniform) {
    SOD2_ASSIGN_OR_RETURN(float low, node.attrs.get_float("low", 0.f));
    SOD2_ASSIGN_OR_RETURN(float high, node.attrs.get_float("high", 1.f));
    c.a = low;
    c.b = high;
  } else {
    SOD2_ASSIGN_OR_RETURN(float mean, node.attrs.get_float("mean", 0.f));
    SOD2_ASSIGN_OR_RETURN(float scale, node.attrs.get_float("scale", 1.f));
    c.a = mean;
    c.b = scale;
  }
  if (!std::isfinite(c.a) || !std::isfinite(c.b))
    return invalid_model(std::string(c.op) + ": the distribution's parameters must be finite");
  c.dtype_given = node.attrs.has("dtype");
  SOD2_ASSIGN_OR_RETURN(c.dtype, read_dtype(node, c.op, DType::kFloat));
  if (!Like) {
    if (!node.attrs.has("shape"))
      return invalid_model(std::string(c.op) + ": attribute 'shape' is missing");
    SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> dims, node.attrs.get_ints("shape", {}));
    if (dims.size() > static_cast<size_t>(kMaxRank))
      return unsupported(std::string(c.op) + ": rank " + std::to_string(dims.size()) +
                         " is above the runtime's " + std::to_string(kMaxRank));
    for (int64_t d : dims) {
      if (d < 0)
        return invalid_model(std::string(c.op) + ": shape has a negative dim " + std::to_string(d));
      c.shape.push_back(d);
    }
  }
  SOD2_ASSIGN_OR_RETURN(c.seed, read_seed(node, c.op));
  return std::unique_ptr<Kernel>(std::make_unique<GeneratorKernel>(std::move(c)));
}

// y[i] = 1 with probability x[i], else 0, in `dtype` (default: x's type).
class BernoulliKernel final : public Kernel {
 public:
  BernoulliKernel(std::optional<DType> dtype, std::optional<uint32_t> seed)
      : dtype_(dtype), seed_(seed), fresh_(this) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Bernoulli: input is missing");
    const DType out_type = dtype_ ? *dtype_ : x->dtype;
    return visit_float_output("Bernoulli", x->dtype, [&]<class P>(Tag<P>) -> Status {
      const P* p = x->as<const P>();
      const int64_t n = x->numel();
      for (int64_t i = 0; i < n; ++i) {
        double v;
        if constexpr (kIsNarrowFloat<P>) {
          v = to_float(p[i]);
        } else {
          v = static_cast<double>(p[i]);
        }
        if (!(v >= 0.0 && v <= 1.0))
          return invalid_argument("Bernoulli: probability " + std::to_string(v) + " at " +
                                  std::to_string(i) + " is outside [0, 1]");
      }
      SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, out_type, x->shape));
      NumpyRandom gen(seed_ ? *seed_ : fresh_.next());
      return visit_dtype_narrow("Bernoulli", out_type, [&]<class T>(Tag<T>) -> Status {
        T* out = y->as<T>();
        for (int64_t i = 0; i < n; ++i) {
          double v;
          if constexpr (kIsNarrowFloat<P>) {
            v = to_float(p[i]);
          } else {
            v = static_cast<double>(p[i]);
          }
          out[i] = from_double<T>(gen.bernoulli(v) ? 1.0 : 0.0);
        }
        return Status::ok_status();
      });
    });
  }

 private:
  std::optional<DType> dtype_;
  std::optional<uint32_t> seed_;
  FreshSeeds fresh_;
};

Expected<std::unique_ptr<Kernel>> bernoulli_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  std::optional<DType> dtype;
  if (node.attrs.has("dtype")) {
    SOD2_ASSIGN_OR_RETURN(DType t, read_dtype(node, "Bernoulli", DType::kUndefined));
    dtype = t;
  }
  SOD2_ASSIGN_OR_RETURN(std::optional<uint32_t> seed, read_seed(node, "Bernoulli"));
  return std::unique_ptr<Kernel>(std::make_unique<BernoulliKernel>(dtype, seed));
}

// Multinomial: x [batch, classes] holds unnormalised log-probabilities; y [batch, sample_size]
// the drawn class indices.
class MultinomialKernel final : public Kernel {
 public:
  MultinomialKernel(DType dtype, int64_t samples, std::optional<uint32_t> seed)
      : dtype_(dtype), samples_(samples), seed_(seed), fresh_(this) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Multinomial: input is missing");
    if (x->shape.rank() != 2)
      return invalid_argument("Multinomial: input must be [batch, classes], got " +
                              x->shape.to_string());
    const int64_t batch = x->shape[0], classes = x->shape[1];
    if (classes == 0 && batch > 0 && samples_ > 0)
      return invalid_argument("Multinomial: there are no classes to draw from");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, dtype_, Shape{batch, samples_}));
    if (batch == 0 || samples_ == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(classes) * sizeof(double)));
    double* cdf = static_cast<double*>(mem);
    NumpyRandom gen(seed_ ? *seed_ : fresh_.next());
    return visit_float_output("Multinomial", x->dtype, [&]<class P>(Tag<P>) -> Status {
      const P* logits = x->as<const P>();
      for (int64_t b = 0; b < batch; ++b) {
        const P* row = logits + b * classes;
        auto at = [&](int64_t c) -> double {
          if constexpr (kIsNarrowFloat<P>) {
            return to_float(row[c]);
          } else {
            return static_cast<double>(row[c]);
          }
        };
        double max = -INFINITY;
        for (int64_t c = 0; c < classes; ++c) max = std::max(max, at(c));
        if (!std::isfinite(max))
          return invalid_argument("Multinomial: row " + std::to_string(b) +
                                  " has no finite log-probability");
        double total = 0;
        for (int64_t c = 0; c < classes; ++c) {
          const double v = at(c);
          if (std::isnan(v))
            return invalid_argument("Multinomial: row " + std::to_string(b) + " holds NaN");
          total += std::exp(v - max);
          cdf[c] = total;
        }
        for (int64_t s = 0; s < samples_; ++s) {
          const double u = gen.uniform() * total;
          const int64_t k =
              std::min<int64_t>(classes - 1, std::upper_bound(cdf, cdf + classes, u) - cdf);
          if (dtype_ == DType::kInt32) {
            y->as<int32_t>()[b * samples_ + s] = static_cast<int32_t>(k);
          } else {
            y->as<int64_t>()[b * samples_ + s] = k;
          }
        }
      }
      return Status::ok_status();
    });
  }

 private:
  DType dtype_;
  int64_t samples_;
  std::optional<uint32_t> seed_;
  FreshSeeds fresh_;
};

Expected<std::unique_ptr<Kernel>> multinomial_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(DType dtype, read_dtype(node, "Multinomial", DType::kInt32));
  if (dtype != DType::kInt32 && dtype != DType::kInt64)
    return invalid_model(std::string("Multinomial: dtype must be int32 or int64, got ") +
                         dtype_name(dtype));
  SOD2_ASSIGN_OR_RETURN(int64_t samples, node.attrs.get_int("sample_size", 1));
  if (samples < 0)
    return invalid_model("Multinomial: sample_size " + std::to_string(samples) + " is negative");
  SOD2_ASSIGN_OR_RETURN(std::optional<uint32_t> seed, read_seed(node, "Multinomial"));
  return std::unique_ptr<Kernel>(std::make_unique<MultinomialKernel>(dtype, samples, seed));
}

}  // namespace

void register_random(KernelRegistry& r) {
  r.add("", "RandomUniform", 1, &generator_factory<Distribution::kUniform, false>);
  r.add("", "RandomNormal", 1, &generator_factory<Distribution::kNormal, false>);
  r.add("", "RandomUniformLike", 1, &generator_factory<Distribution::kUniform, true>);
  r.add("", "RandomNormalLike", 1, &generator_factory<Distribution::kNormal, true>);
  r.add("", "Bernoulli", 15, &bernoulli_factory);
  r.add("", "Multinomial", 7, &multinomial_factory);
}

}  // namespace sod2::rt::math
