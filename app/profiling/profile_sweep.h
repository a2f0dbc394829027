// A measured sweep (`sod2 profile --sweep`): one package sent once and run by one agent at each
// value of one input symbol, the others held. Each point records the latency percentiles, every
// group's time and operations, and both the arena the plan predicted there and the one the
// device reported; each is a run in the profile store, tied to the sweep. A point that fails (out
// of memory, an assumption broken, the agent ending) is kept with its reason, and the sweep goes
// on with a restarted agent.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/profiling/profile_job.h"
#include "core/status/status.h"
#include "core/store/profile_store.h"

namespace sod2::profiling {

struct SweepProfileRequest {
  ProfileRequest profile;  // profile.bind: every input symbol but the swept one
  std::string symbol;
  // As pipeline::SweepRequest: absent ends are the symbol's range's, an absent step its
  // multiple, or, over the whole range, a step giving at most max_points points.
  std::optional<int64_t> lo, hi, step;
  int64_t max_points = 16;
};

struct MeasuredPoint {
  int64_t value = 0;
  std::optional<ProfileResult> result;  // absent: `error` says why the point failed
  std::string error;
  int64_t predicted_arena_bytes = -1;  // the plan's arena there; -1 when it has none
};

struct ProfileSweep {
  std::string symbol;
  int64_t lo = 0, hi = 0, step = 1;
  std::map<std::string, int64_t> held;
  std::vector<MeasuredPoint> points;
  int64_t sweep_id = 0;  // in the store; 0 when not recorded
  std::string db_path;
  size_t failed = 0;
  // Measured points whose device arena differs from the plan's prediction (the plan shown is
  // not the plan run there: a bug to report).
  size_t arena_mismatches = 0;
};

// Errors (before any point runs): the symbol is not an input symbol of the program (the message
// lists them), another input symbol is not bound, the values leave its range, compiling, the
// store, or reaching the device. `on_point` sees each point as it is measured.
Expected<ProfileSweep> profile_sweep(
    const SweepProfileRequest& request, const ProfileProgress& progress = {},
    const std::function<void(const MeasuredPoint&)>& on_point = {});

// A recorded sweep as the profile job made it (latency percentiles from each run's recorded
// latencies, groups with their recorded operations), for `sod2 history --sweep ID` and the
// studio's Sweep view.
ProfileSweep sweep_from_record(const store::SweepRecord& record);

// The hex SHA-256 of a model file, as the store keys models. Errors: the file cannot be read.
Expected<std::string> model_file_sha256(const std::string& model_path);

// The newest sweep in the store at `db_path` of the model with this content hash (so an edited
// file's old measurements are not shown as its own) over `symbol` with exactly these held
// values; nullopt when there is none. Errors: the store, a hash that is not one.
Expected<std::optional<ProfileSweep>> latest_recorded_sweep(
    const std::string& db_path, const std::string& model_sha256, const std::string& symbol,
    const std::map<std::string, int64_t>& held);

}  // namespace sod2::profiling
