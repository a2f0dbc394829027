// Activations exporters write as several nodes, which a fused contraction's epilogue runs as one
// activation (runtime/kernels/linalg/epilogue.h): which nodes of a candidate group form one.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/rdp/rdp.h"

namespace sod2::package {

// One activation made of `nodes` consecutive nodes of a group, ending in `out`; `name`, `alpha`
// and `beta` as a fused node's epilogue attributes (runtime/kernels/linalg/fused_ops.h).
struct ChainedActivation {
  std::string name;
  float alpha = 0, beta = 0;
  size_t nodes = 0;
  ValueId out = kNoValue;
};

// Whether `v` is read by exactly the nodes `readers` (in any order) and is no graph output.
bool read_only_by(const Graph& g, ValueId v, std::vector<NodeId> readers);

// SiLU from nodes[i] on, over x: Sigmoid(x) then Mul(x, sigmoid) (either operand order), x read
// by those two alone and neither value a graph output: "Silu".
std::optional<ChainedActivation> match_silu(const Graph& g, std::span<const NodeId> nodes, size_t i,
                                            ValueId x);

// GELU from nodes[i] on, over x: Div(x, k) or Mul(x, k), Erf, Add(., 1), Mul(., x), Mul(., 0.5)
// (a Mul's or an Add's operands in either order), each result read only by the next and x only
// by the first and the fourth, none a graph output; k a constant scalar. The steps of
// math::gelu_erf_f32 (the fused elementwise kernel's form), which the epilogue computes in the
// same order: "GeluErf" with alpha = k, beta = 1 to divide by it, 0 to multiply.
std::optional<ChainedActivation> match_gelu(const Graph& g, const RdpResult& rdp,
                                            std::span<const NodeId> nodes, size_t i, ValueId x);

}  // namespace sod2::package
