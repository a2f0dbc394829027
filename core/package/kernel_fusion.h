// Which fused groups the CPU runtime runs as one kernel. Today that is a contraction (Conv,
// MatMul, Gemm) followed by a chain the linalg epilogue covers: a per-channel bias Add, one
// activation (SiLU included, as Sigmoid then Mul, and on the CPU GELU as torch exports it), a
// residual Add before or after it
// (runtime/kernels/linalg/fused_ops.h has the fused ops' contract), and for a MatMul on the CPU,
// Transposes of its operands, read in place through FusedMatMul's a_perm / b_perm; and four QDQ
// (int8) forms:
//   - DequantizeLinear → Conv (+ int32 bias) (+ an activation) → QuantizeLinear, as one
//     sod2:QFusedConv (QLinearConv's inputs and exact arithmetic, plus a clamp for Relu/Clip or
//     a float activation), or without the QuantizeLinear, a QFusedConv with a float output;
//   - the same around MatMul or Gemm (constant 2-D int8 weights), as one sod2:QFusedMatMul;
//   - DequantizeLinear ×2 → Add (+ Relu/Clip) (→ QuantizeLinear, or a float result), as one
//     sod2:QAdd, or, where
//     one operand is a QFusedConv's result that nothing else reads (a residual block's sum), as
//     part of that QFusedConv (inputs 9-15), the QAdd arithmetic on its 8-bit result in its
//     store;
//   - DequantizeLinear → MaxPool → QuantizeLinear of equal parameters, as MaxPool on the 8-bit
//     values.
// and a group of elementwise ops alone, as one sod2:FusedElementwise (elementwise_fusion.h), which
// the CPU evaluates a chunk at a time and Vulkan as one generated shader; on the CPU, such a group
// with the Softmax that reads its result after it, as one sod2:FusedSoftmax (attention's scale
// and mask, which pipeline::compile joins to the Softmax once the MatMul before them is peeled).
// Any other group is split into its nodes (opt::restrict_fusion), so only groups that really run
// fused keep their values out of the arena.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"
#include "runtime/kernels/kernel.h"

namespace sod2::package {

// The backend a program is compiled for. What it runs fused decides the groups, so the memory
// plan is the plan of what runs there: both run the same fused kernels, but a generated shader
// takes fewer inputs and a lower rank than the CPU's fused elementwise kernel.
enum class Target : uint8_t { kCpu, kVulkan };

// One fused kernel: the node that replaces a group's nodes.
struct FusedKernel {
  rt::NodeInfo
      info;  // domain "sod2", op FusedConv / FusedMatMul / FusedGemm / FusedBatchNormalization
  std::vector<ValueId> inputs;  // the anchor's inputs, then bias and residual
  ValueId output = kNoValue;    // the group's one output
};

// Why the target has no fused kernel for a candidate group (typed, so that tools count and explain
// refusals without parsing text).
enum class FusionRefusal : uint8_t {
  kNone,                   // it has one
  kSingleNode,             // nothing to fuse
  kNoContractionAnchor,    // a normalization or reduction group without a fused kernel
  kBatchNormNotInference,  // training mode, spatial = 0, or statistics not float32 constants
  kSeveralOutputs,
  kNotFloat32,
  kSymbolicChannels,  // the bias/epilogue needs the channel count as a constant
  kNotAChain,         // a value inside is read twice or is a graph output
  kUnsupportedAdd,    // neither a per-channel constant bias nor a same-shape residual
  kSecondActivation,
  kUnsupportedEpilogueOp,
  // A Transpose before the contraction that its kernel does not read through a permutation
  // (only the CPU's MatMul does, for operands A and B)
  kUnsupportedPrologue,
  // A QDQ group (DequantizeLinear/QuantizeLinear around a contraction) the int8 kernel does not
  // run as written: its nodes then run one by one, in float between them
  kUnsupportedQuantization,
  // An elementwise group with an op (or a Clip bound that is not a constant, or an opset before
  // 7's legacy broadcast) that a fused elementwise kernel does not evaluate
  kNotInFusedElementwise,
  // Vulkan: more tensor inputs, or a higher rank, than a generated shader's push constants hold
  kShaderLimits,
  // A normalization after elementwise ops that no fused kernel of the target runs (the CPU's
  // runs a float32 Softmax over rows that are contiguous)
  kUnsupportedNormalization,
};
const char* fusion_refusal_text(FusionRefusal r);

// One candidate group's verdict: the kernel that runs it, or the refusal and the node at which
// matching stopped.
struct FusionVerdict {
  std::optional<FusedKernel> kernel;
  FusionRefusal refusal = FusionRefusal::kNone;
  std::string at_node;
};

// The verdict that refuses a group `why`, matching having stopped at node `at`.
FusionVerdict refused(const Graph& graph, FusionRefusal why, NodeId at);

// Per group of `plan`, its verdict on `target`.
std::vector<FusionVerdict> match_fused_kernels(const Graph& graph, const RdpResult& rdp,
                                               const opt::FusionPlan& plan,
                                               Target target = Target::kCpu);

// The tensor a constant value holds (an initializer, or a Constant node's output, through
// Identities), or nullptr.
const Tensor* constant_tensor(const Graph& g, ValueId v);

// A scalar float held by a constant value (an initializer or a Constant node's output).
std::optional<float> constant_float_scalar(const Graph& g, const RdpResult& rdp, ValueId v);

}  // namespace sod2::package
