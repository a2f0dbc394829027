// The profile store (DESIGN §7): every profiling run, on any device, in one SQLite database —
// devices, models (by content hash), packages, runs with their latencies, per-group timings and
// memory. WAL mode and a busy timeout let the studio and the CLI use it at once; each run is
// written in one transaction, so a crash or a killed agent never leaves half a run behind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status/status.h"

struct sqlite3;

namespace sod2::store {

inline constexpr int kSchemaVersion = 1;

struct DeviceRecord {
  std::string device_id;  // "local", "adb:SERIAL"
  std::string transport;
  std::string model;  // "Pixel 7", or the CPU for local
  std::string cpu, arch, os;
  int64_t cores = 0;
  int64_t memory_bytes = 0;
};

struct GroupRecord {
  int64_t index = 0;         // the compiled node's position in execution order
  std::string name;          // the group's (anchor) node
  std::string op_types;      // "Conv+Add+Relu"
  std::string nodes;         // its graph nodes, comma-separated
  std::string shape;         // its first output's shape in the run
  double avg_ms = 0;         // over the measured runs
  int64_t output_bytes = 0;  // its outputs in the arena
};

struct LatencyRecord {
  bool warmup = false;
  double ms = 0;
  int64_t arena_bytes = 0;
  int64_t rss_bytes = 0;
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

  // Writes the run, its device, model and package rows, latencies and groups in one
  // transaction; returns the run's id.
  Expected<int64_t> record_run(RunRecord run);
  // Newest first; latencies and groups left empty.
  Expected<std::vector<RunRecord>> runs(const RunFilter& filter = {});
  // One run with its latencies and groups. Errors: no such run.
  Expected<RunRecord> run(int64_t id);

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
