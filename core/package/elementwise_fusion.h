// Whether a target runs a group of elementwise ops (opt::fuse's "elementwise" groups) as one
// sod2:FusedElementwise node, and that node. The group must be float32, made of ops the per-op
// table marks fused_elementwise (from opset 7: earlier binary ops broadcast the legacy way), with
// Clip's bounds constant, and materialise one value that every node of it feeds. On Vulkan the
// node also becomes one generated shader, so its tensor inputs (scalar constants are inlined)
// and its rank must fit the shader's push constants (program.h); a group beyond them is split,
// so the plan made for Vulkan holds the values its nodes then write. On the CPU the group may
// end in a per-tensor QuantizeLinear of constant parameters (a squeeze-excite's Mul in a QDQ
// model): the node writes the 8-bit values.
#pragma once

#include "core/ir/graph.h"
#include "core/opt/fusion.h"
#include "core/package/kernel_fusion.h"
#include "core/rdp/rdp.h"

namespace sod2::package {

FusionVerdict match_elementwise_group(const Graph& graph, const RdpResult& rdp,
                                      const opt::FusionGroup& group, Target target);

// Whether a target runs a group of such elementwise ops followed by the Softmax that reads their
// result (attention's scale and mask before it) as one sod2:FusedSoftmax node, and that node: on
// the CPU, float32, a Softmax of opset 13 or later over its last axis or, before 13, over the
// trailing dims from its axis (rows that are contiguous). The elementwise ops follow the rules
// above, without a QuantizeLinear.
FusionVerdict match_softmax_group(const Graph& graph, const RdpResult& rdp,
                                  const opt::FusionGroup& group, Target target);

}  // namespace sod2::package
