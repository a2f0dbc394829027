// What every planning stage shares: a step interval, a tensor laid out at one concrete binding,
// and the planners and yardsticks over concrete sizes. They are the runtime's (runtime/program/),
// which checks every plan it instantiates by the same rules the planners keep and lays bindings
// out with the same planners.
#pragma once

#include "runtime/program/greedy_placement.h"
#include "runtime/program/memory_stats.h"
#include "runtime/program/plan_layout.h"

namespace sod2::opt {

using plan::GreedyPlan;
using plan::kTensorAlignment;
using plan::Lifetime;
using plan::peak_live_bytes;
using plan::PlacedTensor;
using plan::placement_order;
using plan::PlacementOrder;
using plan::plan_greedy_by_size;
using plan::plan_greedy_known_steps;
using plan::saturating_add;
using plan::total_bytes;

}  // namespace sod2::opt
