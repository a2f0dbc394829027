// A sustained run as a person reads it (`sod2 profile --duration`, `sod2 history --windows`):
// per window of time the latency percentiles, the agent's resident set, the hottest thermal zone
// and the CPUs' frequencies; then the first window (the cold start) beside the last, with the
// groups that slowed most between them, and what the device would not let the agent read.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app/profiling/profile_job.h"
#include "core/store/profile_store.h"

namespace sod2::profiling {

struct SustainedRun {
  int64_t run_id = 0;
  double duration_s = 0, window_s = 0;
  bool stopped_early = false;
  std::vector<store::WindowRecord> windows;
  std::vector<std::string> unreadable_sensors;
  std::vector<std::string> group_labels;  // by group index: "Conv+Relu /layer1/conv"

  int64_t total_runs() const;
  // The first and the last window that ran anything: the cold start and where the run ended up;
  // both null with fewer than two such windows.
  std::pair<const store::WindowRecord*, const store::WindowRecord*> cold_and_last() const;
};

store::WindowRecord window_record(const device::SustainedWindow& w);
SustainedRun sustained_from(const ProfileResult& result);
SustainedRun sustained_from(const store::RunRecord& run);

// The hottest thermal zone and the CPUs' frequencies in one window; a name is empty, and a
// value 0, when the device reported none.
struct WindowSensors {
  std::string hottest;
  double hottest_max_c = 0, hottest_mean_c = 0;
  int cpus = 0;
  double cpu_mean_mhz = 0, cpu_min_mhz = 0, cpu_max_mhz = 0;  // over the CPUs' window means
};
WindowSensors window_sensors(const store::WindowRecord& w);

// A group's mean time in the first window with runs and in the last.
struct GroupDrift {
  int index = 0;
  std::string label;
  double first_ms = 0, last_ms = 0;
  double delta_ms() const { return last_ms - first_ms; }
};
// Largest slowdown first; empty with fewer than two windows with runs.
std::vector<GroupDrift> group_drift(const SustainedRun& run);

// `top`: how many groups the drift section lists.
void print_sustained_table(const SustainedRun& run, std::ostream& out, int top = 5);
nlohmann::json sustained_json(const SustainedRun& run);

}  // namespace sod2::profiling
