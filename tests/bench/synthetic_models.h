// Synthetic transformer-like ONNX graphs of a chosen size, for timing RDP on large models.
#pragma once

#include <cstdint>

#include "onnx/onnx_pb.h"

namespace sod2::bench {

// Stacks attention-style blocks (shape arithmetic feeding Reshape, MatMul, Softmax, residual
// Add, LayerNormalization) over inputs [batch, seq, 64] until the graph has about `nodes` nodes.
// Nodes are named in torch's exporter's scopes: "/encoder/layers.3/attention/MatMul_12".
onnx::ModelProto transformer_like(int64_t nodes);

}  // namespace sod2::bench
