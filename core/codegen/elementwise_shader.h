// A fused elementwise group as a GLSL compute shader (DESIGN §5, fused code generation). One
// invocation computes one output element: it maps the element's index to each input's through
// broadcast strides, loads each input once, evaluates the group's ops in registers and stores
// the result, so the group's inside values never reach memory.
//
// Bindings (set 0): inputs 0..K-1, then the output, all float32 storage buffers. Push constants
// (all uint, in this order): n (elements), out_off, in_off[K] (first elements, in floats), dim[R]
// (output dims), st[K][R] (each input's stride per output dim, 0 where it broadcasts). The
// runtime's group kernel (runtime/vulkan/group_kernel.cpp) fills them per run, so one shader
// serves every binding of the model's symbols. The source holds no name from the model, so
// identical groups share one shader.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/elementwise_program.h"

namespace sod2::codegen {

struct ElementwiseShader {
  rt::ElementwiseProgram program;  // the steps; the last one's result is the output
  // Per input of the program: the value of a scalar constant, inlined as a literal, or nullopt
  // for a tensor, bound in order (binding k is the k-th tensor input).
  std::vector<std::optional<float>> literals;
  int rank = 0;  // of the output
};

// Whether the generator knows this ai.onnx op (float32, one output).
bool is_elementwise_op(const std::string& op_type);

// Errors: more tensor inputs or a higher rank than the push constants hold, an operand index
// out of range.
Expected<std::string> generate_elementwise_glsl(const ElementwiseShader& shader);

}  // namespace sod2::codegen
