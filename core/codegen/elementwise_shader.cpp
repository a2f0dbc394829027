#include "core/codegen/elementwise_shader.h"

#include <bit>
#include <cstdio>
#include <set>

#include "core/ops/op_support.h"
#include "runtime/program/program.h"

namespace sod2::codegen {
namespace {

// The generated ops with two or more operands (they fold left to right); which ops the
// generator takes at all is the per-op table's `generated_shader`.
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
  return row && row->generated_shader;
}

Expected<std::string> generate_elementwise_glsl(const ElementwiseShader& s) {
  const int K = s.num_inputs, R = s.rank;
  if (R > rt::kMaxGpuRank || K > rt::kMaxGpuKernelInputs ||
      rt::gpu_group_push_words(static_cast<uint32_t>(K), static_cast<uint32_t>(R)) > 32)
    return internal_error("an elementwise group beyond the push constants' room");
  std::string body;
  bool need_erf = false, need_pow = false, need_sigmoid = false, need_tanh = false;
  auto operand = [&](const Operand& o) -> std::string {
    switch (o.kind) {
      case Operand::kInput: return "x" + std::to_string(o.index);
      case Operand::kTemp: return "t" + std::to_string(o.index);
      case Operand::kLiteral: return literal(o.literal);
      default: return "0.0";
    }
  };
  for (size_t j = 0; j < s.ops.size(); ++j) {
    const ShaderOp& op = s.ops[j];
    const std::string& t = op.op_type;
    auto in = [&](size_t i) { return i < op.inputs.size() ? operand(op.inputs[i]) : "0.0"; };
    auto attr = [&](const char* name, float fallback) -> Expected<float> {
      return op.attrs ? op.attrs->get_float(name, fallback) : Expected<float>(fallback);
    };
    const std::string a = in(0);
    std::string e;
    if (binary_ops().count(t)) {
      // Variadic Max/Min/Sum fold left to right.
      std::string acc = a;
      for (size_t i = 1; i < op.inputs.size(); ++i) {
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
    else if (t == "LeakyRelu") {
      SOD2_ASSIGN_OR_RETURN(float alpha, attr("alpha", 0.01f));
      e = "(" + a + " < 0.0 ? " + literal(alpha) + " * " + a + " : " + a + ")";
    } else if (t == "Elu") {
      SOD2_ASSIGN_OR_RETURN(float alpha, attr("alpha", 1.0f));
      e = "(" + a + " < 0.0 ? " + literal(alpha) + " * (exp(" + a + ") - 1.0) : " + a + ")";
    } else if (t == "Selu") {
      SOD2_ASSIGN_OR_RETURN(float alpha, attr("alpha", 1.67326319217681884765625f));
      SOD2_ASSIGN_OR_RETURN(float gamma, attr("gamma", 1.05070102214813232421875f));
      e = "(" + literal(gamma) + " * (" + a + " <= 0.0 ? " + literal(alpha) + " * (exp(" + a +
          ") - 1.0) : " + a + "))";
    } else if (t == "HardSigmoid") {
      SOD2_ASSIGN_OR_RETURN(float alpha, attr("alpha", 0.2f));
      SOD2_ASSIGN_OR_RETURN(float beta, attr("beta", 0.5f));
      e = "clamp(" + literal(alpha) + " * " + a + " + " + literal(beta) + ", 0.0, 1.0)";
    } else if (t == "HardSwish") {
      e = "(" + a + " * clamp(" + a + " / 6.0 + 0.5, 0.0, 1.0))";
    } else if (t == "Clip") {
      // Before opset 11 the bounds are attributes; after, optional inputs (inlined scalars).
      std::string lo, hi;
      if (op.opset < 11) {
        SOD2_ASSIGN_OR_RETURN(float mn, attr("min", -3.402823466e38f));
        SOD2_ASSIGN_OR_RETURN(float mx, attr("max", 3.402823466e38f));
        lo = literal(mn);
        hi = literal(mx);
      } else {
        if (op.inputs.size() > 1 && op.inputs[1].kind != Operand::kAbsent) lo = in(1);
        if (op.inputs.size() > 2 && op.inputs[2].kind != Operand::kAbsent) hi = in(2);
      }
      e = a;
      if (!lo.empty()) e = "max(" + e + ", " + lo + ")";
      if (!hi.empty()) e = "min(" + e + ", " + hi + ")";
    } else {
      return unsupported("the shader generator does not know " + t);
    }
    body += "  float t" + std::to_string(j) + " = " + e + ";  // " + op.node + " (" + t + ")\n";
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
  g += "  out0.d[pc.out_off + i] = t" + std::to_string(s.ops.size() - 1) + ";\n}\n";
  return g;
}

}  // namespace sod2::codegen
