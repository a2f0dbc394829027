// The stable text form of a memory plan: what golden tests compare and `sod2 plan --verbose`
// prints, and the short form `sod2 plan` prints by default. Tables are core/text's: columns
// padded to their widest cell, numbers right-aligned, very long names elided in the middle.
// Nothing in it depends on pointers or hash order.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/opt/memory_plan.h"

namespace sod2::opt {

// The order (step, node, op) and every tensor's steps, symbolic size and offset, then the arena.
std::string symbolic_plan_text(const Graph& graph, const MemoryPlan& plan);
// The same without the tables: the order's peak and step count, the tensor counts, the arena.
std::string symbolic_plan_summary_text(const MemoryPlan& plan);

// The binding, every tensor's steps, size and offset there, then the arena and its yardsticks.
std::string plan_at_binding_text(const MemoryPlan& plan, const PlanAtBinding& at);
// The same with only the `largest` tensors by size at the binding in the table.
std::string plan_at_binding_summary_text(const MemoryPlan& plan, const PlanAtBinding& at,
                                         size_t largest);

// "batch=4, seq=128", symbols sorted by name.
std::string binding_text(const sym::Binding& binding);

}  // namespace sod2::opt
