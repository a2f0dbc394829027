// What a measured sweep looks like (`sod2 profile --sweep`, `sod2 history --sweep`): per point
// the latency percentiles, the work and its rate, the arena the plan predicted beside the one
// the device reported; then the groups whose time grows faster than their operations (they
// scale worse than their work: a kernel falling off the roofline as the size grows).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "app/profiling/profile_sweep.h"

namespace sod2::profiling {

// `top`: how many groups the scaling section lists.
void print_sweep_table(const ProfileSweep& sweep, std::ostream& out, int top = 10);
nlohmann::json sweep_json(const ProfileSweep& sweep);

// A group's time (p50) and work at the sweep's first and last measured points where it ran at
// both.
struct GroupScaling {
  int index = 0;
  std::string name, op_types;
  double first_ms = 0, last_ms = 0;  // p50 over each point's runs
  double last_p90_ms = 0;
  int64_t first_ops = -1, last_ops = -1;  // -1: not counted
  // last/first of its time, and of its operations (0 when not counted); time growing more than
  // 1.25x its work is "worse than its work".
  double time_growth = 0, ops_growth = 0;
  bool worse_than_work = false;
};
// Slowest at the last point first.
std::vector<GroupScaling> group_scaling(const ProfileSweep& sweep);

}  // namespace sod2::profiling
