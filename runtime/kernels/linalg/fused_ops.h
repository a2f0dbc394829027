// Fused contraction ops: a Conv / MatMul / Gemm with its elementwise tail (bias, activation,
// residual add) run as one kernel, the tail applied to each output tile while it is in cache
// (epilogue.h). A graph-side fusion pass replaces a matched chain with one of these nodes.
//
// CONTRACT (what the fusion pass must produce; the factories check it when the model loads)
//
//   domain "sod2", op_type "FusedConv" | "FusedMatMul" | "FusedGemm" |
//   "FusedBatchNormalization", registered since opset 1 of domain "sod2". NodeInfo::opset carries
//   the ai.onnx opset of the node that was fused, and the op follows that opset's ONNX definition
//   of Conv / MatMul / Gemm (as of the latest opset <= 17 at or below it): same attributes, same
//   inputs, same output.
//
//   Inputs: the ONNX op's own inputs first, in ONNX order (Conv X, W[, B]; MatMul A, B;
//   Gemm A, B[, C]; BatchNormalization X, scale, B, mean, var, inference form only:
//   training_mode 0, spatial 1, float32, epilogue slots >= 5); an omitted optional input may be an
//   empty (not present) slot or left out when nothing follows it. Then the epilogue's inputs, in
//   any order, at the slots named by:
//
//   Attributes: the ONNX op's own, except that FusedGemm carries Gemm's alpha and beta as
//   `gemm_alpha` and `gemm_beta` (floats, default 1.0: "alpha"/"beta" below are the
//   activation's, and a producer that copies Gemm's attributes must rename those two). Then
//   the epilogue's, all optional:
//     activation   string  "" (none, the default) | "Relu" | "LeakyRelu" | "Clip" | "Sigmoid" |
//                          "HardSigmoid" | "HardSwish" | "Tanh" | "Silu" | "GeluErf"; anything
//                          else is an error. "Silu" is x * sigmoid(x), the chain Sigmoid(t) ->
//                          Mul(t, that) (either operand order) on the op's output t. "GeluErf"
//                          is GELU as torch exports it: Div(t, k) (or Mul(t, k)), Erf, Add 1,
//                          Mul t, Mul 0.5.
//     alpha, beta  float   the activation's parameters, ONNX defaults applied by the producer:
//                            LeakyRelu: alpha = slope (ONNX default 0.01)
//                            Clip:      alpha = min, beta = max (from the min/max inputs or,
//                                       before opset 11, attributes; -/+3.402823466e38 when
//                                       absent)
//                            HardSigmoid: alpha, beta (ONNX defaults 0.2, 0.5)
//                            GeluErf:   alpha = k, beta = 1 to divide by it, 0 to multiply
//                                       (defaults sqrt(2) and 1)
//                          When the attribute is absent the factory uses these ONNX defaults;
//                          other activations ignore alpha and beta.
//     bias_input   int     input slot of a per-output-channel bias, -1 (default) for none.
//                          numel must equal the channel count (any shape: [C], [1,C,1,1]...).
//                          Channel = dim 1 of the output for FusedConv and
//                          FusedBatchNormalization, the last dim for FusedMatMul / FusedGemm.
//     residual_input int   input slot of a tensor with exactly the output's shape (no
//                          broadcasting), -1 (default) for none.
//     residual_before_activation int 1 (default): y = act(op + bias + residual);
//                                    0:           y = act(op + bias) + residual.
//     a_perm, b_perm ints  FusedMatMul only: operand A (B) is the Transpose by this permutation
//                          of the tensor in slot 0 (1), which the kernel reads in place instead
//                          of a transposed copy. The permutation must keep each matrix
//                          addressable by a GEMM: the operand's last dim, or its second-to-last,
//                          must be the input's last dim (its rows or its columns contiguous);
//                          batch dims may come from any of the input's dims. Absent or empty:
//                          the slot holds the operand itself.
//   Both slots must be >= 2 (never X/W or A/B), distinct from each other and less than the
//   node's input count. A slot named by bias_input / residual_input is never read as the op's
//   own optional input, so a FusedConv of a Conv without B may put its bias at slot 2 (it is
//   then only the epilogue's bias; a Conv B, if any, sits in slot 2 itself and the epilogue's
//   slots follow). All inputs are float32 (FusedMatMul: the epilogue needs float32).
//
//   The op's own bias (Conv B, Gemm C) and the epilogue bias both apply (added before the
//   residual/activation), so a chain Conv(B) -> Add(bias) fuses without folding them.
//
//   Output: one, the fused chain's result, with the ONNX op's output shape and dtype.
//
// Semantics are those of running the ONNX ops separately (Conv -> Add(bias) -> [Add(residual)]
// -> Act -> [Add(residual)]); results agree to float rounding (the tail is applied in float
// to the accumulated output, as the separate ops would).
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/epilogue.h"

namespace sod2::rt {

// Reads and checks the epilogue attributes above (`op` names the node's op in errors).
Expected<Epilogue> read_fused_epilogue(const NodeInfo& node, const char* op);

Expected<std::unique_ptr<Kernel>> make_fused_conv(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_fused_matmul(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_fused_gemm(const NodeInfo& node);
Expected<std::unique_ptr<Kernel>> make_fused_batch_norm(const NodeInfo& node);

}  // namespace sod2::rt
