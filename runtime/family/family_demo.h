// The Dynamic-OFA demo that `sod2 ofa`, the studio's variants view and the device agent run: inferences back to back for
// a while on a FamilySession, with the manager holding a latency budget or (the baseline) the
// largest variant throughout, optionally while a stand-in CPU load (cpu_load.h) competes for the
// cores; every run becomes a point of a timeline, and the whole a summary.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/family/family_session.h"

namespace sod2::rt {

// Busy threads from start_s to stop_s after the demo starts ("--load 3:8:2").
struct LoadSchedule {
  double start_s = 0, stop_s = 0;
  int threads = 1;
};

// "T0:T1[:THREADS]"; threads default to `default_threads`. Errors name the bad part.
Expected<LoadSchedule> parse_load_schedule(const std::string& text, int default_threads);

struct DemoOptions {
  double duration_s = 10;
  bool managed = true;  // false: the largest variant allowed runs throughout
  std::optional<LoadSchedule> load;
  const std::atomic<bool>* cancel = nullptr;  // stops between runs
};

struct DemoPoint {
  double t_s = 0;  // when the run ended, after the demo started
  int variant = 0;
  double latency_ms = 0;
  double budget_ms = 0;
  bool load_active = false;
  bool switched = false;  // the next run uses another variant
  std::string decision;   // the controller's reason, when it switched
};

struct DemoSummary {
  int64_t runs = 0;
  int64_t within_budget = 0;
  int switches = 0;
  double mean_macs = 0;  // over the runs
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  double runs_per_s = 0;
  std::vector<int64_t> runs_per_variant;  // small to large
  // The same split by whether the load was on.
  int64_t runs_under_load = 0, within_budget_under_load = 0;
  double fraction_within() const { return runs ? static_cast<double>(within_budget) / runs : 0; }
  double fraction_within_under_load() const {
    return runs_under_load ? static_cast<double>(within_budget_under_load) / runs_under_load : 0;
  }
};

struct DemoResult {
  std::vector<DemoPoint> points;
  DemoSummary summary;
  bool cancelled = false;
};

// Runs until duration_s has passed (or cancel). `on_run` sees every point as it happens. Errors:
// a run that fails (the variant named), the load that cannot start.
Expected<DemoResult> run_demo(FamilySession& session, std::span<const Tensor> inputs,
                              const DemoOptions& options,
                              const std::function<void(const DemoPoint&)>& on_run = {});

// The summary of a finished demo's points; `macs` per variant, small to large (what a point's
// variant indexes).
DemoSummary summarize(const std::vector<uint64_t>& macs, const std::vector<DemoPoint>& points);
// The MACs of a session's variants, small to large.
std::vector<uint64_t> variant_macs(const FamilySession& session);

}  // namespace sod2::rt
