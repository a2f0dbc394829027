// The frames drawn around what is shown together (DESIGN §8): an open fused group, an open shape
// computation, an open name scope, an open If/Loop/Scan body. One computation for the view,
// which draws them, and the incremental layout, which keeps nodes out of frames they are not
// in. No Qt.
#pragma once

#include <string>
#include <vector>

#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_layout.h"

namespace sod2::studio {

struct FrameRect {
  double left = 0, top = 0, right = 0, bottom = 0;
};

// What a frame adds around what it holds: its title above, a margin on the other sides.
inline constexpr double kFrameSide = 8, kFrameTop = 18, kFrameBottom = 8;

// The frame drawn around `members`: what an enclosing frame must hold.
inline FrameRect framed(const FrameRect& members) {
  return {members.left - kFrameSide, members.top - kFrameTop, members.right + kFrameSide,
          members.bottom + kFrameBottom};
}

enum class DisplayFrameKind { kFusedGroup, kShapes, kScope, kBody };

struct DisplayFrame {
  DisplayFrameKind kind = DisplayFrameKind::kScope;
  // The fused group, the shape cluster, the scope (GraphHierarchy id) or the If/Loop/Scan's
  // display id.
  int target = -1;
  // The group's op types ("Conv+Relu"), "shape computation", the scope's path, or "body of
  // node".
  std::string title;
  FrameRect members;       // around the nodes it holds (a scope: and its inner scopes' frames)
  std::vector<int> nodes;  // display ids of the nodes it holds (a scope: at any depth)
};

// Every frame of `graph` drawn with `boxes` (per display node): fused groups with >= 2 members
// shown, then shape computations, then open scopes (in open_scopes order: a parent before its
// children), then open bodies.
std::vector<DisplayFrame> display_frames(const DisplayGraph& graph,
                                         const std::vector<NodeBox>& boxes);

}  // namespace sod2::studio
