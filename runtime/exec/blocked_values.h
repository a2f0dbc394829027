// Which main-graph values a session holds channel-blocked (kernel.h, BlockedIo).
//
// A value is held blocked when its producer can write it so (as its output 0), every node that
// reads it can take it so in that slot, and nothing else sees its bytes: it is not a graph output
// (callers get NCHW), not read by a control-flow body, and not a graph input or a constant. Tied
// slots (a residual and the output it is added to, a pool's input and output) must agree; where
// they do not, both become plain, until nothing changes (each step only turns values plain, so it
// ends); an output that follows its inputs (an elementwise op's) is plain where all of them
// are. A value whose channels are not known to fill whole blocks (its producer's, or, through a
// tied or followed output, its inputs') may end in a narrow block: it is held blocked only where
// its producer and every reader take that too. Values that go blocked in a chain of convolutions
// then pass between them with no conversion at all.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/program/program.h"

namespace sod2::rt {

// Per value of `graph` (the main graph): 1 where it is held blocked, `block` channels per block.
// `io[n]` is what node n's kernel offered (empty for control-flow nodes); `read_by_bodies[v]`
// marks values a nested graph reads through an outer-scope reference.
std::vector<char> choose_blocked_values(const GraphDesc& graph, std::span<const BlockedIo> io,
                                        std::span<const char> read_by_bodies, int block);

// Node n's share of the choice: its input slots held blocked, and whether its output 0 is.
struct NodeBlocked {
  uint64_t inputs = 0;
  bool output = false;
  bool any() const { return inputs != 0 || output; }
};
NodeBlocked node_blocked(const NodeDesc& node, std::span<const char> blocked);

// oneDNN's name of the layout with `block` channels per block ("nChw16c"), as tools show it.
inline std::string blocked_layout_name(int block) { return "nChw" + std::to_string(block) + "c"; }

}  // namespace sod2::rt
