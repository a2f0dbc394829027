#include "app/profiling/run_compare.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

#include "app/profiling/profile_job.h"

namespace sod2::profiling {
namespace {

// Each body node's place: the (body, name) of every node from the group's down to it. A list
// is depth first, so a node's holder is the last one before it a level up.
std::vector<std::vector<std::string>> places(const std::vector<store::BodyRecord>& rows) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> path;  // body, name per level above the current row
  for (const store::BodyRecord& r : rows) {
    const size_t above = 2 * static_cast<size_t>(std::max<int64_t>(r.depth - 1, 0));
    path.resize(above);  // a depth that skips a level (a malformed record) holds "" there
    path.push_back(r.body);
    path.push_back(r.name);
    out.push_back(path);
  }
  return out;
}

}  // namespace

std::vector<BodyDelta> compare_bodies(const std::vector<store::BodyRecord>& a,
                                      const std::vector<store::BodyRecord>& b) {
  std::vector<BodyDelta> rows;
  std::map<std::vector<std::string>, std::deque<size_t>> unpaired;  // place -> A's rows
  const auto a_places = places(a);
  for (size_t i = 0; i < a.size(); ++i) {
    const store::BodyRecord& r = a[i];
    rows.push_back({static_cast<int>(r.depth), r.body, r.name, store::names_label(r.op_types, '+'),
                    r.avg_ms, -1, r.calls_per_run, 0});
    unpaired[a_places[i]].push_back(i);
  }
  const auto b_places = places(b);
  size_t last = rows.size();  // where B's previous node is; rows.size(): none yet
  for (size_t k = 0; k < b.size(); ++k) {
    const store::BodyRecord& r = b[k];
    if (auto it = unpaired.find(b_places[k]); it != unpaired.end() && !it->second.empty()) {
      last = it->second.front();
      it->second.pop_front();
      rows[last].b_ms = r.avg_ms;
      rows[last].b_calls = r.calls_per_run;
      continue;
    }
    // After B's previous node and whatever A nests deeper than this one there, so the list stays
    // depth first: a first child right after its holder, a sibling after the subtree before it.
    size_t at = last == rows.size() ? 0 : last + 1;
    while (at < rows.size() && rows[at].depth > r.depth) ++at;
    rows.insert(rows.begin() + static_cast<std::ptrdiff_t>(at),
                BodyDelta{static_cast<int>(r.depth), r.body, r.name,
                          store::names_label(r.op_types, '+'), -1, r.avg_ms, 0, r.calls_per_run});
    for (auto& [place, waiting] : unpaired)
      for (size_t& i : waiting) i += i >= at;
    last = at;
  }
  return rows;
}

std::vector<GroupDelta> compare_groups(const store::RunRecord& a, const store::RunRecord& b) {
  std::map<std::string, const store::GroupRecord*> in_b;
  for (const store::GroupRecord& g : b.groups) in_b[g.name] = &g;
  std::vector<GroupDelta> rows;
  for (const store::GroupRecord& g : a.groups) {
    GroupDelta d{g.name, store::names_label(g.op_types, '+'), g.avg_ms, -1};
    if (auto it = in_b.find(g.name); it != in_b.end()) {
      d.b_ms = it->second->avg_ms;
      if (!g.body.empty() && !it->second->body.empty())
        d.body = compare_bodies(g.body, it->second->body);
      in_b.erase(it);
    }
    rows.push_back(d);
  }
  for (const store::GroupRecord& g : b.groups)
    if (in_b.count(g.name))
      rows.push_back({g.name, store::names_label(g.op_types, '+'), -1, g.avg_ms});
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
