// Where each node runs, drawn over the graph (View ▸ Colour nodes by ▸ Backend): the Backend
// dock's placement as a categorical overlay, one colour for the device and one per reason the
// CPU runs the rest. No Qt: tested headless.
#pragma once

#include "app/backend/backend_placement.h"
#include "app/studio/graph/node_overlay.h"
#include "core/ir/graph.h"

namespace sod2::studio {

// Categories: "<backend>" (the device) first when any node runs there, then "CPU: <reason>" in
// CpuReason order for the reasons present. A row's group label carries its specifics
// ("Gather: no hand-written shader"). Rows are matched to `graph`'s nodes by name.
NodeOverlay backend_overlay(const backend::BackendPlacement& placement, const Graph& graph);

}  // namespace sod2::studio
