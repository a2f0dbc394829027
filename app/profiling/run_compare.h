// Two recorded runs group by group (`sod2 history --compare`, the studio's history view). Groups
// match by name — their anchor node — since recompiling may move them in the order.
#pragma once

#include <string>
#include <vector>

#include "core/store/profile_store.h"

namespace sod2::profiling {

struct GroupDelta {
  std::string name, op_types;
  double a_ms = -1, b_ms = -1;  // -1: the group is not in that run
  bool in_both() const { return a_ms >= 0 && b_ms >= 0; }
  double delta_ms() const { return in_both() ? b_ms - a_ms : 0; }
  // Relative change in percent; 0 when not in both or A took no time.
  double delta_percent() const { return in_both() && a_ms > 0 ? 100.0 * (b_ms - a_ms) / a_ms : 0; }
};

// Largest absolute change first (a group in one run only counts its whole time).
std::vector<GroupDelta> compare_groups(const store::RunRecord& a, const store::RunRecord& b);

}  // namespace sod2::profiling
