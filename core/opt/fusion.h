// Fused groups (DESIGN §5, "Fusion"): ISDOS nodes whose shapes RDP proves compatible run as one
// kernel and keep the values between them out of memory.
//
// Rules. Nodes are visited in topological order and each input edge P -> C (through value v) is
// fused when all of these hold, else the reason is recorded in C's group:
//  - P and C are ISDOS (or ISVDOS with every value input resolved) and neither is opaque
//    (fusion_rules.h); an EDO op is never in a group.
//  - v is not a graph output and C's group holds every reader of v: a fused value is never
//    materialised, so a value read elsewhere keeps its producer out. ISDO readers (Shape, Size)
//    do not count: they need v's shape, which RDP knows, not its bytes.
//  - roles fit: elementwise joins elementwise; a contraction (Conv/MatMul/Gemm) takes
//    elementwise epilogues but no prologue, except a MatMul, whose operands' Transposes join
//    when each leaves its matrices readable by a GEMM (the operand's rows or columns are the
//    input's last dim; the kernel then reads the input through the permutation); a
//    normalization or reduction takes an elementwise prologue and epilogue; a group holds at
//    most one non-elementwise node besides those Transposes.
//  - shapes fit, proven by RDP's facts: an elementwise consumer's output has v's shape (no
//    broadcast up, which would recompute the producer per broadcast element); a prologue's
//    output is the anchor's data input.
//  - the merged group stays convex: no path leaves it and comes back (else no order could run
//    it as one step).
//  - a group holding a DequantizeLinear or QuantizeLinear does not join a normalization or a
//    reduction (no int8 kernel runs one).
// Then, QDQ residual joins: a group of DequantizeLinears → Add → ... (no anchor) one of whose
// DequantizeLinears alone reads the QuantizeLinear that ends a contraction's group joins that
// group (the later contraction's, where both operands are such), so an int8 kernel can add the
// residual in its store; a backend that cannot splits them again (split_quantized_joins).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"

namespace sod2::opt {

struct FusionGroup {
  std::vector<NodeId> nodes;     // in topological order
  std::string kind;              // "single", "elementwise", "contraction", "normalization"...
  std::vector<ValueId> inputs;   // read from outside the group (graph inputs, weights included)
  std::vector<ValueId> outputs;  // read outside the group or graph outputs: materialised
  std::vector<std::string> not_fused;  // "'/Add_3': '/x' is also read by '/Mul_2'"
};

struct FusionPlan {
  std::vector<FusionGroup> groups;  // in a topological order of the group graph
  std::vector<int32_t> group_of;    // per NodeId; -1 for Constant nodes (no kernel)
  int32_t kernels_unfused = 0;      // nodes that launch a kernel without fusion
};

// Shapes proven equal: same rank, every dim known and equal for every binding in range.
bool same_shape(const TensorFact& a, const TensorFact& b, const sym::RangeMap& ranges);

// Errors: the graph has a cycle.
Expected<FusionPlan> fuse(const Graph& graph, const RdpResult& rdp);

// The permutation through which a MatMul reads Transpose node `t`'s input in place (a group's
// Transpose prologue, fused_ops.h's a_perm / b_perm): its `perm`, reversed when absent, when the
// input is float32 of known rank at least 2 and every matrix of the result keeps its rows or its
// columns contiguous (the operand's last dim, or its second-to-last, is the input's last dim);
// nullopt otherwise.
std::optional<std::vector<int64_t>> gemm_readable_perm(const Graph& graph, const RdpResult& rdp,
                                                       const Node& t);

// `plan` with each multi-node group whose `split_because` entry is not empty split into one group
// per node (a backend without a fused kernel for it runs the nodes one by one, so their values
// need memory); each split node's not_fused says "'node' runs alone: " and that reason. Group
// inputs and outputs are recomputed.
FusionPlan restrict_fusion(const Graph& graph, const FusionPlan& plan,
                           std::span<const std::string> split_because);

// A group that holds a QuantizeLinear read inside it (a contraction's group joined with the
// quantized residual join after it, as fuse() forms them) in two: that QuantizeLinear with the
// group's nodes it reads, directly or not (the contraction's group), and the rest (the join),
// each with its inputs and outputs; nullopt for any other group. Both sides are convex: a path
// from the second back to the first would make a node of the second an ancestor of the first.
std::optional<std::array<FusionGroup, 2>> quantized_join_sides(const Graph& graph,
                                                               const FusionGroup& grp);

// `plan` with each group whose `split_because` entry is not empty and that has quantized_join_sides
// split into them, in that order (a backend without a kernel for the contraction and the join
// together may still have one for each); the first side's not_fused says why. Other groups stay.
FusionPlan split_quantized_joins(const Graph& graph, const FusionPlan& plan,
                                 std::span<const std::string> split_because);

// `plan` with each group whose `peel_because` entry is not empty split around its anchor (its
// one node that is not elementwise: a contraction, normalization or reduction): the prologue (the
// group's nodes the anchor reads, directly or not), the anchor alone (a MatMul with the operand
// Transposes it reads in place, which the backend is asked about again), and the rest; each side,
// when all elementwise, one "elementwise" group (a node alone when one is left; every node alone
// otherwise). A backend without a fused kernel for the anchor with its neighbours may still run
// them fused. Each side stays convex: a path out of one and back would run through the anchor,
// making a prologue node its reader or an epilogue node its source. The anchor's not_fused says
// "'node' runs alone: " and the reason. Group inputs and outputs are recomputed.
FusionPlan peel_anchors(const Graph& graph, const FusionPlan& plan,
                        std::span<const std::string> peel_because);

// Group `i` of `plan` joined with the normalization after it: when the group is all elementwise
// ops with one output that is no graph output and that one node alone in its own group reads
// (besides ISDO ops, which need only its shape), and that node is a normalization reading nothing
// else (attention's scale and mask before its Softmax, once the MatMul they followed is peeled
// off), one "normalization" group of the group's nodes then that node, keeping the group's notes
// (the node's said why it had not joined them); nullopt otherwise.
std::optional<FusionGroup> join_with_normalization(const Graph& graph, const FusionPlan& plan,
                                                   size_t i);

// `plan` with each group i for which `joined[i]` holds join_with_normalization's group replaced
// by it, and the normalization's own group gone. Group inputs and outputs are recomputed.
FusionPlan join_normalizations(const Graph& graph, const FusionPlan& plan,
                               std::span<const std::optional<FusionGroup>> joined);

}  // namespace sod2::opt
