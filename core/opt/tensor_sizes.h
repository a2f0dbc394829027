// Which values the arena holds and how many bytes each needs, as SymExprs (DESIGN §5).
//
// The arena holds every tensor the runtime materialises in the main graph except graph inputs
// (the caller owns them) and initializers (mapped from the package); graph outputs live in it.
// Decisions and limits, each for a reason:
//  - A `Constant` node's output is not in the arena: its bytes are known when the package is
//    written, so it is stored and mapped exactly like an initializer. A Constant that is itself a
//    graph output is the exception: outputs are views into the arena.
//  - Only the main graph is planned. Values inside If/Loop/Scan bodies are allocated by the
//    runtime when the body runs; the If/Loop node's own outputs are in the arena like any other.
//  - With fusion, a value that stays inside its fused group (fusion.h) is never materialised:
//    only a group's outputs are in the arena.
//  - A view shares its input's bytes: the output of an unfused Reshape, Flatten, Squeeze,
//    Unsqueeze, Identity or Dropout that cannot drop (runtime/program/byte_views.h) whose input
//    is an arena tensor is that tensor under another shape: it is listed in the tensor's `views`
//    and lengthens its lifetime instead of getting bytes of its own, so the op copies nothing.
//    Every other op's output gets its own bytes (in-place reuse by elementwise ops is a later
//    optimisation).
//  - A value whose size RDP could not express (an unknown dim, a sequence, a string tensor) is
//    left out and listed with the reason, so a report shows it instead of failing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/opt/fusion.h"
#include "core/rdp/rdp.h"
#include "core/sym/sym_expr.h"

namespace sod2::opt {

struct ArenaTensor {
  ValueId value = kNoValue;
  std::string name;
  NodeId producer = kNoNode;
  sym::SymExpr bytes;         // numel * element size, aligned up to kTensorAlignment
  bool graph_output = false;  // `value` or one of `views` is a graph output
  // Values that hold these same bytes under another shape (see above), in node order: each is
  // made by its producer from `value` or from an earlier view.
  std::vector<ValueId> views;
};

// A value the runtime materialises but the arena cannot hold, and why.
struct OffArenaValue {
  ValueId value = kNoValue;
  std::string name;
  std::string reason;
};

struct TensorSet {
  std::vector<ArenaTensor> tensors;  // in node order, then output order
  std::vector<OffArenaValue> off_arena;
  int32_t package_constants = 0;  // Constant outputs kept in the package
  int32_t fused_values = 0;       // values kept inside a fused group
  // Index into `tensors` per ValueId of the graph (a view's is its tensor's); -1 for values the
  // arena does not hold.
  std::vector<int32_t> index_of_value;

  int32_t index_of(ValueId v) const {
    return v >= 0 && static_cast<size_t>(v) < index_of_value.size()
               ? index_of_value[static_cast<size_t>(v)]
               : -1;
  }
  // Whether `v` is the value that writes tensor `index_of(v)` (not a view of it).
  bool writes_tensor(ValueId v) const {
    const int32_t t = index_of(v);
    return t >= 0 && tensors[static_cast<size_t>(t)].value == v;
  }
};

// 64 * floordiv(bytes + 63, 64): the canonical spelling, which the simplifier folds to `bytes`
// whenever the ranges prove 64 divides it.
sym::SymExpr align_bytes(const sym::SymExpr& bytes);

// The arena's tensors of `graph` (the model's main graph) with their sizes simplified under the
// RDP ranges; with `fusion`, only the values its groups materialise. Never fails: what cannot be
// sized goes to off_arena.
TensorSet arena_tensors(const Graph& graph, const RdpResult& rdp,
                        const FusionPlan* fusion = nullptr);

}  // namespace sod2::opt
