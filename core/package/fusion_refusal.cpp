// What each FusionRefusal means, in the words sod2 plan, the studio and the compile log show.
#include <string>

#include "core/ops/op_support.h"
#include "core/package/kernel_fusion.h"
#include "runtime/program/program.h"

namespace sod2::package {

const char* fusion_refusal_text(FusionRefusal r) {
  switch (r) {
    case FusionRefusal::kNone: return "runs fused";
    case FusionRefusal::kSingleNode: return "a single node";
    case FusionRefusal::kNoContractionAnchor:
      return "a normalization or reduction group (fused kernels start with a Conv, MatMul, Gemm "
             "or BatchNormalization, or hold elementwise ops alone)";
    case FusionRefusal::kBatchNormNotInference:
      return "a BatchNormalization in training mode, per element (spatial = 0) or with statistics "
             "that are not float32 constants";
    case FusionRefusal::kSeveralOutputs: return "the group materialises more than one value";
    case FusionRefusal::kNotFloat32:
      return "the contraction's output is not float32, float16 or bfloat16 of rank >= 2";
    case FusionRefusal::kSymbolicChannels:
      return "the contraction's output channels are not a constant";
    case FusionRefusal::kNotAChain:
      return "the epilogue is not a chain (a value inside is read twice or is a graph output)";
    case FusionRefusal::kUnsupportedAdd:
      return "an Add that is neither a per-channel constant bias nor a same-shape residual";
    case FusionRefusal::kUnsupportedQuantization:
      return "a QDQ group the int8 kernels do not run (they run DequantizeLinear -> Conv "
             "(+ an int32 bias of scale x_scale * w_scale, or a float one) (+ one activation) -> "
             "QuantizeLinear with per-tensor activations and weights per tensor or per output "
             "channel; DequantizeLinear x2 -> Add of one shape (+ Relu or constant Clip) -> "
             "QuantizeLinear; and, on the CPU, float elementwise ops -> a per-tensor "
             "QuantizeLinear of constant parameters)";
    case FusionRefusal::kSecondActivation: return "a second activation";
    case FusionRefusal::kUnsupportedPrologue:
      return "a Transpose the contraction does not read through a permutation (the CPU's MatMul "
             "does, for operand A or B; Vulkan does not)";
    case FusionRefusal::kNotInFusedElementwise: {
      static const std::string text = [] {
        std::string t = "an op a fused elementwise kernel does not evaluate (it evaluates ";
        for (const OpSupport& row : op_support_table())
          if (row.fused_elementwise) t += std::string(row.op_type) + ", ";
        return t + "float32, from opset 7, Clip only with constant bounds)";
      }();
      return text.c_str();
    }
    case FusionRefusal::kUnsupportedNormalization:
      return "a normalization after elementwise ops that no fused kernel runs (the CPU runs "
             "float32 elementwise ops then a Softmax over its last axis, or before opset 13 "
             "over its trailing dims)";
    case FusionRefusal::kShaderLimits: {
      static const std::string text =
          "more tensor inputs (" + std::to_string(rt::kMaxGpuKernelInputs) +
          ") or a higher rank (" + std::to_string(rt::kMaxGpuRank) +
          ") than a generated Vulkan shader takes (fewer at a high rank: the push constants hold "
          "32 words)";
      return text.c_str();
    }
    case FusionRefusal::kUnsupportedEpilogueOp: {
      // Named from the per-op table, so the text lists what the matcher accepts.
      static const std::string text = [] {
        std::string t = "an op the fused epilogue does not run (it runs bias Add, ";
        for (const OpSupport& row : op_support_table())
          if (row.epilogue_activation) t += std::string(row.op_type) + ", ";
        return t +
               "Clip only with constant bounds, SiLU as Sigmoid then Mul, GELU as Div, Erf, "
               "Add, Mul, Mul, residual Add)";
      }();
      return text.c_str();
    }
  }
  return "unknown";
}

}  // namespace sod2::package
