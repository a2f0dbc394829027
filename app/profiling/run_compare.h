// Two recorded runs group by group (`sod2 history --compare`, the studio's history view), and two
// recorded sweeps point by point (`sod2 history --compare-sweeps`). Groups match by name — their
// anchor node — since recompiling may move them in the order; points match by value. Under a
// control-flow group both runs broke down, the body nodes match by where they sit: depth, body
// attribute and name, and those of the body nodes holding them.
#pragma once

#include <string>
#include <vector>

#include "core/store/profile_store.h"

namespace sod2::profiling {

// One body node of a control-flow group in two runs (store::BodyRecord's fields).
struct BodyDelta {
  int depth = 1;     // 1: in a body of the group's node; 2: in a body of such a node; ...
  std::string body;  // "then_branch", "else_branch", "body"
  std::string name, op_types;
  double a_ms = -1, b_ms = -1;      // per run; -1: the node is not in that run's breakdown
  double a_calls = 0, b_calls = 0;  // calls per run where it is
  bool in_both() const { return a_ms >= 0 && b_ms >= 0; }
  double delta_ms() const { return in_both() ? b_ms - a_ms : 0; }
  // Relative change in percent; 0 when not in both or A took no time.
  double delta_percent() const { return in_both() && a_ms > 0 ? 100.0 * (b_ms - a_ms) / a_ms : 0; }
};

struct GroupDelta {
  std::string name, op_types;
  double a_ms = -1, b_ms = -1;  // -1: the group is not in that run
  // When the group is in both runs and both broke it down (an agent that reports body times):
  // the body nodes of either, depth first as each run lists them, a node of one run only placed
  // after the node that precedes it in that run. Empty otherwise.
  std::vector<BodyDelta> body{};
  bool in_both() const { return a_ms >= 0 && b_ms >= 0; }
  double delta_ms() const { return in_both() ? b_ms - a_ms : 0; }
  // Relative change in percent; 0 when not in both or A took no time.
  double delta_percent() const { return in_both() && a_ms > 0 ? 100.0 * (b_ms - a_ms) / a_ms : 0; }
};

// The body nodes of one group in two runs, as GroupDelta::body lays them out. Nodes whose place
// (depth, body and name, and those of the nodes holding them) repeats pair in order.
std::vector<BodyDelta> compare_bodies(const std::vector<store::BodyRecord>& a,
                                      const std::vector<store::BodyRecord>& b);

// Largest absolute change first (a group in one run only counts its whole time).
std::vector<GroupDelta> compare_groups(const store::RunRecord& a, const store::RunRecord& b);

// One value of the swept symbol in two sweeps: each side's p50 over its measured runs and the
// arena it ran in; -1 where that sweep has no successful run at the value.
struct SweepPointDelta {
  int64_t value = 0;
  double a_p50_ms = -1, b_p50_ms = -1;
  int64_t a_arena = -1, b_arena = -1;
  int64_t a_run = 0, b_run = 0;      // the runs, for a group-by-group --compare
  std::string a_failure, b_failure;  // why a side's point failed
  bool in_both() const { return a_p50_ms >= 0 && b_p50_ms >= 0; }
  double delta_percent() const {
    return in_both() && a_p50_ms > 0 ? 100.0 * (b_p50_ms - a_p50_ms) / a_p50_ms : 0;
  }
};

// By value, every value either sweep measured.
std::vector<SweepPointDelta> compare_sweeps(const store::SweepRecord& a,
                                            const store::SweepRecord& b);

}  // namespace sod2::profiling
