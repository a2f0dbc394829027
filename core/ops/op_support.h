// What each standard op is to fusion and which backends run it, one row per op: the single place
// these facts live. Fusion reads the role, the CPU fused-kernel matcher reads which ops its
// epilogue applies and which ops a fused elementwise group evaluates, the capability reports
// read what a GPU runs; a test
// (tests/ops/op_support_test.cpp) checks every row against the kernels and shaders that exist, so
// the table cannot claim what no kernel does nor miss what one does.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace sod2 {

// The loop structure an op has in a fused group (DESIGN §5, "Fusion"); roles are not about
// shapes (fusion checks those with RDP's facts).
enum class FusionRole : uint8_t {
  kElementwise,    // one output element from the same element of each (broadcast) input
  kContraction,    // Conv, ConvTranspose, MatMul, Gemm: takes elementwise epilogues
  kNormalization,  // Softmax, LogSoftmax, LayerNormalization...: prologue and epilogue
  kReduction,      // Reduce*, global pools: elementwise prologue and epilogue
  // DequantizeLinear / QuantizeLinear: a contraction's int8 prologue (the DequantizeLinear of an
  // operand) and end (the QuantizeLinear of its result); never with anything else
  kQuantization,
  kOpaque,  // layout, indexing, control flow...: always its own kernel
};
const char* fusion_role_name(FusionRole role);

struct OpSupport {
  std::string_view op_type;  // standard (ai.onnx) domain
  FusionRole role = FusionRole::kOpaque;
  // The fused Conv/MatMul/Gemm kernels (CPU and Vulkan) apply it as their one epilogue
  // activation (runtime/kernels/linalg/fused_ops.h).
  bool epilogue_activation = false;
  // A fused elementwise group may hold it (float32): one sod2:FusedElementwise node, which the
  // CPU evaluates a chunk at a time (runtime/kernels/math/fused_elementwise.cpp) and Vulkan as
  // one generated compute shader (core/codegen/elementwise_shader.cpp); a lone node of it gets a
  // generated shader too. rt::EwOp lists the same ops.
  bool fused_elementwise = false;
  // The Vulkan backend has a hand-written shader for it (runtime/vulkan/kernels); it may still
  // decline a node for its dtype, attributes or shapes, and says why.
  bool vulkan_shader = false;
};

// Every row, sorted by op type.
std::span<const OpSupport> op_support_table();
// The row of a standard-domain op; nullptr for an op the table does not list (an opaque op that
// only the CPU runs).
const OpSupport* find_op_support(std::string_view op_type);

}  // namespace sod2
