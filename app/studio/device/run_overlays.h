// What runs put on the graph (View ▸ Colour nodes by): a profile's measured time per fused group
// as a heat map, the bytes its groups wrote, and the change in time between two recorded runs
// (the History dock's comparison, the same pairing as `sod2 history --compare`). Groups are
// matched to the open model's nodes by name: the nodes each group ran.
#pragma once

#include "app/profiling/profile_job.h"
#include "app/studio/graph/node_overlay.h"
#include "core/ir/graph.h"
#include "core/store/profile_store.h"

namespace sod2::studio {

NodeOverlay measured_time_overlay(const profiling::ProfileResult& result, const Graph& graph);
NodeOverlay output_bytes_overlay(const profiling::ProfileResult& result, const Graph& graph);
// B's time minus A's per group (a group in one run only: its whole time, positive for B and
// negative for A).
NodeOverlay run_delta_overlay(const store::RunRecord& a, const store::RunRecord& b,
                              const Graph& graph);

}  // namespace sod2::studio
