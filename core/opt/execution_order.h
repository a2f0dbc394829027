// The execution order: a topological order of the main graph's step units (fused groups, or
// nodes) that keeps few bytes live (DESIGN §5). Judged on peak live bytes (memory_stats.h) with
// sizes at the upper bounds, and checked at other bindings: an order that is worse than the source
// order at any of them is not taken, so the result is never worse than the file's own order where
// it was checked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/step_units.h"
#include "core/opt/tensor_sizes.h"
#include "core/status/status.h"

namespace sod2::opt {

struct ExecutionOrder {
  std::vector<int32_t> steps;     // the unit each step runs
  std::vector<NodeId> order;      // the nodes of those units, in the order they run
  std::string strategy;           // "source", "min-delta" or "min-alloc"
  int64_t peak_bytes = 0;         // at the reference (upper-bound) sizes
  int64_t source_peak_bytes = 0;  // the source order's, same sizes
};

// A list scheduler over units: among the units whose inputs are ready, run the one whose step
// adds the fewest live bytes (`min-delta`: its outputs minus the inputs it reads last) or
// allocates the fewest (`min-alloc`); ties go to the lower unit number.
enum class ScheduleRule { kMinDelta, kMinAlloc };
std::vector<int32_t> list_schedule(const Graph& graph, const StepUnits& units, const TensorSet& set,
                                   std::span<const int64_t> sizes, ScheduleRule rule);
// One node per unit: the result is a node order.
std::vector<NodeId> list_schedule(const Graph& graph, const TensorSet& set,
                                  std::span<const int64_t> sizes, ScheduleRule rule);

// Peak live bytes of `unit_order` with these sizes. Errors: the order is not topological.
Expected<int64_t> order_peak_bytes(const Graph& graph, const StepUnits& units, const TensorSet& set,
                                   std::span<const int32_t> unit_order,
                                   std::span<const int64_t> sizes);

// The source order (source_unit_order) and the list schedules; the one with the lowest peak at
// `reference_sizes` whose peak at every `check_sizes` entry is at most the source order's.
// Errors: the graph has a cycle.
Expected<ExecutionOrder> choose_execution_order(const Graph& graph, const StepUnits& units,
                                                const TensorSet& set,
                                                std::span<const int64_t> reference_sizes,
                                                std::span<const std::vector<int64_t>> check_sizes);
// One node per unit.
Expected<ExecutionOrder> choose_execution_order(const Graph& graph, const TensorSet& set,
                                                std::span<const int64_t> reference_sizes,
                                                std::span<const std::vector<int64_t>> check_sizes);

}  // namespace sod2::opt
