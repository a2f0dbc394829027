// What a session proves about a program before it runs any of it (DESIGN §6, untrusted
// packages): the dataflow is sound, and, at every binding it instantiates, the memory plan's
// layout keeps the rules the compiler keeps (runtime/program/plan_layout.h).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program.h"

namespace sod2::rt {

// When each arena tensor holds bytes, over the main graph's nodes as steps.
struct ArenaLifetimes {
  std::vector<plan::Lifetime> life;  // per arena tensor
  std::vector<char> used;            // per arena tensor: some node writes it
  std::vector<int32_t> value;        // per arena tensor: the main-graph value that writes it, or -1
  // Per arena tensor: the main-graph values that are views of it (byte_views.h), in step order.
  std::vector<std::vector<int32_t>> views;
};

// Proves, for every graph: each value is written by at most one node, and only values the
// executor places (arena or heap) are written; every arena or heap value a node reads is written
// by an earlier node of its graph; every graph output is written or given; each arena tensor
// belongs to one value, and besides it only to views of it that byte-keeping ops make
// (byte_views.h). Then derives the arena tensors' lifetimes by the compiler's rule (producer to
// the last reader of the value or of a view, reads inside bodies counted at their control-flow
// node, graph outputs to the last step). Errors name the graph, node and value.
Expected<ArenaLifetimes> check_program_dataflow(const ProgramDesc& program);

}  // namespace sod2::rt
