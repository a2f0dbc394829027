#include "core/codegen/elementwise_shader.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/ops/op_support.h"
#include "runtime/program/program.h"

namespace sod2::codegen {
namespace {

// The generated ops with two or more operands (they fold left to right); which ops the
// generator takes at all is the per-op table's `fused_elementwise`.
const std::set<std::string>& binary_ops() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div",  "Pow",
                                            "Max", "Min", "Sum", "PRelu"};
  return ops;
}

// A float as GLSL that reads back the same bits.
std::string literal(float v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "uintBitsToFloat(0x%08xu)", std::bit_cast<uint32_t>(v));
  return buf;
}

// Helpers the ops call, emitted only when used.
constexpr const char* kErf = R"(float sod2_erf(float x) {
  // Abramowitz & Stegun 7.1.26: |error| <= 1.5e-7.
  float s = sign(x), a = abs(x);
  float t = 1.0 / (1.0 + 0.3275911 * a);
  float y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t +
                   0.254829592) * t * exp(-a * a);
  return s * y;
}
)";
constexpr const char* kPow = R"(float sod2_pow(float a, float b) {
  // GLSL's pow is undefined for a < 0, and for a = 0 with b <= 0; ONNX gives a real result for
  // an integral exponent, and 1 for b = 0.
  if (b == 0.0) return 1.0;
  if (b == 2.0) return a * a;
  if (b == 1.0) return a;
  if (a < 0.0 && floor(b) == b) {
    float r = pow(-a, b);
    return (int(mod(b, 2.0)) == 1) ? -r : r;
  }
  return pow(a, b);
}
)";
constexpr const char* kSigmoid = R"(float sod2_sigmoid(float x) {
  // Never exp of a large positive number.
  if (x >= 0.0) return 1.0 / (1.0 + exp(-x));
  float e = exp(x);
  return e / (1.0 + e);
}
)";
constexpr const char* kTanh = R"(float sod2_tanh(float x) {
  // tanh(x) = 1 - 2 / (exp(2x) + 1), clamped so exp cannot overflow.
  float c = clamp(x, -15.0, 15.0);
  return 1.0 - 2.0 / (exp(2.0 * c) + 1.0);
}
)";

}  // namespace

bool is_elementwise_op(const std::string& op) {
  const OpSupport* row = find_op_support(op);
  return row && row->fused_elementwise;
}

Expected<std::string> generate_elementwise_glsl(const ElementwiseShader& s) {
  const int R = s.rank;
  // Binding of each tensor input.
  std::vector<int> binding(s.literals.size(), -1);
  int K = 0;
  for (size_t i = 0; i < s.literals.size(); ++i)
    if (!s.literals[i]) binding[i] = K++;
  if (R < 0 || R > rt::kMaxGpuRank || K > rt::kMaxGpuKernelInputs ||
      rt::gpu_group_push_words(static_cast<uint32_t>(K), static_cast<uint32_t>(R)) > 32)
    return internal_error("an elementwise group beyond the push constants' room");
  if (s.program.steps.empty()) return internal_error("an elementwise group without steps");
  std::string body;
  bool need_erf = false, need_pow = false, need_sigmoid = false, need_tanh = false;
  std::string bad;
  auto operand = [&](size_t j, const rt::EwOperand& o) -> std::string {
    if (o.temp) {
      if (o.index < 0 || static_cast<size_t>(o.index) >= j) bad = "a step reads a later one";
      return "t" + std::to_string(o.index);
    }
    if (o.index < 0 || static_cast<size_t>(o.index) >= s.literals.size()) {
      bad = "an input index out of range";
      return "0.0";
    }
    const auto i = static_cast<size_t>(o.index);
    return s.literals[i] ? literal(*s.literals[i]) : "x" + std::to_string(binding[i]);
  };
  for (size_t j = 0; j < s.program.steps.size(); ++j) {
    const rt::EwStep& op = s.program.steps[j];
    if (op.args.empty()) return internal_error("an elementwise step without operands");
    const std::string t(rt::ew_op_name(op.op));
    auto in = [&](size_t i) { return operand(j, op.args[i]); };
    const std::string a = in(0);
    const std::string alpha = literal(op.alpha), beta = literal(op.beta);
    std::string e;
    if (binary_ops().count(t)) {
      // Variadic Max/Min/Sum fold left to right.
      std::string acc = a;
      for (size_t i = 1; i < op.args.size(); ++i) {
        const std::string b = in(i);
        if (t == "Add" || t == "Sum")
          acc = "(" + acc + " + " + b + ")";
        else if (t == "Sub")
          acc = "(" + acc + " - " + b + ")";
        else if (t == "Mul")
          acc = "(" + acc + " * " + b + ")";
        else if (t == "Div")
          acc = "(" + acc + " / " + b + ")";
        else if (t == "Max")
          acc = "max(" + acc + ", " + b + ")";
        else if (t == "Min")
          acc = "min(" + acc + ", " + b + ")";
        else if (t == "Pow") {
          acc = "sod2_pow(" + acc + ", " + b + ")";
          need_pow = true;
        } else if (t == "PRelu")
          acc = "(" + acc + " < 0.0 ? " + b + " * " + acc + " : " + acc + ")";
      }
      e = acc;
    } else if (t == "Relu")
      e = "max(" + a + ", 0.0)";
    else if (t == "Sigmoid") {
      e = "sod2_sigmoid(" + a + ")";
      need_sigmoid = true;
    } else if (t == "Tanh") {
      e = "sod2_tanh(" + a + ")";
      need_tanh = true;
    } else if (t == "Exp")
      e = "exp(" + a + ")";
    else if (t == "Log")
      e = "log(" + a + ")";
    else if (t == "Sqrt")
      e = "sqrt(" + a + ")";
    else if (t == "Abs")
      e = "abs(" + a + ")";
    else if (t == "Neg")
      e = "(-" + a + ")";
    else if (t == "Reciprocal")
      e = "(1.0 / " + a + ")";
    else if (t == "Floor")
      e = "floor(" + a + ")";
    else if (t == "Ceil")
      e = "ceil(" + a + ")";
    else if (t == "Round")
      e = "roundEven(" + a + ")";
    else if (t == "Erf") {
      e = "sod2_erf(" + a + ")";
      need_erf = true;
    } else if (t == "Softplus")
      e = "(max(" + a + ", 0.0) + log(1.0 + exp(-abs(" + a + "))))";
    else if (t == "Softsign")
      e = "(" + a + " / (1.0 + abs(" + a + ")))";
    else if (t == "Sin")
      e = "sin(" + a + ")";
    else if (t == "Cos")
      e = "cos(" + a + ")";
    else if (t == "Identity")
      e = a;
    else if (t == "LeakyRelu")
      e = "(" + a + " < 0.0 ? " + alpha + " * " + a + " : " + a + ")";
    else if (t == "Elu")
      e = "(" + a + " < 0.0 ? " + alpha + " * (exp(" + a + ") - 1.0) : " + a + ")";
    else if (t == "Selu")
      e = "(" + beta + " * (" + a + " <= 0.0 ? " + alpha + " * (exp(" + a + ") - 1.0) : " + a +
          "))";
    else if (t == "HardSigmoid")
      e = "clamp(" + alpha + " * " + a + " + " + beta + ", 0.0, 1.0)";
    else if (t == "HardSwish")
      e = "(" + a + " * clamp(" + a + " / 6.0 + 0.5, 0.0, 1.0))";
    else if (t == "Clip") {
      // An infinite bound clips nothing (and has no GLSL literal).
      e = a;
      if (std::isfinite(op.alpha)) e = "max(" + e + ", " + alpha + ")";
      if (std::isfinite(op.beta)) e = "min(" + e + ", " + beta + ")";
    } else {
      return unsupported("the shader generator does not know " + t);
    }
    if (!bad.empty()) return internal_error("an elementwise program with " + bad);
    body += "  float t" + std::to_string(j) + " = " + e + ";  // " + t + "\n";
  }
  std::string g = "#version 450\n// Generated by sod2: one fused elementwise group.\n";
  g += "layout(local_size_x = " + std::to_string(rt::kGpuGroupLocalSize) + ") in;\n";
  for (int k = 0; k < K; ++k) {
    g += "layout(std430, set = 0, binding = " + std::to_string(k) + ") readonly buffer In" +
         std::to_string(k) + " { float d[]; } in" + std::to_string(k) + ";\n";
  }
  g += "layout(std430, set = 0, binding = " + std::to_string(K) +
       ") writeonly buffer Out { float d[]; } out0;\n";
  g += "layout(push_constant) uniform Push {\n  uint n;\n  uint out_off;\n";
  for (int k = 0; k < K; ++k) g += "  uint in_off" + std::to_string(k) + ";\n";
  for (int d = 0; d < R; ++d) g += "  uint dim" + std::to_string(d) + ";\n";
  for (int k = 0; k < K; ++k)
    for (int d = 0; d < R; ++d)
      g += "  uint st" + std::to_string(k) + "_" + std::to_string(d) + ";\n";
  g += "} pc;\n";
  if (need_erf) g += kErf;
  if (need_pow) g += kPow;
  if (need_sigmoid) g += kSigmoid;
  if (need_tanh) g += kTanh;
  g += "void main() {\n";
  g += "  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * " +
       std::to_string(rt::kGpuGroupLocalSize) + "u + gl_LocalInvocationID.x;\n";
  g += "  if (i >= pc.n) return;\n";
  for (int k = 0; k < K; ++k)
    g += "  uint a" + std::to_string(k) + " = pc.in_off" + std::to_string(k) + ";\n";
  if (R > 0 && K > 0) {
    g += "  uint r = i, c;\n";
    for (int d = R - 1; d >= 0; --d) {
      const std::string ds = std::to_string(d);
      g += "  c = r % pc.dim" + ds + "; r /= pc.dim" + ds + ";";
      for (int k = 0; k < K; ++k)
        g += " a" + std::to_string(k) + " += c * pc.st" + std::to_string(k) + "_" + ds + ";";
      g += "\n";
    }
  }
  for (int k = 0; k < K; ++k) {
    g += "  float x" + std::to_string(k) + " = in" + std::to_string(k) + ".d[a" +
         std::to_string(k) + "];\n";
  }
  g += body;
  g += "  out0.d[pc.out_off + i] = t" + std::to_string(s.program.steps.size() - 1) + ";\n}\n";
  return g;
}

}  // namespace sod2::codegen
