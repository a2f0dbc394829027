// The work of a model (core/ops/op_work.h) over RDP's facts: per node, per fused group and in
// total, as expressions of its input and execution symbols, so that a view or a benchmark
// evaluates it at any binding. What a roofline divides by time, and what the studio draws as
// curves of a size; the program carries it per step (rt::ProgramDesc::step_work).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"
#include "core/sym/sym_expr.h"

namespace sod2::opt {

struct ModelWork {
  // By main-graph node index; nullopt where the node's work cannot be told (see `uncounted`).
  std::vector<std::optional<sym::SymExpr>> node_ops;
  sym::SymExpr total_ops;  // of the counted nodes
  // "NonMaxSuppression_3 (NonMaxSuppression): a dim is unknown", "Loop_2 (Loop): ...": nodes
  // left out of total_ops, with why.
  std::vector<std::string> uncounted;
  // total_ops involves an execution symbol: at a binding that leaves them at their bounds it is
  // the most the model can do there, not what one run does.
  bool involves_execution = false;

  bool complete() const { return uncounted.empty(); }
};

ModelWork count_work(const Model& model, const RdpResult& rdp);

// A fused group's operations (its nodes' sum; nullopt if one is uncounted) and the bytes it moves
// (every value it reads from outside the group, weights included, and every value it
// materialises, once each; nullopt if a size is unknown).
std::optional<sym::SymExpr> group_ops(const ModelWork& work, const FusionGroup& group);
std::optional<sym::SymExpr> group_bytes(const Graph& graph, const RdpResult& rdp,
                                        const FusionGroup& group);

// An expression at a binding (as evaluate(), but nullopt when it needs a symbol the binding
// lacks or overflows): what the views print.
std::optional<int64_t> ops_at(const sym::SymExpr& ops, const sym::Binding& binding);

// "3.64 GOP", "812 MOP", "12.0 kOP": operations for people.
std::string human_ops(double ops);

}  // namespace sod2::opt
