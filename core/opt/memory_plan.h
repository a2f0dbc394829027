// The memory plan of a model's main graph, end to end: which tensors, in which order, at which
// symbolic offsets, compiled for instantiation; and what one binding makes of it, next to the
// yardsticks (lower bound, no reuse, per-binding greedy, the source order's peak).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/execution_order.h"
#include "core/opt/fusion.h"
#include "core/opt/plan_program.h"
#include "core/opt/plan_types.h"
#include "core/opt/plan_versions.h"
#include "core/opt/step_units.h"
#include "core/opt/symbolic_planner.h"
#include "core/opt/tensor_sizes.h"
#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"
#include "runtime/program/binding_layout.h"

namespace sod2::opt {

struct MemoryPlanOptions {
  // Bindings an execution order is checked at besides the upper bounds (models.json's three,
  // say); execution symbols they leave out take their upper bound.
  std::vector<sym::Binding> check_bindings;
  bool reorder = true;  // false: keep the source order
  // The groups each step runs, the values inside a group kept out of the arena: the ones the
  // target runs fused, which pipeline::compile decides once (fuse()'s candidates as the backend
  // takes them); nullptr: one node per step, every value materialised.
  const FusionPlan* fusion = nullptr;
  // true: add size-bucketed versions (plan_versions.h) where a bucket gets closer to the bound.
  bool versions = true;
};

struct MemoryPlan {
  FusionPlan fusion;  // empty groups when planned without fusion
  StepUnits units;    // what each step may run: the fused groups, or one node each
  TensorSet tensors;
  ExecutionOrder order;
  std::vector<Lifetime> lives;         // in order.order
  std::vector<Lifetime> source_lives;  // in the source order of the same units, for its peak
  std::vector<int32_t> segments;       // EDO segments (segments.h)
  SymbolicPlan symbolic;               // the whole-range plan
  PlanProgram program;
  PlanVersions versions;   // bucketed versions; a cell without one uses the whole-range plan
  sym::Binding reference;  // the upper bounds: what the order and the layering were chosen at

  // The version a binding runs with: -1 for the whole-range plan, else an index into
  // versions.versions. Symbols the binding lacks count at their upper bound.
  int32_t version_for(const sym::Binding& binding) const;
  const SymbolicPlan& symbolic_of(int32_t version) const;
  const PlanProgram& program_of(int32_t version) const;
};

// Plans at the upper bounds; the execution order is also checked at `check_bindings` and at
// typical_binding, never peaking above the file's order there.
Expected<MemoryPlan> plan_memory(const Graph& graph, const RdpResult& rdp,
                                 const MemoryPlanOptions& options = {});

// Each input symbol a quarter of the way up its range, on its multiple (the studio's sliders
// start there too).
sym::Binding typical_binding(const RdpResult& rdp);

// Nodes that launch a kernel: every node but the constant ones (core/ops/constant_nodes.h), whose
// values the package stores.
int32_t count_kernels(const Graph& graph);
// Steps that launch a kernel: units with a node that is not constant.
int32_t count_kernel_steps(const Graph& graph, const StepUnits& units);

// Whether a binding may run with greedy by size at its own sizes instead of its plan version's
// layout (runtime/program/binding_layout.h): when the plan needs no execution symbol.
bool binding_greedy_applies(const MemoryPlan& plan, const RdpResult& rdp);

// A plan at one binding.
struct PlanAtBinding {
  sym::Binding binding;  // as given, plus upper bounds for unbound execution symbols
  // MemoryPlan::version_for(binding), or plan::kBindingGreedyVersion where greedy by size at
  // this binding's sizes needs a smaller arena (what the runtime then runs with). With execution
  // symbols, pipeline::plan_at may lay the binding out instead (plan::kBindingLayeringVersion).
  int32_t version = -1;
  std::vector<PlacedTensor> tensors;
  int64_t arena_bytes = 0;
  int64_t version_arena_bytes = 0;      // of the cell's version's own layout (= arena_bytes
                                        // unless the binding's greedy replaced it)
  int64_t lower_bound_bytes = 0;        // peak live bytes in the plan's order
  int64_t naive_bytes = 0;              // no reuse
  int64_t greedy_bytes = 0;             // greedy by size at this binding, same order
  int64_t source_order_peak_bytes = 0;  // peak live bytes in the source order
};

// Instantiates the plan at `binding` (input symbols bound, execution symbols optional) as the
// runtime does, and computes the yardsticks. Errors: a symbol the plan needs is unbound, or a
// size overflows. `version` forces a version (-1: the whole-range plan) and its own layout
// instead of the binding's, which any version's layout must survive.
// `greedy_yardstick` false leaves greedy_bytes 0 (it costs a greedy placement, more than the rest
// of an evaluation: a sweep over hundreds of bindings asks for it only when shown).
Expected<PlanAtBinding> evaluate_plan(const MemoryPlan& plan, const RdpResult& rdp,
                                      const sym::Binding& binding,
                                      std::optional<int32_t> version = std::nullopt,
                                      bool greedy_yardstick = true);

}  // namespace sod2::opt
