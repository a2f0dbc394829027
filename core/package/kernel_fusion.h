// Which fused groups the CPU runtime runs as one kernel. Today that is a contraction (Conv,
// MatMul, Gemm) followed by a chain the linalg epilogue covers: a per-channel bias Add, one
// activation, a residual Add before or after it (runtime/kernels/linalg/fused_ops.h has the
// fused ops' contract). Any other group is split into its nodes (opt::restrict_fusion), so only
// groups that really run fused keep their values out of the arena.
#pragma once

#include <vector>

#include "core/ir/graph.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"
#include "runtime/kernels/kernel.h"

namespace sod2::package {

// One fused kernel: the node that replaces a group's nodes.
struct FusedKernel {
  rt::NodeInfo info;            // domain "sod2", op FusedConv / FusedMatMul / FusedGemm
  std::vector<ValueId> inputs;  // the anchor's inputs, then bias and residual
  ValueId output = kNoValue;    // the group's one output
};

// Per group of `plan`: the fused kernel, or nullopt when the group is a single node or its
// chain is not one the runtime can fuse.
std::vector<std::optional<FusedKernel>> match_fused_kernels(const Graph& graph,
                                                            const RdpResult& rdp,
                                                            const opt::FusionPlan& plan);

}  // namespace sod2::package
