// What one node computes, as an expression of its dims: the count a roofline divides by time.
//
// The convention is that of the GFLOP/s peaks it is compared with: a multiply-add counts 2; any
// other arithmetic, comparison or transcendental function on one element counts 1; moving,
// copying, casting or indexing data counts 0. Integer ops (ConvInteger, QLinearConv...) count the
// same way, in integer operations. The counts are what the op defines, not what a kernel does:
// a Winograd convolution is credited with the direct convolution's multiply-adds, as every
// published GFLOP/s figure is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/tensor_fact.h"

namespace sod2 {

// What a work rule sees of one node: its attributes and the RDP facts of its inputs and outputs.
struct WorkView {
  const Node& node;
  std::vector<const TensorFact*> inputs;   // nullptr where omitted
  std::vector<const TensorFact*> outputs;  // nullptr where omitted
  // The work of one run of a subgraph of this node (If's branches, Loop/Scan bodies); nullopt
  // when some node in it is not counted.
  std::function<std::optional<sym::SymExpr>(const Graph&)> subgraph_work;

  // Input `i`'s dim `d` (negative: from the end); nullopt when the input, its rank or the dim is
  // unknown.
  Dim input_dim(size_t i, int64_t d) const;
  Dim output_dim(size_t i, int64_t d) const;
  std::optional<sym::SymExpr> input_numel(size_t i) const;
  std::optional<sym::SymExpr> output_numel(size_t i) const;
  int64_t input_rank(size_t i) const;  // -1 when unknown or omitted
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
};

// nullopt: the node's work cannot be told from what RDP knows (an unknown dim, a Loop whose trip
// count depends on the data).
using WorkRule = std::optional<sym::SymExpr> (*)(const WorkView& view);

// The rule of every op of the standard domain, by op type (one rule for all its versions).
// OpRegistry::standard() attaches them to its specs; a test checks that every registered op has
// one and every entry names a registered op.
const std::vector<std::pair<const char*, WorkRule>>& op_work_table();

}  // namespace sod2
