// Opening and closing boxes without laying the whole drawing out again (issue #23 item 1): the
// next layout is made from the one on screen, so what the person did not touch stays where it
// was, in the same order, with the same gaps or wider. Runs on the layout worker; no Qt.
#pragma once

#include <atomic>
#include <optional>

#include "app/studio/graph/display_frames.h"
#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"
#include "core/status/status.h"

namespace sod2::studio {

// `now`'s layout made from `before`'s, when `now` is `before` with boxes opened or closed:
//  - a box that opened (a fused group, a name scope, a shape computation, an If/Loop/Scan's
//    bodies) has its contents laid out on their own (layout_graph), framed, and put with its top
//    where the box's top was, centred on it;
//  - boxes that closed into one are replaced by it at the top of their place, and the space
//    closes up when that makes nothing overlap, else it stays;
//  - to make room, whatever lies wholly right of the place moves right, wholly left moves left
//    and wholly below moves down, each by the growth on its side: rigid moves that keep every
//    order and never bring two things closer.
// Edges whose ends moved together keep their route; the others get a new curve.
// nullopt when `now` is not such a change of `before` (a node nothing in `before` held, boxes
// merged and split at once, a different document): the caller lays out afresh.
// Errors: cancelled, or laying out an opened box's contents failed.
Expected<std::optional<GraphLayout>> incremental_layout(const DisplayGraph& before,
                                                        const GraphLayout& before_layout,
                                                        const DisplayGraph& now,
                                                        const LayoutOptions& options = {},
                                                        const std::atomic<bool>* cancel = nullptr);

}  // namespace sod2::studio
