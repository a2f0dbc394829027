// Nodes whose outputs the compiler already has: they launch no kernel, their outputs live in the
// package rather than the arena, and fusion, ordering and planning pass over them. One rule for
// every stage, so what the plan counts is what the package runs.
#pragma once

#include "core/ir/graph.h"

namespace sod2 {

// Whether `v` of `graph` is known before any run: an initializer, or the output of a constant
// node of the same graph.
bool is_constant_value(const Graph& graph, ValueId v);

// Constant (ai.onnx), and Identity of a constant value: by the spec its output is its input, and
// exporters write Identity chains on weights for tied or renamed parameters (PyTorch's ConvNeXt
// export has 55), which would otherwise copy each weight into the arena and hold it there from
// the first step to its reader.
bool is_constant_node(const Graph& graph, const Node& node);

}  // namespace sod2
