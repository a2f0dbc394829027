#include "core/store/profile_store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace sod2::store {
namespace {

// Migration i takes the schema from version i to i + 1. Appending is the only allowed change:
// a database records how far it went in PRAGMA user_version.
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE devices(
  id INTEGER PRIMARY KEY,
  device_id TEXT NOT NULL UNIQUE,
  transport TEXT NOT NULL,
  model TEXT, cpu TEXT, arch TEXT, os TEXT,
  cores INTEGER, memory_bytes INTEGER,
  first_seen TEXT NOT NULL, last_seen TEXT NOT NULL);
CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE,
  name TEXT, path TEXT);
CREATE TABLE packages(
  id INTEGER PRIMARY KEY,
  sha256 TEXT NOT NULL UNIQUE,
  model_id INTEGER NOT NULL REFERENCES models(id),
  bytes INTEGER NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  device_id INTEGER NOT NULL REFERENCES devices(id),
  model_id INTEGER NOT NULL REFERENCES models(id),
  package_id INTEGER REFERENCES packages(id),
  bindings TEXT NOT NULL, threads INTEGER, runs INTEGER, warmup INTEGER,
  status TEXT NOT NULL CHECK(status IN ('ok', 'failed')),
  failure TEXT,
  host_software TEXT, agent_software TEXT,
  first_ms REAL, warmup_avg_ms REAL, avg_ms REAL, std_ms REAL, min_ms REAL, max_ms REAL,
  arena_bytes INTEGER, peak_rss_bytes INTEGER, plan_version INTEGER);
CREATE INDEX runs_by_model ON runs(model_id, started_at);
CREATE INDEX runs_by_device ON runs(device_id, started_at);
CREATE TABLE run_latencies(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  warmup INTEGER NOT NULL,
  latency_ms REAL NOT NULL,
  arena_bytes INTEGER, rss_bytes INTEGER,
  PRIMARY KEY(run_id, idx));
CREATE TABLE group_timings(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  group_index INTEGER NOT NULL,
  name TEXT, op_types TEXT, nodes TEXT, shape TEXT,
  avg_ms REAL NOT NULL, output_bytes INTEGER,
  PRIMARY KEY(run_id, group_index));
)sql",
    // 2: measured sweeps (one package run at each value of one symbol), the arena the plan
    // predicted for each run, and each group's operations.
    R"sql(
CREATE TABLE sweeps(
  id INTEGER PRIMARY KEY,
  started_at TEXT NOT NULL,
  symbol TEXT NOT NULL,
  lo INTEGER NOT NULL, hi INTEGER NOT NULL, step INTEGER NOT NULL,
  held TEXT NOT NULL);
ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id);
ALTER TABLE runs ADD COLUMN sweep_value INTEGER;
ALTER TABLE runs ADD COLUMN predicted_arena_bytes INTEGER;
ALTER TABLE runs ADD COLUMN prediction_exact INTEGER;
ALTER TABLE group_timings ADD COLUMN ops INTEGER;
ALTER TABLE group_timings ADD COLUMN p50_ms REAL;
ALTER TABLE group_timings ADD COLUMN p90_ms REAL;
CREATE INDEX runs_by_sweep ON runs(sweep_id, sweep_value);
)sql",
    // 3: sustained runs (latency, memory and the device's sensors per window of time).
    R"sql(
ALTER TABLE runs ADD COLUMN duration_s REAL;
ALTER TABLE runs ADD COLUMN window_s REAL;
ALTER TABLE runs ADD COLUMN unreadable_sensors TEXT;
ALTER TABLE runs ADD COLUMN stopped_early INTEGER;
CREATE TABLE run_windows(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  start_s REAL NOT NULL, end_s REAL NOT NULL, runs INTEGER NOT NULL,
  min_ms REAL, p50_ms REAL, p90_ms REAL, p99_ms REAL, max_ms REAL, mean_ms REAL,
  rss_bytes INTEGER,
  PRIMARY KEY(run_id, idx));
CREATE TABLE window_groups(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  group_index INTEGER NOT NULL,
  mean_ms REAL NOT NULL,
  PRIMARY KEY(run_id, idx, group_index));
CREATE TABLE window_sensors(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  mean REAL NOT NULL, max REAL NOT NULL,
  PRIMARY KEY(run_id, idx, name));
)sql",
    // 4: what ran inside If/Loop/Scan groups: their body nodes, depth first (idx) per group.
    R"sql(
CREATE TABLE group_bodies(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  group_index INTEGER NOT NULL,
  idx INTEGER NOT NULL,
  depth INTEGER NOT NULL,
  body TEXT NOT NULL,
  graph INTEGER NOT NULL, node INTEGER NOT NULL,
  name TEXT, op_types TEXT,
  avg_ms REAL NOT NULL, calls_per_run REAL NOT NULL, percent_of_parent REAL NOT NULL,
  PRIMARY KEY(run_id, group_index, idx));
)sql",
    // 5: lists of names escaped (join_names): the backslashes of the rows before are doubled so
    // that they read as they did; and whether a group's operations are only a bound.
    R"sql(
UPDATE group_timings SET nodes = replace(nodes, '\', '\\'),
  op_types = replace(op_types, '\', '\\');
UPDATE group_bodies SET op_types = replace(op_types, '\', '\\');
ALTER TABLE group_timings ADD COLUMN ops_bound INTEGER;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

Status db_error(sqlite3* db, const std::string& what) {
  return io_error(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

Status exec(sqlite3* db, const char* sql, const std::string& what) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string m = err ? err : "unknown error";
    sqlite3_free(err);
    return io_error(what + ": " + m);
  }
  return Status::ok_status();
}

// A prepared statement, finalized on scope exit; bind() takes values in order.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) s_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(s_); }
  bool ok() const { return s_ != nullptr; }
  Stmt& bind(int64_t v) {
    sqlite3_bind_int64(s_, ++n_, v);
    return *this;
  }
  Stmt& bind(double v) {
    sqlite3_bind_double(s_, ++n_, v);
    return *this;
  }
  Stmt& bind(const std::string& v) {
    sqlite3_bind_text(s_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind_null() {
    sqlite3_bind_null(s_, ++n_);
    return *this;
  }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(s_); }
  // For the next row of a statement executed many times: bind() starts at the first value again.
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
    n_ = 0;
  }
  int64_t i(int c) const { return sqlite3_column_int64(s_, c); }
  double d(int c) const { return sqlite3_column_double(s_, c); }
  // All the column's bytes: a name from a model may hold a NUL.
  std::string t(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(s_, c)))
             : std::string();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* s_ = nullptr;
  int n_ = 0;
};

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Runs `sql` (binding `args`) expecting SQLITE_DONE.
template <typename... Args>
Status run_sql(sqlite3* db, const char* sql, const std::string& what, const Args&... args) {
  Stmt s(db, sql);
  if (!s.ok()) return db_error(db, what);
  (s.bind(args), ...);
  if (s.step() != SQLITE_DONE) return db_error(db, what);
  return Status::ok_status();
}

Expected<int64_t> id_of(sqlite3* db, const char* sql, const std::string& key,
                        const std::string& what) {
  Stmt s(db, sql);
  if (!s.ok()) return db_error(db, what);
  s.bind(key);
  if (s.step() != SQLITE_ROW) return db_error(db, what);
  return s.i(0);
}

// Rolls back unless committed: an error anywhere in a run's writes leaves no trace of it.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : db_(db) {}
  Status begin() { return exec(db_, "BEGIN IMMEDIATE", "starting a transaction"); }
  Status commit() {
    SOD2_RETURN_IF_ERROR(exec(db_, "COMMIT", "committing the run"));
    done_ = true;
    return Status::ok_status();
  }
  ~Transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  sqlite3* db_;
  bool done_ = false;
};

Status record_bodies(sqlite3* db, int64_t run, const GroupRecord& g) {
  // A Loop's body can hold hundreds of nodes: one statement serves them all.
  Stmt s(db,
         "INSERT INTO group_bodies(run_id, group_index, idx, depth, body, graph, node, name, "
         "op_types, avg_ms, calls_per_run, percent_of_parent) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, "
         "?, ?, ?)");
  if (!g.body.empty() && !s.ok()) return db_error(db, "recording the groups' body nodes");
  for (size_t i = 0; i < g.body.size(); ++i) {
    const BodyRecord& b = g.body[i];
    s.reset();
    s.bind(run).bind(g.index).bind(static_cast<int64_t>(i)).bind(b.depth).bind(b.body);
    s.bind(b.graph).bind(b.node).bind(b.name).bind(b.op_types);
    s.bind(b.avg_ms).bind(b.calls_per_run).bind(b.percent_of_parent);
    if (s.step() != SQLITE_DONE) return db_error(db, "recording the groups' body nodes");
  }
  return Status::ok_status();
}

Status record_windows(sqlite3* db, int64_t run, const std::vector<WindowRecord>& windows) {
  // A long run has windows x groups rows: one statement serves them all.
  Stmt group(db, "INSERT INTO window_groups(run_id, idx, group_index, mean_ms) VALUES(?, ?, ?, ?)");
  if (!windows.empty() && !group.ok()) return db_error(db, "recording the windows' groups");
  for (size_t i = 0; i < windows.size(); ++i) {
    const WindowRecord& w = windows[i];
    const auto idx = static_cast<int64_t>(i);
    SOD2_RETURN_IF_ERROR(run_sql(db,
                                 "INSERT INTO run_windows(run_id, idx, start_s, end_s, runs, "
                                 "min_ms, p50_ms, p90_ms, p99_ms, max_ms, mean_ms, rss_bytes) "
                                 "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 "recording the windows", run, idx, w.start_s, w.end_s, w.runs,
                                 w.min_ms, w.p50_ms, w.p90_ms, w.p99_ms, w.max_ms, w.mean_ms,
                                 w.rss_bytes));
    for (size_t g = 0; g < w.group_mean_ms.size(); ++g) {
      group.reset();
      group.bind(run).bind(idx).bind(static_cast<int64_t>(g)).bind(w.group_mean_ms[g]);
      if (group.step() != SQLITE_DONE) return db_error(db, "recording the windows' groups");
    }
    for (const SensorRecord& sensor : w.sensors) {
      SOD2_RETURN_IF_ERROR(run_sql(db,
                                   "INSERT INTO window_sensors(run_id, idx, name, mean, max) "
                                   "VALUES(?, ?, ?, ?, ?)",
                                   "recording the windows' sensors", run, idx, sensor.name,
                                   sensor.mean, sensor.max));
    }
  }
  return Status::ok_status();
}

}  // namespace

std::string join_names(const std::vector<std::string>& names, char sep) {
  if (names.size() == 1 && names[0].empty()) return "\\";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += sep;
    for (char c : names[i]) {
      if (c == '\\' || c == sep) out += '\\';
      out += c;
    }
  }
  return out;
}

std::vector<std::string> split_names(std::string_view text, char sep) {
  std::vector<std::string> out;
  if (text.empty()) return out;
  out.emplace_back();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      if (++i < text.size()) out.back() += text[i];  // a lone one at the end: nothing
    } else if (text[i] == sep) {
      out.emplace_back();
    } else {
      out.back() += text[i];
    }
  }
  return out;
}

std::string names_label(std::string_view text, char sep) {
  std::string out;
  const std::vector<std::string> names = split_names(text, sep);
  for (size_t i = 0; i < names.size(); ++i) out += (i ? std::string(1, sep) : "") + names[i];
  return out;
}

std::string ProfileStore::default_path() {
  if (const char* e = std::getenv("XDG_DATA_HOME"); e && *e)
    return std::string(e) + "/sod2/profiles.db";
  if (const char* e = std::getenv("HOME"); e && *e)
    return std::string(e) + "/.local/share/sod2/profiles.db";
  return "sod2-profiles.db";
}

Expected<std::unique_ptr<ProfileStore>> ProfileStore::open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, ec);
    if (ec)
      return io_error("cannot make the folder of the profile database " + path + ": " +
                      ec.message());
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Status st = db_error(db, "cannot open the profile database " + path);
    sqlite3_close(db);
    return st;
  }
  std::unique_ptr<ProfileStore> s(new ProfileStore(db, path));
  // Another process (the studio, a second sod2) may be writing: wait for it rather than fail.
  sqlite3_busy_timeout(db, 10000);
  const std::string what = "the profile database " + path;
  SOD2_RETURN_IF_ERROR(exec(db, "PRAGMA foreign_keys = ON", what));
  {
    Stmt wal(db, "PRAGMA journal_mode = WAL");
    if (!wal.ok() || wal.step() != SQLITE_ROW)
      return db_error(db, what + " is not a SQLite database (or is damaged)");
    if (wal.t(0) != "wal")
      return io_error(what + ": cannot use write-ahead logging (" + wal.t(0) + ")");
  }
  SOD2_RETURN_IF_ERROR(s->migrate().with_context(what));
  return s;
}

ProfileStore::~ProfileStore() { sqlite3_close(db_); }

Status ProfileStore::migrate() {
  Transaction tx(db_);
  SOD2_RETURN_IF_ERROR(tx.begin());
  Stmt v(db_, "PRAGMA user_version");
  if (!v.ok() || v.step() != SQLITE_ROW) return db_error(db_, "reading the schema version");
  version_ = static_cast<int>(v.i(0));
  if (version_ > kSchemaVersion) {
    return unsupported("its schema version " + std::to_string(version_) +
                       " is newer than this sod2 knows (" + std::to_string(kSchemaVersion) +
                       "): use a newer sod2, or another database with --db");
  }
  for (int m = version_; m < kSchemaVersion; ++m) {
    SOD2_RETURN_IF_ERROR(exec(db_, kMigrations[m], "migrating to schema " + std::to_string(m + 1)));
  }
  if (version_ < kSchemaVersion) {
    const std::string set = "PRAGMA user_version = " + std::to_string(kSchemaVersion);
    SOD2_RETURN_IF_ERROR(exec(db_, set.c_str(), "recording the schema version"));
    version_ = kSchemaVersion;
  }
  return tx.commit();
}

Expected<int64_t> ProfileStore::record_run(RunRecord r) {
  if (r.started_at.empty()) r.started_at = now_utc();
  const std::string now = now_utc();
  Transaction tx(db_);
  SOD2_RETURN_IF_ERROR(tx.begin());
  const DeviceRecord& d = r.device;
  SOD2_RETURN_IF_ERROR(run_sql(
      db_,
      "INSERT INTO devices(device_id, transport, model, cpu, arch, os, cores, memory_bytes, "
      "first_seen, last_seen) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(device_id) DO "
      "UPDATE SET model = excluded.model, cpu = excluded.cpu, arch = excluded.arch, os = "
      "excluded.os, cores = excluded.cores, memory_bytes = excluded.memory_bytes, last_seen = "
      "excluded.last_seen",
      "recording the device", d.device_id, d.transport, d.model, d.cpu, d.arch, d.os, d.cores,
      d.memory_bytes, now, now));
  SOD2_ASSIGN_OR_RETURN(
      const int64_t device,
      id_of(db_, "SELECT id FROM devices WHERE device_id = ?", d.device_id, "finding the device"));
  SOD2_RETURN_IF_ERROR(run_sql(db_,
                               "INSERT INTO models(sha256, name, path) VALUES(?, ?, ?) ON "
                               "CONFLICT(sha256) DO UPDATE SET name = excluded.name, path = "
                               "excluded.path",
                               "recording the model", r.model_sha256, r.model_name, r.model_path));
  SOD2_ASSIGN_OR_RETURN(const int64_t model, id_of(db_, "SELECT id FROM models WHERE sha256 = ?",
                                                   r.model_sha256, "finding the model"));
  std::optional<int64_t> package;
  if (!r.package_sha256.empty()) {
    SOD2_RETURN_IF_ERROR(run_sql(db_,
                                 "INSERT INTO packages(sha256, model_id, bytes) VALUES(?, ?, ?) "
                                 "ON CONFLICT(sha256) DO NOTHING",
                                 "recording the package", r.package_sha256, model,
                                 r.package_bytes));
    SOD2_ASSIGN_OR_RETURN(package, id_of(db_, "SELECT id FROM packages WHERE sha256 = ?",
                                         r.package_sha256, "finding the package"));
  }
  {
    Stmt s(db_,
           "INSERT INTO runs(started_at, device_id, model_id, package_id, bindings, threads, runs, "
           "warmup, status, failure, host_software, agent_software, first_ms, warmup_avg_ms, "
           "avg_ms, std_ms, min_ms, max_ms, arena_bytes, peak_rss_bytes, plan_version, sweep_id, "
           "sweep_value, predicted_arena_bytes, prediction_exact, duration_s, window_s, "
           "unreadable_sensors, stopped_early) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
           "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    if (!s.ok()) return db_error(db_, "recording the run");
    s.bind(r.started_at).bind(device).bind(model);
    if (package)
      s.bind(*package);
    else
      s.bind_null();
    s.bind(r.bindings).bind(r.threads).bind(r.runs).bind(r.warmup);
    s.bind(std::string(r.ok ? "ok" : "failed"));
    if (r.ok)
      s.bind_null();
    else
      s.bind(r.failure);
    s.bind(r.host_software).bind(r.agent_software);
    if (r.ok) {
      s.bind(r.first_ms)
          .bind(r.warmup_avg_ms)
          .bind(r.avg_ms)
          .bind(r.std_ms)
          .bind(r.min_ms)
          .bind(r.max_ms)
          .bind(r.arena_bytes)
          .bind(r.peak_rss_bytes)
          .bind(r.plan_version);
    } else {
      for (int i = 0; i < 9; ++i) s.bind_null();
    }
    if (r.sweep_id > 0)
      s.bind(r.sweep_id).bind(r.sweep_value);
    else
      s.bind_null().bind_null();
    if (r.predicted_arena_bytes >= 0)
      s.bind(r.predicted_arena_bytes).bind(int64_t{r.prediction_exact});
    else
      s.bind_null().bind_null();
    if (r.duration_s > 0) {
      std::string unreadable;
      for (const std::string& u : r.unreadable_sensors) unreadable += u + "\n";
      s.bind(r.duration_s).bind(r.window_s).bind(unreadable).bind(int64_t{r.stopped_early});
    } else {
      s.bind_null().bind_null().bind_null().bind_null();
    }
    if (s.step() != SQLITE_DONE) return db_error(db_, "recording the run");
  }
  const int64_t run = sqlite3_last_insert_rowid(db_);
  for (size_t i = 0; i < r.latencies.size(); ++i) {
    const LatencyRecord& l = r.latencies[i];
    SOD2_RETURN_IF_ERROR(run_sql(db_,
                                 "INSERT INTO run_latencies(run_id, idx, warmup, latency_ms, "
                                 "arena_bytes, rss_bytes) VALUES(?, ?, ?, ?, ?, ?)",
                                 "recording the latencies", run, static_cast<int64_t>(i),
                                 int64_t{l.warmup}, l.ms, l.arena_bytes, l.rss_bytes));
  }
  for (const GroupRecord& g : r.groups) {
    Stmt s(db_,
           "INSERT INTO group_timings(run_id, group_index, name, op_types, nodes, shape, avg_ms, "
           "output_bytes, ops, p50_ms, p90_ms, ops_bound) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
           "?)");
    if (!s.ok()) return db_error(db_, "recording the group timings");
    s.bind(run).bind(g.index).bind(g.name).bind(g.op_types).bind(g.nodes).bind(g.shape);
    s.bind(g.avg_ms).bind(g.output_bytes);
    if (g.ops >= 0)
      s.bind(g.ops);
    else
      s.bind_null();
    s.bind(g.p50_ms).bind(g.p90_ms).bind(int64_t{g.ops_bound});
    if (s.step() != SQLITE_DONE) return db_error(db_, "recording the group timings");
    SOD2_RETURN_IF_ERROR(record_bodies(db_, run, g));
  }
  SOD2_RETURN_IF_ERROR(record_windows(db_, run, r.windows));
  SOD2_RETURN_IF_ERROR(tx.commit());
  return run;
}

namespace {
constexpr const char* kRunColumns =
    "SELECT r.id, r.started_at, d.device_id, d.transport, d.model, d.cpu, d.arch, d.os, d.cores, "
    "d.memory_bytes, m.sha256, m.name, m.path, COALESCE(p.sha256, ''), COALESCE(p.bytes, 0), "
    "r.bindings, r.threads, r.runs, r.warmup, r.status, COALESCE(r.failure, ''), "
    "r.host_software, r.agent_software, COALESCE(r.first_ms, 0), COALESCE(r.warmup_avg_ms, 0), "
    "COALESCE(r.avg_ms, 0), COALESCE(r.std_ms, 0), COALESCE(r.min_ms, 0), COALESCE(r.max_ms, 0), "
    "COALESCE(r.arena_bytes, 0), COALESCE(r.peak_rss_bytes, 0), COALESCE(r.plan_version, -1), "
    "COALESCE(r.sweep_id, 0), COALESCE(r.sweep_value, 0), COALESCE(r.predicted_arena_bytes, -1), "
    "COALESCE(r.prediction_exact, 0), COALESCE(r.duration_s, 0), COALESCE(r.window_s, 0), "
    "COALESCE(r.unreadable_sensors, ''), COALESCE(r.stopped_early, 0) "
    "FROM runs r JOIN devices d ON d.id = r.device_id JOIN models m ON m.id = r.model_id "
    "LEFT JOIN packages p ON p.id = r.package_id ";

RunRecord run_from(const Stmt& s) {
  RunRecord r;
  int c = 0;
  r.id = s.i(c++);
  r.started_at = s.t(c++);
  r.device.device_id = s.t(c++);
  r.device.transport = s.t(c++);
  r.device.model = s.t(c++);
  r.device.cpu = s.t(c++);
  r.device.arch = s.t(c++);
  r.device.os = s.t(c++);
  r.device.cores = s.i(c++);
  r.device.memory_bytes = s.i(c++);
  r.model_sha256 = s.t(c++);
  r.model_name = s.t(c++);
  r.model_path = s.t(c++);
  r.package_sha256 = s.t(c++);
  r.package_bytes = s.i(c++);
  r.bindings = s.t(c++);
  r.threads = s.i(c++);
  r.runs = s.i(c++);
  r.warmup = s.i(c++);
  r.ok = s.t(c++) == "ok";
  r.failure = s.t(c++);
  r.host_software = s.t(c++);
  r.agent_software = s.t(c++);
  r.first_ms = s.d(c++);
  r.warmup_avg_ms = s.d(c++);
  r.avg_ms = s.d(c++);
  r.std_ms = s.d(c++);
  r.min_ms = s.d(c++);
  r.max_ms = s.d(c++);
  r.arena_bytes = s.i(c++);
  r.peak_rss_bytes = s.i(c++);
  r.plan_version = s.i(c++);
  r.sweep_id = s.i(c++);
  r.sweep_value = s.i(c++);
  r.predicted_arena_bytes = s.i(c++);
  r.prediction_exact = s.i(c++) != 0;
  r.duration_s = s.d(c++);
  r.window_s = s.d(c++);
  const std::string unreadable = s.t(c++);
  for (size_t b = 0, e; b < unreadable.size(); b = e + 1) {
    e = unreadable.find('\n', b);
    if (e == std::string::npos) e = unreadable.size();
    if (e > b) r.unreadable_sensors.push_back(unreadable.substr(b, e - b));
  }
  r.stopped_early = s.i(c++) != 0;
  return r;
}

// The run's latencies and groups, which run_from leaves empty.
Status read_run_details(sqlite3* db, RunRecord& r) {
  Stmt l(db,
         "SELECT warmup, latency_ms, arena_bytes, rss_bytes FROM run_latencies WHERE run_id = "
         "? ORDER BY idx");
  if (!l.ok()) return db_error(db, "reading latencies");
  l.bind(r.id);
  while (l.step() == SQLITE_ROW) r.latencies.push_back({l.i(0) != 0, l.d(1), l.i(2), l.i(3)});
  Stmt g(db,
         "SELECT group_index, name, op_types, nodes, shape, avg_ms, output_bytes, "
         "COALESCE(ops, -1), COALESCE(p50_ms, avg_ms), COALESCE(p90_ms, avg_ms), "
         "COALESCE(ops_bound, 0) FROM group_timings WHERE run_id = ? ORDER BY group_index");
  if (!g.ok()) return db_error(db, "reading group timings");
  g.bind(r.id);
  while (g.step() == SQLITE_ROW)
    r.groups.push_back({g.i(0),
                        g.t(1),
                        g.t(2),
                        g.t(3),
                        g.t(4),
                        g.d(5),
                        g.i(6),
                        g.i(7),
                        g.d(8),
                        g.d(9),
                        {},
                        g.i(10) != 0});
  Stmt b(db,
         "SELECT group_index, depth, body, graph, node, name, op_types, avg_ms, calls_per_run, "
         "percent_of_parent FROM group_bodies WHERE run_id = ? ORDER BY group_index, idx");
  if (!b.ok()) return db_error(db, "reading the groups' body nodes");
  b.bind(r.id);
  size_t at = 0;  // both are in group order: one pass pairs them
  while (b.step() == SQLITE_ROW) {
    const int64_t group = b.i(0);
    while (at < r.groups.size() && r.groups[at].index < group) ++at;
    if (at == r.groups.size()) break;
    if (r.groups[at].index != group) continue;  // a row no run of ours wrote
    r.groups[at].body.push_back(
        {b.i(1), b.t(2), b.i(3), b.i(4), b.t(5), b.t(6), b.d(7), b.d(8), b.d(9)});
  }
  if (r.duration_s <= 0) return Status::ok_status();
  Stmt w(db,
         "SELECT start_s, end_s, runs, min_ms, p50_ms, p90_ms, p99_ms, max_ms, mean_ms, "
         "rss_bytes FROM run_windows WHERE run_id = ? ORDER BY idx");
  if (!w.ok()) return db_error(db, "reading windows");
  w.bind(r.id);
  while (w.step() == SQLITE_ROW) {
    WindowRecord x;
    x.start_s = w.d(0);
    x.end_s = w.d(1);
    x.runs = w.i(2);
    x.min_ms = w.d(3);
    x.p50_ms = w.d(4);
    x.p90_ms = w.d(5);
    x.p99_ms = w.d(6);
    x.max_ms = w.d(7);
    x.mean_ms = w.d(8);
    x.rss_bytes = w.i(9);
    r.windows.push_back(std::move(x));
  }
  Stmt wg(db,
          "SELECT idx, group_index, mean_ms FROM window_groups WHERE run_id = ? ORDER BY idx, "
          "group_index");
  if (!wg.ok()) return db_error(db, "reading the windows' groups");
  wg.bind(r.id);
  while (wg.step() == SQLITE_ROW) {
    const int64_t idx = wg.i(0), g = wg.i(1);
    if (idx < 0 || idx >= static_cast<int64_t>(r.windows.size()) || g < 0 || g > (1 << 24))
      continue;  // a row no run of ours wrote
    std::vector<double>& means = r.windows[static_cast<size_t>(idx)].group_mean_ms;
    if (means.size() <= static_cast<size_t>(g)) means.resize(static_cast<size_t>(g) + 1);
    means[static_cast<size_t>(g)] = wg.d(2);
  }
  Stmt ws(db,
          "SELECT idx, name, mean, max FROM window_sensors WHERE run_id = ? ORDER BY idx, "
          "rowid");
  if (!ws.ok()) return db_error(db, "reading the windows' sensors");
  ws.bind(r.id);
  while (ws.step() == SQLITE_ROW) {
    const int64_t idx = ws.i(0);
    if (idx < 0 || idx >= static_cast<int64_t>(r.windows.size())) continue;
    r.windows[static_cast<size_t>(idx)].sensors.push_back({ws.t(1), ws.d(2), ws.d(3)});
  }
  return Status::ok_status();
}

constexpr const char* kSweepColumns =
    "SELECT s.id, s.started_at, s.symbol, s.lo, s.hi, s.step, s.held, "
    "COALESCE((SELECT m.name FROM runs r JOIN models m ON m.id = r.model_id WHERE r.sweep_id = "
    "s.id ORDER BY r.id LIMIT 1), ''), "
    "COALESCE((SELECT d.device_id FROM runs r JOIN devices d ON d.id = r.device_id WHERE "
    "r.sweep_id = s.id ORDER BY r.id LIMIT 1), ''), "
    "(SELECT COUNT(*) FROM runs r WHERE r.sweep_id = s.id), "
    "(SELECT COUNT(*) FROM runs r WHERE r.sweep_id = s.id AND r.status = 'failed') FROM sweeps s ";

SweepRecord sweep_from(const Stmt& s) {
  SweepRecord w;
  w.id = s.i(0);
  w.started_at = s.t(1);
  w.symbol = s.t(2);
  w.lo = s.i(3);
  w.hi = s.i(4);
  w.step = s.i(5);
  w.held = s.t(6);
  w.model_name = s.t(7);
  w.device_id = s.t(8);
  w.points = s.i(9);
  w.failed = s.i(10);
  return w;
}
}  // namespace

Expected<int64_t> ProfileStore::record_sweep(SweepRecord w) {
  if (w.started_at.empty()) w.started_at = now_utc();
  SOD2_RETURN_IF_ERROR(run_sql(
      db_, "INSERT INTO sweeps(started_at, symbol, lo, hi, step, held) VALUES(?, ?, ?, ?, ?, ?)",
      "recording the sweep", w.started_at, w.symbol, w.lo, w.hi, w.step, w.held));
  return static_cast<int64_t>(sqlite3_last_insert_rowid(db_));
}

Expected<std::vector<SweepRecord>> ProfileStore::sweeps(const RunFilter& f) {
  const std::string sql =
      std::string(kSweepColumns) +
      "WHERE (?1 = '' OR EXISTS(SELECT 1 FROM runs r JOIN models m ON m.id = r.model_id WHERE "
      "r.sweep_id = s.id AND (m.name = ?1 OR m.path = ?1 OR m.sha256 LIKE ?1 || '%'))) "
      "AND (?2 = '' OR EXISTS(SELECT 1 FROM runs r JOIN devices d ON d.id = r.device_id WHERE "
      "r.sweep_id = s.id AND d.device_id = ?2)) ORDER BY s.id DESC LIMIT ?3";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return db_error(db_, "listing sweeps");
  s.bind(f.model).bind(f.device).bind(f.limit);
  std::vector<SweepRecord> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(sweep_from(s));
  if (rc != SQLITE_DONE) return db_error(db_, "listing sweeps");
  return out;
}

Expected<SweepRecord> ProfileStore::sweep(int64_t id) {
  const std::string what = "reading sweep " + std::to_string(id);
  const std::string sql = std::string(kSweepColumns) + "WHERE s.id = ?";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return db_error(db_, what);
  s.bind(id);
  const int rc = s.step();
  if (rc == SQLITE_DONE)
    return not_found("no sweep " + std::to_string(id) + " in " + path_ +
                     " (see `sod2 history --sweeps`)");
  if (rc != SQLITE_ROW) return db_error(db_, what);
  SweepRecord w = sweep_from(s);
  const std::string runs_sql =
      std::string(kRunColumns) + "WHERE r.sweep_id = ? ORDER BY r.sweep_value, r.id";
  Stmt r(db_, runs_sql.c_str());
  if (!r.ok()) return db_error(db_, what);
  r.bind(id);
  int step;
  while ((step = r.step()) == SQLITE_ROW) w.runs.push_back(run_from(r));
  if (step != SQLITE_DONE) return db_error(db_, what);
  for (RunRecord& run : w.runs) SOD2_RETURN_IF_ERROR(read_run_details(db_, run));
  return w;
}

Expected<std::vector<RunRecord>> ProfileStore::runs(const RunFilter& f) {
  const std::string sql =
      std::string(kRunColumns) +
      "WHERE (?1 = '' OR m.name = ?1 OR m.path = ?1 OR m.sha256 LIKE ?1 || '%') "
      "AND (?2 = '' OR d.device_id = ?2) ORDER BY r.id DESC LIMIT ?3";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return db_error(db_, "listing runs");
  s.bind(f.model).bind(f.device).bind(f.limit);
  std::vector<RunRecord> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(run_from(s));
  if (rc != SQLITE_DONE) return db_error(db_, "listing runs");
  return out;
}

Expected<RunRecord> ProfileStore::run(int64_t id) {
  const std::string sql = std::string(kRunColumns) + "WHERE r.id = ?";
  Stmt s(db_, sql.c_str());
  if (!s.ok()) return db_error(db_, "reading run " + std::to_string(id));
  s.bind(id);
  const int rc = s.step();
  if (rc == SQLITE_DONE)
    return not_found("no run " + std::to_string(id) + " in " + path_ + " (see `sod2 history`)");
  if (rc != SQLITE_ROW) return db_error(db_, "reading run " + std::to_string(id));
  RunRecord r = run_from(s);
  SOD2_RETURN_IF_ERROR(read_run_details(db_, r));
  return r;
}

}  // namespace sod2::store
