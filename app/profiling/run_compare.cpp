#include "app/profiling/run_compare.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace sod2::profiling {

std::vector<GroupDelta> compare_groups(const store::RunRecord& a, const store::RunRecord& b) {
  std::map<std::string, const store::GroupRecord*> in_b;
  for (const store::GroupRecord& g : b.groups) in_b[g.name] = &g;
  std::vector<GroupDelta> rows;
  for (const store::GroupRecord& g : a.groups) {
    GroupDelta d{g.name, g.op_types, g.avg_ms, -1};
    if (auto it = in_b.find(g.name); it != in_b.end()) {
      d.b_ms = it->second->avg_ms;
      in_b.erase(it);
    }
    rows.push_back(d);
  }
  for (const store::GroupRecord& g : b.groups)
    if (in_b.count(g.name)) rows.push_back({g.name, g.op_types, -1, g.avg_ms});
  auto change = [](const GroupDelta& d) {
    return std::abs(std::max(d.b_ms, 0.0) - std::max(d.a_ms, 0.0));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const GroupDelta& x, const GroupDelta& y) { return change(x) > change(y); });
  return rows;
}

}  // namespace sod2::profiling
