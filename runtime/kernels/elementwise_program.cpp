#include "runtime/kernels/elementwise_program.h"

#include <array>
#include <cmath>
#include <limits>
#include <string>

namespace sod2::rt {
namespace {

constexpr std::array<std::string_view, kNumEwOps> kNames = {
    "Abs",        "Add",  "Ceil",  "Clip",        "Cos",       "Div",      "Elu",
    "Erf",        "Exp",  "Floor", "HardSigmoid", "HardSwish", "Identity", "LeakyRelu",
    "Log",        "Max",  "Min",   "Mul",         "Neg",       "PRelu",    "Pow",
    "Reciprocal", "Relu", "Round", "Selu",        "Sigmoid",   "Sin",      "Softplus",
    "Softsign",   "Sqrt", "Sub",   "Sum",         "Tanh"};

std::string step_text(size_t j, EwOp op) {
  return "step " + std::to_string(j) + " (" + std::string(kNames[static_cast<size_t>(op)]) + ")";
}

}  // namespace

EwArity ew_op_arity(EwOp op) {
  switch (op) {
    case EwOp::kAdd:
    case EwOp::kSub:
    case EwOp::kMul:
    case EwOp::kDiv:
    case EwOp::kPow:
    case EwOp::kPRelu: return {2, 2};
    case EwOp::kMax:
    case EwOp::kMin:
    case EwOp::kSum: return {1, 64};
    default: return {1, 1};
  }
}

std::string_view ew_op_name(EwOp op) { return kNames[static_cast<size_t>(op)]; }

std::optional<EwOp> ew_op_from_name(std::string_view op_type) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == op_type) return static_cast<EwOp>(i);
  return std::nullopt;
}

Expected<EwStep> elementwise_step(std::string_view op_type, int opset, std::vector<EwOperand> args,
                                  const std::function<std::optional<float>(const char*)>& attr,
                                  std::optional<float> clip_lo, std::optional<float> clip_hi) {
  const std::optional<EwOp> op = ew_op_from_name(op_type);
  if (!op) return unsupported(std::string(op_type) + " is not evaluated in a fused group");
  // Before opset 7 the binary ops broadcast the legacy way (an axis attribute).
  if (opset < 7) return unsupported(std::string(op_type) + " at opset < 7 (legacy broadcast)");
  EwStep s;
  s.op = *op;
  auto param = [&](const char* name, float fallback) { return attr(name).value_or(fallback); };
  switch (*op) {
    case EwOp::kLeakyRelu: s.alpha = param("alpha", 0.01f); break;
    case EwOp::kElu: s.alpha = param("alpha", 1.0f); break;
    case EwOp::kSelu:
      s.alpha = param("alpha", 1.67326319217681884765625f);
      s.beta = param("gamma", 1.05070102214813232421875f);
      break;
    case EwOp::kHardSigmoid:
      s.alpha = param("alpha", 0.2f);
      s.beta = param("beta", 0.5f);
      break;
    case EwOp::kClip: {
      // As Clip's own kernel: an absent attribute is the largest float, an absent input clips
      // nothing (infinities included).
      constexpr float kInf = std::numeric_limits<float>::infinity();
      constexpr float kMax = std::numeric_limits<float>::max();
      if (opset < 11) {
        s.alpha = param("min", -kMax);
        s.beta = param("max", kMax);
      } else {
        s.alpha = clip_lo.value_or(-kInf);
        s.beta = clip_hi.value_or(kInf);
      }
      // Its bounds are parameters now: only x stays an operand.
      if (args.size() > 1) args.resize(1);
      break;
    }
    default: break;
  }
  const EwArity a = ew_op_arity(*op);
  if (args.size() < a.lo || args.size() > a.hi)
    return unsupported(std::string(op_type) + " with " + std::to_string(args.size()) + " operands");
  s.args = std::move(args);
  return s;
}

Attrs to_attrs(const ElementwiseProgram& program) {
  AttrValue steps, arity, args, alpha, beta;
  steps.kind = AttrValue::Kind::kStrings;
  arity.kind = args.kind = AttrValue::Kind::kInts;
  alpha.kind = beta.kind = AttrValue::Kind::kFloats;
  for (const EwStep& s : program.steps) {
    steps.strings.emplace_back(ew_op_name(s.op));
    arity.ints.push_back(static_cast<int64_t>(s.args.size()));
    for (const EwOperand& o : s.args) args.ints.push_back(o.temp ? -1 - o.index : o.index);
    alpha.floats.push_back(s.alpha);
    beta.floats.push_back(s.beta);
  }
  Attrs a;
  a.set("steps", std::move(steps));
  a.set("arity", std::move(arity));
  a.set("args", std::move(args));
  a.set("alpha", std::move(alpha));
  a.set("beta", std::move(beta));
  if (program.quantize) {
    AttrValue scale, zero_point, type;
    scale.kind = AttrValue::Kind::kFloat;
    scale.f = program.quantize->scale;
    zero_point.kind = AttrValue::Kind::kInt;
    zero_point.i = program.quantize->zero_point;
    type.kind = AttrValue::Kind::kString;
    type.s = dtype_name(program.quantize->type);
    a.set("quantize_scale", std::move(scale));
    a.set("quantize_zero_point", std::move(zero_point));
    a.set("quantize_type", std::move(type));
  }
  return a;
}

Expected<ElementwiseProgram> elementwise_program_from(const Attrs& attrs, size_t num_inputs) {
  const AttrValue* steps = attrs.find("steps");
  if (!steps || steps->kind != AttrValue::Kind::kStrings)
    return invalid_model("FusedElementwise: no 'steps' (a list of op names)");
  const size_t n = steps->strings.size();
  if (n == 0 || n > kMaxEwSteps)
    return invalid_model("FusedElementwise: " + std::to_string(n) + " steps (1 to " +
                         std::to_string(kMaxEwSteps) + " allowed)");
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> arity, attrs.get_ints("arity"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> args, attrs.get_ints("args"));
  SOD2_ASSIGN_OR_RETURN(std::vector<float> alpha, attrs.get_floats("alpha"));
  SOD2_ASSIGN_OR_RETURN(std::vector<float> beta, attrs.get_floats("beta"));
  if (arity.size() != n || alpha.size() != n || beta.size() != n)
    return invalid_model("FusedElementwise: 'arity', 'alpha' and 'beta' need one entry per step (" +
                         std::to_string(n) + ")");
  ElementwiseProgram p;
  size_t at = 0;
  for (size_t j = 0; j < n; ++j) {
    const std::optional<EwOp> op = ew_op_from_name(steps->strings[j]);
    if (!op)
      return invalid_model("FusedElementwise: step " + std::to_string(j) + " is '" +
                           steps->strings[j] + "', not an op a fused group evaluates");
    EwStep s;
    s.op = *op;
    s.alpha = alpha[j];
    s.beta = beta[j];
    const EwArity a = ew_op_arity(*op);
    const int64_t k = arity[j];
    if (k < static_cast<int64_t>(a.lo) || k > static_cast<int64_t>(a.hi) ||
        static_cast<size_t>(k) > args.size() - at)
      return invalid_model("FusedElementwise: " + step_text(j, *op) + " has " + std::to_string(k) +
                           " operands");
    for (int64_t i = 0; i < k; ++i) {
      const int64_t v = args[at++];
      EwOperand o;
      if (v >= 0) {
        if (static_cast<uint64_t>(v) >= num_inputs)
          return invalid_model("FusedElementwise: " + step_text(j, *op) + " reads input " +
                               std::to_string(v) + " of " + std::to_string(num_inputs));
        o.index = static_cast<int32_t>(v);
      } else {
        const int64_t t = -1 - v;
        if (t >= static_cast<int64_t>(j))
          return invalid_model("FusedElementwise: " + step_text(j, *op) +
                               " reads the result of step " + std::to_string(t) +
                               ", which is not an earlier step");
        o.temp = true;
        o.index = static_cast<int32_t>(t);
      }
      s.args.push_back(o);
    }
    p.steps.push_back(std::move(s));
  }
  if (at != args.size())
    return invalid_model("FusedElementwise: 'args' has " + std::to_string(args.size() - at) +
                         " operands more than the steps take");
  if (attrs.has("quantize_scale") || attrs.has("quantize_zero_point") ||
      attrs.has("quantize_type")) {
    SOD2_ASSIGN_OR_RETURN(const float scale, attrs.get_float("quantize_scale", -1.f));
    SOD2_ASSIGN_OR_RETURN(const int64_t zero_point, attrs.get_int("quantize_zero_point", 0));
    SOD2_ASSIGN_OR_RETURN(const std::string type, attrs.get_string("quantize_type", ""));
    EwQuantize q;
    q.type = type == dtype_name(DType::kInt8) ? DType::kInt8 : DType::kUint8;
    const int64_t lo = q.type == DType::kInt8 ? -128 : 0, hi = q.type == DType::kInt8 ? 127 : 255;
    if (type != dtype_name(DType::kInt8) && type != dtype_name(DType::kUint8))
      return invalid_model("FusedElementwise: quantize_type '" + type + "' is not uint8 or int8");
    if (!(scale > 0.f) || !std::isfinite(scale))
      return invalid_model("FusedElementwise: quantize_scale " + std::to_string(scale) +
                           " is not a positive finite float");
    if (zero_point < lo || zero_point > hi)
      return invalid_model("FusedElementwise: quantize_zero_point " + std::to_string(zero_point) +
                           " is outside " + type);
    q.scale = scale;
    q.zero_point = static_cast<int32_t>(zero_point);
    p.quantize = q;
  }
  return p;
}

}  // namespace sod2::rt
