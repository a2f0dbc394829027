// What ran inside a profile's control-flow groups: for each main-graph If, Loop, Scan or
// SequenceMap node, the nodes of its bodies with their time and calls per run, nested bodies
// one level deeper, so a group that takes most of a run is no longer one opaque row.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "plugins/device/agent_client.h"
#include "runtime/program/program.h"

namespace sod2::profiling {

struct BodyNodeProfile {
  int depth = 1;      // 1: in a body of the main-graph node; 2: in a body of such a node; ...
  std::string body;   // the attribute holding its graph: "then_branch", "else_branch", "body"
  int32_t graph = 0;  // ProgramDesc::graphs index
  int32_t node = 0;   // in that graph's execution order
  std::string name;
  std::vector<std::string> op_types;  // one for an unfused node
  double avg_ms = 0;                  // per run, over all its calls
  double calls_per_run = 0;           // iterations of a loop; below 1 for a branch taken sometimes
  double percent_of_parent = 0;       // of the node whose body holds it
  std::string op_label() const;       // "Conv+Relu"
};

// Summed times per body graph and node ([g][n]; [0], the main graph, is not read), as a
// session's NodeTimes holds them.
struct BodyTimes {
  std::vector<std::vector<double>> total_ms;
  std::vector<std::vector<int64_t>> calls;
};

// The body attribute of `parent`'s i-th subgraph: If's then_branch/else_branch, else "body".
std::string body_name(const rt::NodeDesc& parent, size_t i);

// Per main-graph node, the body nodes that ran under it over `runs` runs, depth first: each
// body in the node's subgraph order, its nodes in execution order, each node's own bodies right
// after it. A node that never ran (an untaken branch) is left out. `parent_ms[i]`: main-graph
// node i's time per run, what depth-1 percentages are of.
std::vector<std::vector<BodyNodeProfile>> body_profiles(const rt::ProgramDesc& program,
                                                        const BodyTimes& times, int64_t runs,
                                                        std::span<const double> parent_ms);

// The device's body-node times laid out as BodyTimes of `program`. Errors: a node the program
// does not have, a negative or non-finite time (the client checks these against the package; a
// report made elsewhere may not have been).
Expected<BodyTimes> body_times_of(const rt::ProgramDesc& program,
                                  std::span<const device::BodyNodeTime> nodes);

}  // namespace sod2::profiling
