// The memory plan over fusion's candidate groups (every group RDP allows), as the planner's tests
// and benchmarks judge the planner, whatever a backend then runs fused: pipeline::compile decides
// that, and opt::plan_memory plans only the groups it is given.
#pragma once

#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"

namespace sod2::testing {

inline Expected<opt::MemoryPlan> plan_over_candidates(const Graph& graph, const RdpResult& rdp,
                                                      opt::MemoryPlanOptions options = {}) {
  SOD2_ASSIGN_OR_RETURN(opt::FusionPlan groups, opt::fuse(graph, rdp));
  options.fusion = &groups;  // copied into the plan
  return opt::plan_memory(graph, rdp, options);
}

}  // namespace sod2::testing
