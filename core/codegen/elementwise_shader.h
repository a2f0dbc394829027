// A fused elementwise group as a GLSL compute shader (DESIGN §5, fused code generation). One
// invocation computes one output element: it maps the element's index to each input's through
// broadcast strides, loads each input once, evaluates the group's ops in registers and stores
// the result, so the group's inside values never reach memory.
//
// Bindings (set 0): inputs 0..K-1, then the output, all float32 storage buffers. Push constants
// (all uint, in this order): n (elements), out_off, in_off[K] (first elements, in floats), dim[R]
// (output dims), st[K][R] (each input's stride per output dim, 0 where it broadcasts). The
// runtime's group kernel (runtime/vulkan/group_kernel.cpp) fills them per run, so one shader
// serves every binding of the model's symbols.
#pragma once

#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/attrs.h"

namespace sod2::codegen {

struct Operand {
  enum Kind { kInput, kTemp, kLiteral, kAbsent } kind = kAbsent;
  int index = 0;      // kInput: binding; kTemp: the op that computes it
  float literal = 0;  // kLiteral: an inlined scalar constant
};

struct ShaderOp {
  std::string op_type;
  int opset = 0;
  const rt::Attrs* attrs = nullptr;
  std::string node;  // for the comment
  std::vector<Operand> inputs;
};

struct ElementwiseShader {
  std::vector<ShaderOp> ops;  // in order; the last one's result is the output
  int num_inputs = 0;
  int rank = 0;
};

// Whether the generator knows this ai.onnx op (float32, one output).
bool is_elementwise_op(const std::string& op_type);

// Errors: an attribute of the wrong type, an op it does not know.
Expected<std::string> generate_elementwise_glsl(const ElementwiseShader& shader);

}  // namespace sod2::codegen
