// Import-time canonicalisation of the QDQ form: a DequantizeLinear read by several nodes, one of
// them a contraction (Conv, ConvTranspose, MatMul, Gemm) operand, gets one copy per contraction.
// Quantisers share one DequantizeLinear among all readers of a tensor (a residual block's input
// feeds its first Conv and the skip Add); the copy lets each contraction's group hold its own
// prologue and run as one int8 kernel (core/package/kernel_fusion.h), and costs nothing where
// it does not (a DequantizeLinear is one pass over its input). The copies are ordinary nodes: the
// graph every view shows is the one that runs.
#pragma once

#include "core/ir/graph.h"
#include "core/status/status.h"

namespace sod2::onnx_import {

// Rewrites `graph` in place (then re-links it); returns how many copies it added.
Expected<int> dedicate_shared_dequantize(Graph& graph);

}  // namespace sod2::onnx_import
