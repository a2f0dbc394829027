// The profile store (DESIGN §7): every profiling run, on any device, in one SQLite database —
// devices, models (by content hash), packages, runs with their latencies, per-group timings and
// memory. WAL mode and a busy timeout let the studio and the CLI use it at once; each run is
// written in one transaction, so a crash or a killed agent never leaves half a run behind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status/status.h"

struct sqlite3;

namespace sod2::store {

inline constexpr int kSchemaVersion = 5;

struct DeviceRecord {
  std::string device_id;  // "local", "adb:SERIAL"
  std::string transport;
  std::string model;  // "Pixel 7", or the CPU for local
  std::string cpu, arch, os;
  int64_t cores = 0;
  int64_t memory_bytes = 0;
};

// A node that ran inside an If/Loop/Scan group's body (profiling::BodyNodeProfile, schema 4),
// in the group's depth-first order: a body's nodes in execution order, nested bodies one level
// deeper right after the node holding them.
struct BodyRecord {
  int64_t depth = 1;     // 1: in a body of the group's node; 2: in a body of such a node; ...
  std::string body;      // the attribute holding its graph: "then_branch", "else_branch", "body"
  int64_t graph = 0;     // the package's graph index
  int64_t node = 0;      // in that graph's execution order
  std::string name;      // the body node's name
  std::string op_types;  // "Conv+Relu", as join_names(types, '+') writes them
  double avg_ms = 0;     // per run, over all its calls
  double calls_per_run = 0;
  double percent_of_parent = 0;  // of the node whose body holds it
};

struct GroupRecord {
  int64_t index = 0;              // the compiled node's position in execution order
  std::string name;               // the group's (anchor) node
  std::string op_types;           // "Conv+Add+Relu": join_names(types, '+')
  std::string nodes;              // its graph nodes: join_names(nodes, ',')
  std::string shape;              // its first output's shape in the run
  double avg_ms = 0;              // over the measured runs
  int64_t output_bytes = 0;       // its outputs in the arena
  int64_t ops = -1;               // its operations at the run's sizes; -1: not counted
  double p50_ms = 0, p90_ms = 0;  // over the measured runs (before schema 2: the average)
  // An If/Loop/Scan group's body nodes; none before schema 4.
  std::vector<BodyRecord> body{};
  // `ops` is only the most the group can do (an If, a Loop that can end early: profiling's
  // GroupProfile::ops_bound); false before schema 5.
  bool ops_bound = false;
};

// Several names in one text column (GroupRecord::nodes and op_types, BodyRecord::op_types): a
// backslash or `sep` inside a name is written with a backslash before it and the names are joined
// by `sep`, so any name reads back exactly ("a,b" is one node, not two). A lone backslash at the
// end stands for nothing: a text of just one backslash is one empty name, "" no names. Before
// schema 5 names were joined as they were; the migration to 5 doubled the backslashes of those
// rows, so they read as they did (a name holding `sep` as the two names it was read as then).
std::string join_names(const std::vector<std::string>& names, char sep);
// The names join_names(names, sep) wrote; any text reads as something.
std::vector<std::string> split_names(std::string_view text, char sep);
// The names of `text` joined by `sep` as they are, for a person: "Conv+Relu".
std::string names_label(std::string_view text, char sep);

struct LatencyRecord {
  bool warmup = false;
  double ms = 0;
  int64_t arena_bytes = 0;
  int64_t rss_bytes = 0;
};

struct SensorRecord {
  std::string name;  // "thermal:cpu-0-0" (degrees Celsius), "cpu0 MHz"
  double mean = 0, max = 0;
};

// One window of a sustained run (`sod2 profile --duration`): seconds since its first measured
// run, nearest-rank percentiles over the window's runs, each group's mean time, the agent's
// resident set at its end and the device's sensors over it.
struct WindowRecord {
  double start_s = 0, end_s = 0;
  int64_t runs = 0;
  double min_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  int64_t rss_bytes = 0;
  std::vector<double> group_mean_ms;  // by group index; empty for a window without runs
  std::vector<SensorRecord> sensors;
};

struct RunRecord {
  int64_t id = 0;          // set by record_run
  std::string started_at;  // ISO 8601 UTC; record_run fills it when empty
  DeviceRecord device;
  std::string model_sha256, model_name, model_path;
  std::string package_sha256;
  int64_t package_bytes = 0;
  std::string bindings;  // "batch=1,seq=128"
  int64_t threads = 0, runs = 0, warmup = 0;
  bool ok = false;
  std::string failure;  // why it failed, for a failed run
  std::string host_software, agent_software;
  // Latency statistics over the measured runs (TFLite benchmark_model's).
  double first_ms = 0, warmup_avg_ms = 0, avg_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0;
  int64_t arena_bytes = 0, peak_rss_bytes = 0;
  int64_t plan_version = -1;
  std::vector<LatencyRecord> latencies;  // warm-up runs first
  std::vector<GroupRecord> groups;
  // A point of a measured sweep (0: not one), at this value of the sweep's symbol.
  int64_t sweep_id = 0, sweep_value = 0;
  // The arena the plan lays out at the run's sizes; -1: not predicted. Exact, or with execution
  // symbols at their bounds (the most the run could take).
  int64_t predicted_arena_bytes = -1;
  bool prediction_exact = false;
  // A sustained run: how long it was asked to run, in windows of window_s; its windows (run()
  // only), the sensors the device could not read, and whether it was stopped before the end.
  double duration_s = 0, window_s = 0;
  std::vector<WindowRecord> windows;
  std::vector<std::string> unreadable_sensors;
  bool stopped_early = false;
};

// One package run at each value of one symbol (`sod2 profile --sweep`); its points are runs.
struct SweepRecord {
  int64_t id = 0;          // set by record_sweep
  std::string started_at;  // ISO 8601 UTC; record_sweep fills it when empty
  std::string symbol;      // the swept symbol
  int64_t lo = 0, hi = 0, step = 1;
  std::string held;  // the other symbols, "batch=4"
  // Read back: the model and device of its first point, its points and how many failed.
  std::string model_name, device_id;
  int64_t points = 0, failed = 0;
  std::vector<RunRecord> runs;  // by value, with latencies and groups (sweep() only)
};

struct RunFilter {
  std::string model;   // matches the model's name, path or hash prefix; "" for any
  std::string device;  // a device id; "" for any
  int64_t limit = 50;
};

class ProfileStore {
 public:
  // Opens (creating the file and its folder) and migrates to kSchemaVersion. Errors: not a
  // database, a newer schema than this sod2 knows, a folder that cannot be made.
  static Expected<std::unique_ptr<ProfileStore>> open(const std::string& path);
  // $XDG_DATA_HOME/sod2/profiles.db, else ~/.local/share/sod2/profiles.db.
  static std::string default_path();
  ~ProfileStore();

  // Writes the run, its device, model and package rows, latencies, groups (with their body
  // nodes) and windows in one transaction; returns the run's id.
  Expected<int64_t> record_run(RunRecord run);
  // Newest first; latencies and groups left empty.
  Expected<std::vector<RunRecord>> runs(const RunFilter& filter = {});
  // One run with its latencies and groups (with their body nodes). Errors: no such run.
  Expected<RunRecord> run(int64_t id);
  // A new sweep, before its first point; returns its id for the points' RunRecord::sweep_id.
  Expected<int64_t> record_sweep(SweepRecord sweep);
  // Newest first, without their runs; the filter matches any point's model and device.
  Expected<std::vector<SweepRecord>> sweeps(const RunFilter& filter = {});
  // One sweep with every point's run (latencies and groups). Errors: no such sweep.
  Expected<SweepRecord> sweep(int64_t id);

  int schema_version() const { return version_; }
  const std::string& path() const { return path_; }

 private:
  ProfileStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status migrate();

  sqlite3* db_;
  std::string path_;
  int version_ = 0;
};

}  // namespace sod2::store
