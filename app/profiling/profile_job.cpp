#include "app/profiling/profile_job.h"

#include <algorithm>
#include <cmath>

#include "app/profiling/profile_connection.h"
#include "app/profiling/run_inputs.h"
#include "runtime/exec/nearest_rank.h"

namespace sod2::profiling {

std::string GroupProfile::op_label() const {
  std::string s;
  for (const std::string& t : op_types) s += (s.empty() ? "" : "+") + t;
  return s;
}

bool GroupProfile::ops_are_bound() const {
  return ops_bound || std::find(op_types.begin(), op_types.end(), "If") != op_types.end();
}

bool ProfileResult::counted_ops_at_most() const {
  return ops_at_most || std::any_of(groups.begin(), groups.end(), [](const GroupProfile& g) {
           return g.ops >= 0 && g.ops_are_bound();
         });
}

int64_t ProfileResult::counted_ops(size_t* uncounted) const {
  int64_t sum = 0;
  size_t counted = 0;
  for (const GroupProfile& g : groups) {
    if (g.ops < 0) continue;
    sum += g.ops;
    ++counted;
  }
  if (uncounted) *uncounted = groups.size() - counted;
  return counted > 0 ? sum : -1;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return rt::nearest_rank<double>(values, q);
}

void set_time_shares(std::vector<GroupProfile>& groups) {
  double total = 0;
  for (const GroupProfile& g : groups) total += g.avg_ms;
  double cum = 0;
  for (GroupProfile& g : groups) {
    g.percent = total > 0 ? 100.0 * g.avg_ms / total : 0;
    cum += g.percent;
    g.cumulative_percent = cum;
  }
}

LatencyStats latency_stats(const std::vector<device::RunSample>& runs) {
  LatencyStats s;
  int warm = 0;
  double sum = 0, sq = 0;
  bool first = true;
  std::vector<double> measured;
  for (const device::RunSample& r : runs) {
    if (first) s.first_ms = r.latency_ms;
    first = false;
    if (r.warmup) {
      s.warmup_avg_ms += r.latency_ms;
      ++warm;
      continue;
    }
    if (s.count == 0 || r.latency_ms < s.min_ms) s.min_ms = r.latency_ms;
    if (s.count == 0 || r.latency_ms > s.max_ms) s.max_ms = r.latency_ms;
    ++s.count;
    sum += r.latency_ms;
    sq += r.latency_ms * r.latency_ms;
    measured.push_back(r.latency_ms);
  }
  if (warm > 0) s.warmup_avg_ms /= warm;
  if (s.count > 0) {
    s.avg_ms = sum / s.count;
    s.std_ms = std::sqrt(std::max(0.0, sq / s.count - s.avg_ms * s.avg_ms));
    s.p50_ms = percentile(measured, 0.5);
    s.p90_ms = percentile(measured, 0.9);
  }
  return s;
}

Expected<ProfileResult> profile(const ProfileRequest& r, const ProfileProgress& progress) {
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<ProfileConnection> connection,
                        ProfileConnection::open(r, true, progress, 0, 0.35));
  SOD2_ASSIGN_OR_RETURN(ProfileResult res,
                        connection->measure(connection->bind(), {}, progress, 0.35, 0.97));
  if (progress.report) progress.report("done", 1.0);
  return res;
}

}  // namespace sod2::profiling
