// float16 and bfloat16 nodes of ops whose kernels compute in float32: the node's half-precision
// inputs are widened to float32 scratch, the float32 kernel runs, and its float32 outputs are
// rounded (to nearest even) into the node's half-precision outputs. ONNX lets half-precision
// Conv, MatMul, Gemm and the normalisations accumulate in float32; doing the whole op in float32
// and rounding once is at least as accurate as any half-precision loop.
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

// Whether `node` is one of those ops with a float16 or bfloat16 input, and every other float
// input of the same type, except the inputs the spec types apart (BatchNormalization's
// parameters, Resize's roi and scales), which may be float32. Any other node mixing half and
// full precision is left to its own kernel (which refuses it).
bool computes_through_float32(const NodeInfo& node);

// The node with its half-precision inputs and outputs as float32: what the float32 kernel's
// factory is asked to build.
NodeInfo widened_to_float32(const NodeInfo& node);

// Wraps the float32 kernel built for widened_to_float32(node).
std::unique_ptr<Kernel> make_narrow_float_kernel(const NodeInfo& node,
                                                 std::unique_ptr<Kernel> float32_kernel);

}  // namespace sod2::rt
