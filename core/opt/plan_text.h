// The stable text form of a memory plan: what golden tests compare and `sod2 plan` prints.
// Columns are padded to their widest cell; nothing in it depends on pointers or hash order.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "core/opt/memory_plan.h"

namespace sod2::opt {

// The order (step, node, op) and every tensor's steps, symbolic size and offset, then the arena.
std::string symbolic_plan_text(const Graph& graph, const MemoryPlan& plan);

// The binding, every tensor's steps, size and offset there, then the arena and its yardsticks.
std::string plan_at_binding_text(const MemoryPlan& plan, const PlanAtBinding& at);

// "batch=4, seq=128", symbols sorted by name.
std::string binding_text(const sym::Binding& binding);

}  // namespace sod2::opt
