#include "app/profiling/run_compare.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "app/profiling/profile_job.h"

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

std::vector<SweepPointDelta> compare_sweeps(const store::SweepRecord& a,
                                            const store::SweepRecord& b) {
  std::map<int64_t, SweepPointDelta> by_value;
  auto fill = [&](const store::SweepRecord& w, bool is_a) {
    for (const store::RunRecord& r : w.runs) {
      SweepPointDelta& d = by_value[r.sweep_value];
      d.value = r.sweep_value;
      if (!r.ok) {
        (is_a ? d.a_failure : d.b_failure) = r.failure;
        continue;
      }
      std::vector<double> measured;
      for (const store::LatencyRecord& l : r.latencies)
        if (!l.warmup) measured.push_back(l.ms);
      // A run recorded without its latencies (none measured) falls back to its average.
      const double p50 = measured.empty() ? r.avg_ms : percentile(std::move(measured), 0.5);
      (is_a ? d.a_p50_ms : d.b_p50_ms) = p50;
      (is_a ? d.a_arena : d.b_arena) = r.arena_bytes;
      (is_a ? d.a_run : d.b_run) = r.id;
    }
  };
  fill(a, true);
  fill(b, false);
  std::vector<SweepPointDelta> out;
  for (auto& [v, d] : by_value) out.push_back(std::move(d));
  return out;
}

}  // namespace sod2::profiling
