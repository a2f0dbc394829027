// Unary elementwise ops: activations, rounding, transcendental functions, logic Not, the IsNaN /
// IsInf predicates, and Identity. Each op is a small struct; one templated kernel maps it over
// the input in parallel chunks. float16/bfloat16 inputs of the float ops are computed in float
// and rounded back (half_float.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/kernels/forward_value.h"
#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/fast_math.h"
#include "runtime/kernels/math/half_float.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

template <class T>
T tanh_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return vec_tanhf(x);
  } else {
    return std::tanh(x);
  }
}

// Ops that only exist for floating-point tensors.
#define SOD2_FLOAT_UNARY(NAME, STR, GRAIN, EXPR)   \
  struct NAME {                                    \
    static constexpr const char* kName = STR;      \
    static constexpr bool kBoolOut = false;        \
    static constexpr int64_t kGrain = GRAIN;       \
    template <class T>                             \
    static constexpr bool kSupports = kIsFloat<T>; \
    float alpha = 0, beta = 0, gamma = 0;          \
    template <class T>                             \
    T apply(T x) const {                           \
      return EXPR;                                 \
    }                                              \
  };

// float exp/tanh use the vectorisable versions; double keeps libm.
template <class T>
T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return vec_expf(x);
  } else {
    return std::exp(x);
  }
}

SOD2_FLOAT_UNARY(SigmoidOp, "Sigmoid", kTranscendentalGrain, T(1) / (T(1) + exp_of(-x)))
SOD2_FLOAT_UNARY(ErfOp, "Erf", kTranscendentalGrain, std::erf(x))
SOD2_FLOAT_UNARY(ExpOp, "Exp", kTranscendentalGrain, exp_of(x))
SOD2_FLOAT_UNARY(TanhOp, "Tanh", kTranscendentalGrain, tanh_of(x))
SOD2_FLOAT_UNARY(LogOp, "Log", kTranscendentalGrain, std::log(x))
SOD2_FLOAT_UNARY(SinOp, "Sin", kTranscendentalGrain, std::sin(x))
SOD2_FLOAT_UNARY(CosOp, "Cos", kTranscendentalGrain, std::cos(x))
SOD2_FLOAT_UNARY(TanOp, "Tan", kTranscendentalGrain, std::tan(x))
SOD2_FLOAT_UNARY(AsinOp, "Asin", kTranscendentalGrain, std::asin(x))
SOD2_FLOAT_UNARY(AcosOp, "Acos", kTranscendentalGrain, std::acos(x))
SOD2_FLOAT_UNARY(AtanOp, "Atan", kTranscendentalGrain, std::atan(x))
SOD2_FLOAT_UNARY(SinhOp, "Sinh", kTranscendentalGrain, std::sinh(x))
SOD2_FLOAT_UNARY(CoshOp, "Cosh", kTranscendentalGrain, std::cosh(x))
SOD2_FLOAT_UNARY(AsinhOp, "Asinh", kTranscendentalGrain, std::asinh(x))
SOD2_FLOAT_UNARY(AcoshOp, "Acosh", kTranscendentalGrain, std::acosh(x))
SOD2_FLOAT_UNARY(AtanhOp, "Atanh", kTranscendentalGrain, std::atanh(x))
SOD2_FLOAT_UNARY(SqrtOp, "Sqrt", kElementwiseGrain, std::sqrt(x))
SOD2_FLOAT_UNARY(ReciprocalOp, "Reciprocal", kElementwiseGrain, T(1) / x)
SOD2_FLOAT_UNARY(FloorOp, "Floor", kElementwiseGrain, std::floor(x))
SOD2_FLOAT_UNARY(CeilOp, "Ceil", kElementwiseGrain, std::ceil(x))
// Round half to even (the default rounding mode), like numpy.round.
SOD2_FLOAT_UNARY(RoundOp, "Round", kElementwiseGrain, std::nearbyint(x))
// log(1 + e^x) without overflow for large x.
SOD2_FLOAT_UNARY(SoftplusOp, "Softplus", kTranscendentalGrain,
                 std::max(x, T(0)) + std::log1p(std::exp(-std::abs(x))))
SOD2_FLOAT_UNARY(SoftsignOp, "Softsign", kElementwiseGrain, x / (T(1) + std::abs(x)))
SOD2_FLOAT_UNARY(LeakyReluOp, "LeakyRelu", kElementwiseGrain, x < 0 ? x * T(alpha) : x)
// expm1 keeps relative accuracy for x near 0.
SOD2_FLOAT_UNARY(EluOp, "Elu", kTranscendentalGrain, x < 0 ? T(alpha) * std::expm1(x) : x)
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
SOD2_FLOAT_UNARY(CeluOp, "Celu", kTranscendentalGrain,
                 x > 0 ? x : T(alpha) * std::expm1(x / T(alpha)))
SOD2_FLOAT_UNARY(ThresholdedReluOp, "ThresholdedRelu", kElementwiseGrain, x > T(alpha) ? x : T(0))
SOD2_FLOAT_UNARY(SeluOp, "Selu", kTranscendentalGrain,
                 T(gamma) * (x <= 0 ? T(alpha) * std::expm1(x) : x))
SOD2_FLOAT_UNARY(HardSigmoidOp, "HardSigmoid", kElementwiseGrain,
                 std::min(T(1), std::max(T(0), T(alpha) * x + T(beta))))
SOD2_FLOAT_UNARY(HardSwishOp, "HardSwish", kElementwiseGrain,
                 x* std::min(T(1), std::max(T(0), x / T(6) + T(0.5))))
#undef SOD2_FLOAT_UNARY

struct ReluOp {
  static constexpr const char* kName = "Relu";
  static constexpr bool kBoolOut = false;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsSignedNumeric<T>;
  template <class T>
  T apply(T x) const {
    return x > T(0) ? x : T(0);
  }
};

struct NegOp {
  static constexpr const char* kName = "Neg";
  static constexpr bool kBoolOut = false;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsSignedNumeric<T>;
  template <class T>
  T apply(T x) const {
    if constexpr (kIsInt<T>) {
      return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(x));  // MIN wraps, no UB
    } else {
      return -x;
    }
  }
};

struct AbsOp {
  static constexpr const char* kName = "Abs";
  static constexpr bool kBoolOut = false;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T x) const {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (kIsInt<T>) {
      return x < 0 ? NegOp{}.apply(x) : x;
    } else {
      return std::abs(x);
    }
  }
};

struct SignOp {
  static constexpr const char* kName = "Sign";
  static constexpr bool kBoolOut = false;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T x) const {
    if constexpr (kIsFloat<T>) {
      if (std::isnan(x)) return x;
    }
    return static_cast<T>((T(0) < x) - (x < T(0)));
  }
};

// x - bias above lambd, x + bias below -lambd, 0 between. Integers compute in double and
// saturate back into their type.
struct ShrinkOp {
  static constexpr const char* kName = "Shrink";
  static constexpr bool kBoolOut = false;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  float lambd = 0.5f, bias = 0;
  template <class T>
  T apply(T x) const {
    if constexpr (kIsFloat<T>) {
      return x < T(-lambd) ? x + T(bias) : x > T(lambd) ? x - T(bias) : T(0);
    } else {
      const double v = static_cast<double>(x);
      const double r = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0;
      constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
      constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
      if (r <= lo) return std::numeric_limits<T>::lowest();
      if (r >= hi) return std::numeric_limits<T>::max();
      return static_cast<T>(r);
    }
  }
};

struct NotOp {
  static constexpr const char* kName = "Not";
  static constexpr bool kBoolOut = true;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = std::is_same_v<T, bool>;
  template <class T>
  bool apply(T x) const {
    return !x;
  }
};

struct IsNaNOp {
  static constexpr const char* kName = "IsNaN";
  static constexpr bool kBoolOut = true;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsFloat<T>;
  template <class T>
  bool apply(T x) const {
    return x != x;
  }
};

struct IsInfOp {
  static constexpr const char* kName = "IsInf";
  static constexpr bool kBoolOut = true;
  static constexpr int64_t kGrain = kElementwiseGrain;
  template <class T>
  static constexpr bool kSupports = kIsFloat<T>;
  bool detect_negative = true, detect_positive = true;
  template <class T>
  bool apply(T x) const {
    constexpr T inf = std::numeric_limits<T>::infinity();
    return (detect_positive && x == inf) || (detect_negative && x == -inf);
  }
};

// The vectorised float loop of an op (vec_kernels.h), where it has one.
template <class Op>
inline constexpr int kFastF32 = -1;
#define SOD2_FAST_F32(OP, ID) \
  template <>                 \
  inline constexpr int kFastF32<OP> = static_cast<int>(UnaryF32::ID);
SOD2_FAST_F32(ReluOp, kRelu)
SOD2_FAST_F32(LeakyReluOp, kLeakyRelu)
SOD2_FAST_F32(SigmoidOp, kSigmoid)
SOD2_FAST_F32(HardSigmoidOp, kHardSigmoid)
SOD2_FAST_F32(HardSwishOp, kHardSwish)
SOD2_FAST_F32(TanhOp, kTanh)
SOD2_FAST_F32(ErfOp, kErf)
SOD2_FAST_F32(ExpOp, kExp)
SOD2_FAST_F32(SqrtOp, kSqrt)
SOD2_FAST_F32(ReciprocalOp, kReciprocal)
SOD2_FAST_F32(NegOp, kNeg)
SOD2_FAST_F32(AbsOp, kAbs)
SOD2_FAST_F32(FloorOp, kFloor)
SOD2_FAST_F32(CeilOp, kCeil)
SOD2_FAST_F32(RoundOp, kRound)
SOD2_FAST_F32(SoftsignOp, kSoftsign)
#undef SOD2_FAST_F32

template <class Op>
float alpha_of(const Op& op) {
  if constexpr (requires { op.alpha; }) {
    return op.alpha;
  } else {
    return 0;
  }
}
template <class Op>
float beta_of(const Op& op) {
  if constexpr (requires { op.beta; }) {
    return op.beta;
  } else {
    return 0;
  }
}

// Whether `Op` runs on element type T: its own types, and float16/bfloat16 through float.
template <class Op, class T>
inline constexpr bool kUnarySupports = [] {
  if constexpr (kIsNarrowFloat<T>) {
    return Op::template kSupports<float>;
  } else {
    return Op::template kSupports<T>;
  }
}();

template <class Op>
class UnaryKernel final : public Kernel {
 public:
  explicit UnaryKernel(Op op) : op_(op) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(Op::kName) + ": input is missing");
    return visit_dtype_narrow(Op::kName, x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNarrowFloat<T> && kUnarySupports<Op, T>) {
        using TO = std::conditional_t<Op::kBoolOut, bool, T>;
        SOD2_ASSIGN_OR_RETURN(Tensor * y,
                              ctx.output(0, Op::kBoolOut ? DType::kBool : x->dtype, x->shape));
        const Op op = op_;
        run_unary(
            ctx.pool(), x->numel(), x->as<const T>(), y->as<TO>(),
            [op](T v) -> TO {
              const auto r = op.template apply<float>(to_float(v));
              if constexpr (Op::kBoolOut) {
                return r;
              } else {
                return narrow_from<T>(r);
              }
            },
            Op::kGrain);
        return Status::ok_status();
      } else if constexpr (Op::template kSupports<T>) {
        using TO = std::conditional_t<Op::kBoolOut, bool, T>;
        SOD2_ASSIGN_OR_RETURN(Tensor * y,
                              ctx.output(0, Op::kBoolOut ? DType::kBool : x->dtype, x->shape));
        if constexpr (std::is_same_v<T, float> && kFastF32<Op> >= 0) {
          constexpr auto id = static_cast<UnaryF32>(kFastF32<Op>);
          constexpr bool kExpensive = id == UnaryF32::kSigmoid || id == UnaryF32::kTanh ||
                                      id == UnaryF32::kErf || id == UnaryF32::kExp;
          const float* in = x->as<const float>();
          float* out = y->as<float>();
          const float alpha = alpha_of(op_), beta = beta_of(op_);
          ctx.pool().parallel_for(
              x->numel(), kExpensive ? kVecTranscendentalGrain : kVecGrain,
              [&](int64_t b, int64_t e) { unary_f32(id, in + b, out + b, e - b, alpha, beta); });
          return Status::ok_status();
        }
        const Op op = op_;
        run_unary(
            ctx.pool(), x->numel(), x->as<const T>(), y->as<TO>(),
            [op](T v) { return static_cast<TO>(op.template apply<T>(v)); }, Op::kGrain);
        return Status::ok_status();
      } else {
        return unsupported_dtype(Op::kName, x->dtype);
      }
    });
  }

 private:
  Op op_;
};

template <class Op>
Expected<std::unique_ptr<Kernel>> make_unary(const NodeInfo& node, Op op) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  const DType t = node.input_dtypes[0];
  if (t != DType::kUndefined) {
    SOD2_RETURN_IF_ERROR(visit_dtype_narrow(Op::kName, t, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kUnarySupports<Op, T>) {
        return Status::ok_status();
      } else {
        return unsupported_dtype(Op::kName, t);
      }
    }));
  }
  return std::unique_ptr<Kernel>(std::make_unique<UnaryKernel<Op>>(op));
}

template <class Op>
Expected<std::unique_ptr<Kernel>> unary_factory(const NodeInfo& node) {
  return make_unary(node, Op{});
}

// Ops whose attributes land in alpha/beta/gamma, with ONNX's defaults.
template <class Op>
Expected<std::unique_ptr<Kernel>> unary_factory_attrs(const NodeInfo& node, float alpha, float beta,
                                                      float gamma) {
  Op op;
  SOD2_ASSIGN_OR_RETURN(op.alpha, node.attrs.get_float("alpha", alpha));
  SOD2_ASSIGN_OR_RETURN(op.beta, node.attrs.get_float("beta", beta));
  SOD2_ASSIGN_OR_RETURN(op.gamma, node.attrs.get_float("gamma", gamma));
  return make_unary(node, op);
}

Expected<std::unique_ptr<Kernel>> is_inf_factory(const NodeInfo& node) {
  IsInfOp op;
  SOD2_ASSIGN_OR_RETURN(int64_t neg, node.attrs.get_int("detect_negative", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t pos, node.attrs.get_int("detect_positive", 1));
  op.detect_negative = neg != 0;
  op.detect_positive = pos != 0;
  return make_unary(node, op);
}

Expected<std::unique_ptr<Kernel>> shrink_factory(const NodeInfo& node) {
  ShrinkOp op;
  SOD2_ASSIGN_OR_RETURN(op.lambd, node.attrs.get_float("lambd", 0.5f));
  SOD2_ASSIGN_OR_RETURN(op.bias, node.attrs.get_float("bias", 0.0f));
  // A NaN would reach integer outputs past the saturation checks (a NaN-to-integer conversion
  // is undefined behaviour).
  if (std::isnan(op.lambd) || std::isnan(op.bias)) {
    return invalid_model("Shrink: lambd and bias must not be NaN, got " + std::to_string(op.lambd) +
                         " and " + std::to_string(op.bias));
  }
  return make_unary(node, op);
}

// Identity copies any fixed-size type byte for byte, and passes a sequence or an empty optional
// on (sequences are immutable: shared, not copied).
class IdentityKernel final : public Kernel {
 public:
  bool takes_non_tensors() const override { return true; }
  bool takes_strings() const override { return true; }
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Identity: input is missing");
    if (x->is_tensor() && dtype_size(x->dtype) == 0 && x->dtype != DType::kString)
      return unsupported_dtype("Identity", x->dtype);
    return forward_value(ctx, 0, *x);
  }
};

Expected<std::unique_ptr<Kernel>> identity_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  const DType t = node.input_dtypes[0];
  if (t != DType::kUndefined && t != DType::kString && dtype_size(t) == 0)
    return unsupported_dtype("Identity", t);
  return std::unique_ptr<Kernel>(std::make_unique<IdentityKernel>());
}

}  // namespace

void register_unary(KernelRegistry& r) {
  r.add("", "Relu", 1, &unary_factory<ReluOp>);
  r.add("", "LeakyRelu", 1,
        [](const NodeInfo& n) { return unary_factory_attrs<LeakyReluOp>(n, 0.01f, 0, 0); });
  r.add("", "Elu", 1, [](const NodeInfo& n) { return unary_factory_attrs<EluOp>(n, 1.0f, 0, 0); });
  r.add("", "Selu", 1, [](const NodeInfo& n) {
    return unary_factory_attrs<SeluOp>(n, 1.67326319217681884765625f, 0,
                                       1.05070102214813232421875f);
  });
  r.add("", "Sigmoid", 1, &unary_factory<SigmoidOp>);
  r.add("", "HardSigmoid", 1,
        [](const NodeInfo& n) { return unary_factory_attrs<HardSigmoidOp>(n, 0.2f, 0.5f, 0); });
  r.add("", "HardSwish", 14, &unary_factory<HardSwishOp>);
  r.add("", "Tanh", 1, &unary_factory<TanhOp>);
  r.add("", "Erf", 9, &unary_factory<ErfOp>);
  r.add("", "Exp", 1, &unary_factory<ExpOp>);
  r.add("", "Log", 1, &unary_factory<LogOp>);
  r.add("", "Sqrt", 1, &unary_factory<SqrtOp>);
  r.add("", "Reciprocal", 1, &unary_factory<ReciprocalOp>);
  r.add("", "Neg", 1, &unary_factory<NegOp>);
  r.add("", "Abs", 1, &unary_factory<AbsOp>);
  r.add("", "Floor", 1, &unary_factory<FloorOp>);
  r.add("", "Ceil", 1, &unary_factory<CeilOp>);
  r.add("", "Round", 11, &unary_factory<RoundOp>);
  r.add("", "Sign", 9, &unary_factory<SignOp>);
  r.add("", "Sin", 7, &unary_factory<SinOp>);
  r.add("", "Cos", 7, &unary_factory<CosOp>);
  r.add("", "Tan", 7, &unary_factory<TanOp>);
  r.add("", "Asin", 7, &unary_factory<AsinOp>);
  r.add("", "Acos", 7, &unary_factory<AcosOp>);
  r.add("", "Atan", 7, &unary_factory<AtanOp>);
  r.add("", "Sinh", 9, &unary_factory<SinhOp>);
  r.add("", "Cosh", 9, &unary_factory<CoshOp>);
  r.add("", "Asinh", 9, &unary_factory<AsinhOp>);
  r.add("", "Acosh", 9, &unary_factory<AcoshOp>);
  r.add("", "Atanh", 9, &unary_factory<AtanhOp>);
  r.add("", "Celu", 12,
        [](const NodeInfo& n) { return unary_factory_attrs<CeluOp>(n, 1.0f, 0, 0); });
  r.add("", "ThresholdedRelu", 10,
        [](const NodeInfo& n) { return unary_factory_attrs<ThresholdedReluOp>(n, 1.0f, 0, 0); });
  r.add("", "Shrink", 9, &shrink_factory);
  r.add("", "Softplus", 1, &unary_factory<SoftplusOp>);
  r.add("", "Softsign", 1, &unary_factory<SoftsignOp>);
  r.add("", "Not", 1, &unary_factory<NotOp>);
  r.add("", "IsNaN", 9, &unary_factory<IsNaNOp>);
  r.add("", "IsInf", 10, &is_inf_factory);
  r.add("", "Identity", 1, &identity_factory);
}

}  // namespace sod2::rt::math
