// A fused elementwise group as data: the steps a sod2:FusedElementwise node evaluates per output
// element, stored in the node's attributes. The compiler writes it (core/package/kernel_fusion);
// the CPU kernel (runtime/kernels/math/fused_elementwise.cpp) and the shader generator
// (core/codegen/elementwise_shader.cpp) both read it, so both backends run the same group from
// one description. A package is hostile input: from_attrs checks every index and count.
//
// Attributes: "steps" (op names, in evaluation order), "arity" (operands per step), "args" (the
// operands, flattened: k >= 0 is the node's input k, -1 - j the result of step j < this one),
// "alpha" and "beta" (one float each per step: the op's parameters with ONNX's defaults filled
// in). The last step's result is the output. Every value is float32; inputs broadcast to the
// output as numpy does. With "quantize_scale", "quantize_zero_point" and "quantize_type"
// (uint8 or int8), the output is the last step's result quantized (a trailing per-tensor
// QuantizeLinear: a squeeze-excite's Mul in a QDQ model), on the CPU only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/attrs.h"
#include "runtime/tensor/dtype.h"

namespace sod2::rt {

// The ops a fused elementwise group evaluates (ai.onnx, float32). The per-op table
// (core/ops/op_support.cpp, column fused_elementwise) lists the same ops; a test checks both.
enum class EwOp : uint8_t {
  kAbs,
  kAdd,
  kCeil,
  kClip,
  kCos,
  kDiv,
  kElu,
  kErf,
  kExp,
  kFloor,
  kHardSigmoid,
  kHardSwish,
  kIdentity,
  kLeakyRelu,
  kLog,
  kMax,
  kMin,
  kMul,
  kNeg,
  kPRelu,
  kPow,
  kReciprocal,
  kRelu,
  kRound,
  kSelu,
  kSigmoid,
  kSin,
  kSoftplus,
  kSoftsign,
  kSqrt,
  kSub,
  kSum,
  kTanh,
};
inline constexpr int kNumEwOps = static_cast<int>(EwOp::kTanh) + 1;

std::string_view ew_op_name(EwOp op);
std::optional<EwOp> ew_op_from_name(std::string_view op_type);

// The operands a step of `op` takes: lo to hi (two for the binary ops, one or more for the
// variadic Max/Min/Sum, one for the rest: Clip's bounds are parameters).
struct EwArity {
  size_t lo, hi;
};
EwArity ew_op_arity(EwOp op);

// One step's operand: the node's input `index`, or the result of step `index`.
struct EwOperand {
  bool temp = false;
  int32_t index = 0;
};

struct EwStep {
  EwOp op = EwOp::kIdentity;
  std::vector<EwOperand> args;  // Clip: just x (its bounds are alpha and beta)
  // LeakyRelu, Elu, HardSigmoid: alpha (and beta); Selu: alpha and gamma (as beta); Clip: the
  // bounds (as Clip's kernel takes them when absent).
  float alpha = 0, beta = 0;
};

// The group's output quantized: saturate(round_half_even(v / scale) + zero_point) as `type`,
// QuantizeLinear's arithmetic (runtime/kernels/linalg/quantize.h).
struct EwQuantize {
  float scale = 1;
  int32_t zero_point = 0;
  DType type = DType::kUint8;  // kUint8 or kInt8
};

struct ElementwiseProgram {
  std::vector<EwStep> steps;
  std::optional<EwQuantize> quantize;
  DType output_type() const { return quantize ? quantize->type : DType::kFloat; }
};

// The node that holds a program: op FusedElementwise of the sod2 domain, opset 1.
inline constexpr const char* kFusedElementwiseDomain = "sod2";
inline constexpr const char* kFusedElementwiseOp = "FusedElementwise";
inline bool is_fused_elementwise(std::string_view domain, std::string_view op_type) {
  return domain == kFusedElementwiseDomain && op_type == kFusedElementwiseOp;
}

// A Softmax with a program as its prologue: op FusedSoftmax of the sod2 domain, opset 1, the
// program's attributes and "axis" (runtime/kernels/math/fused_softmax.cpp).
inline constexpr const char* kFusedSoftmaxDomain = "sod2";
inline constexpr const char* kFusedSoftmaxOp = "FusedSoftmax";

// The largest program a node may hold (far more than any group fusion makes).
inline constexpr size_t kMaxEwSteps = 4096;

// A step for ONNX op `op_type` at `opset` over `args`: its parameters from the node's float
// attributes (`attr(name)`, nullopt when absent) or ONNX's defaults. Clip at opset >= 11 takes
// its bounds from `clip_lo`/`clip_hi` (constant inputs), before from its min/max attributes.
// Errors: an op a group does not evaluate, a legacy-broadcast opset (< 7), a wrong operand count.
Expected<EwStep> elementwise_step(std::string_view op_type, int opset, std::vector<EwOperand> args,
                                  const std::function<std::optional<float>(const char*)>& attr,
                                  std::optional<float> clip_lo = std::nullopt,
                                  std::optional<float> clip_hi = std::nullopt);

Attrs to_attrs(const ElementwiseProgram& program);
// Errors name what is inconsistent: unknown op, operand count, an input index >= num_inputs, a
// step reading itself or a later step, too many steps, a quantization that is not a positive
// finite scale with a zero point of its 8-bit type.
Expected<ElementwiseProgram> elementwise_program_from(const Attrs& attrs, size_t num_inputs);

}  // namespace sod2::rt
