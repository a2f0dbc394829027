// The plan that runs, as a curve of one input symbol: the compiled model's plan instantiated
// at each value (pipeline::plan_at, the layout a session runs there), the other symbols held.
// `sod2 sweep` prints it and the studio's Sweep view draws it.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/opt/memory_plan.h"
#include "core/pipeline/compiled_model.h"
#include "core/status/status.h"

namespace sod2::pipeline {

struct SweepRequest {
  std::string symbol;  // an input symbol of the model
  // Its values lo, lo + step, ... <= hi; lo and hi absent: its range's ends and a step on its
  // multiple that gives at most `max_points` points; the step alone absent: its multiple.
  std::optional<int64_t> lo, hi, step;
  int64_t max_points = 64;
  // The other symbols (execution symbols optional); input symbols left out take the top of
  // their range.
  std::map<std::string, int64_t> held;
  bool greedy_yardstick = false;  // also place each point greedy by size (greedy_bytes)
  // Also each fused group's operations and bytes moved at every point (opt::group_ops,
  // opt::group_bytes over compiled.plan.fusion.groups): per-group curves.
  bool per_group = false;
};

struct SweepPoint {
  int64_t value = 0;
  std::optional<opt::PlanAtBinding> at;  // absent: `error` says why the point cannot be planned
  std::string error;
  // The model's operations there (CompiledModel::work, execution symbols as `at` sizes them);
  // absent when not planned or not countable.
  std::optional<int64_t> ops;
  // With SweepRequest::per_group, per group of compiled.plan.fusion (-1: not countable there).
  std::vector<int64_t> group_ops, group_bytes;
};

struct PlanSweep {
  std::string symbol;
  int64_t lo = 0, hi = 0, step = 1;
  std::map<std::string, int64_t> held;  // every other input symbol's value
  std::vector<SweepPoint> points;
  struct Change {
    int64_t at;
    int32_t from, to;  // versions (plan::version_text)
  };
  std::vector<Change> changes;  // where the layout that runs changes
  size_t failed = 0;
  double worst_ratio = 0;  // arena / lower bound
  int64_t worst_at = 0;
  double sweep_ms = 0;
};

// The values a sweep of one symbol visits, lo, lo + step, ... <= hi (see SweepRequest for the
// defaults), whether it is planned here or measured on a device (app/profiling/profile_sweep.h).
struct SweepValues {
  int64_t lo = 0, hi = 0, step = 1;
};
// `range_*`: the symbol's declared range and multiple. Errors: values outside the range (named,
// with how to widen it), a step below 1, more than 100,000 points.
Expected<SweepValues> sweep_values(const std::string& symbol, int64_t range_lo, int64_t range_hi,
                                   int64_t multiple, const SweepRequest& request);

// Errors: the symbol is not an input symbol of the model (the message lists them), the values
// leave its range, both swept and held, more than 100,000 points, or `cancel` set. A point that
// cannot be planned is part of the sweep, with its reason.
Expected<PlanSweep> sweep_plan(const CompiledModel& compiled, const SweepRequest& request,
                               const std::atomic<bool>* cancel = nullptr);

}  // namespace sod2::pipeline
