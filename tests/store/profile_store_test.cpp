#include "core/store/profile_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace sod2::store {
namespace {

namespace fs = std::filesystem;

class ProfileStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_store_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "sub" / "profiles.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  static RunRecord sample_run(const std::string& device = "local") {
    RunRecord r;
    r.device.device_id = device;
    r.device.transport = device == "local" ? "local" : "adb";
    r.device.model = "Test CPU";
    r.device.cores = 8;
    r.model_sha256 = "ab12cd";
    r.model_name = "bert_tiny/model.onnx";
    r.model_path = "/models/bert_tiny/model.onnx";
    r.package_sha256 = "ffee";
    r.package_bytes = 4096;
    r.bindings = "batch=1,seq=16";
    r.threads = 2;
    r.runs = 2;
    r.warmup = 1;
    r.ok = true;
    r.avg_ms = 1.5;
    r.std_ms = 0.25;
    r.arena_bytes = 1 << 20;
    r.latencies = {{true, 3.0, 100, 200}, {false, 1.25, 100, 210}, {false, 1.75, 100, 220}};
    r.groups = {{0, "/MatMul", "MatMul+Add", "/MatMul,/Add", "[1,16,128]", 0.5, 8192},
                {1, "/Softmax", "Softmax", "/Softmax", "[1,4,16,16]", 0.25, 4096}};
    return r;
  }

  // Runs `sql` on the database file as an older sod2 (or a newer one) would have left it.
  void exec_raw(const char* sql) {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
    const int rc = sqlite3_exec(raw, sql, nullptr, nullptr, nullptr);
    const std::string error = sqlite3_errmsg(raw);
    sqlite3_close(raw);
    ASSERT_EQ(rc, SQLITE_OK) << error;
  }

  int64_t count(const char* sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }

  fs::path dir_;
  std::string path_;
};

TEST_F(ProfileStoreTest, CreatesSchemaInWalModeAndItsFolder) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
  EXPECT_TRUE(fs::exists(path_));
  EXPECT_EQ(count("PRAGMA user_version"), kSchemaVersion);
  db->reset();
  // Reopening does not migrate again (a second CREATE TABLE would fail).
  auto again = ProfileStore::open(path_);
  ASSERT_TRUE(again.ok()) << again.status().message();
}

TEST_F(ProfileStoreTest, RoundTripsARunWithLatenciesAndGroups) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  auto id = (*db)->record_run(sample_run());
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto r = (*db)->run(*id);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->device.device_id, "local");
  EXPECT_EQ(r->device.cores, 8);
  EXPECT_EQ(r->model_name, "bert_tiny/model.onnx");
  EXPECT_EQ(r->bindings, "batch=1,seq=16");
  EXPECT_DOUBLE_EQ(r->avg_ms, 1.5);
  EXPECT_EQ(r->arena_bytes, 1 << 20);
  EXPECT_FALSE(r->started_at.empty());
  ASSERT_EQ(r->latencies.size(), 3u);
  EXPECT_TRUE(r->latencies[0].warmup);
  EXPECT_DOUBLE_EQ(r->latencies[2].ms, 1.75);
  ASSERT_EQ(r->groups.size(), 2u);
  EXPECT_EQ(r->groups[0].op_types, "MatMul+Add");
  EXPECT_EQ(r->groups[1].shape, "[1,4,16,16]");
}

TEST_F(ProfileStoreTest, FiltersByModelAndDeviceNewestFirst) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->record_run(sample_run("local")).ok());
  ASSERT_TRUE((*db)->record_run(sample_run("adb:ABC")).ok());
  RunRecord other = sample_run("local");
  other.model_sha256 = "99";
  other.model_name = "yolo";
  ASSERT_TRUE((*db)->record_run(other).ok());
  auto all = (*db)->runs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_GT((*all)[0].id, (*all)[1].id);
  EXPECT_EQ((*db)->runs({"bert_tiny/model.onnx", "", 50})->size(), 2u);
  EXPECT_EQ((*db)->runs({"", "adb:ABC", 50})->size(), 1u);
  EXPECT_EQ((*db)->runs({"ab1", "local", 50})->size(), 1u);  // hash prefix
  EXPECT_EQ(count("SELECT COUNT(*) FROM devices"), 2);
  EXPECT_EQ(count("SELECT COUNT(*) FROM models"), 2);
}

TEST_F(ProfileStoreTest, RecordsAFailedRunWithItsReasonAndNoTimings) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  RunRecord r = sample_run();
  r.ok = false;
  r.failure = "the agent was killed";
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok());
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->ok);
  EXPECT_EQ(back->failure, "the agent was killed");
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs WHERE avg_ms IS NULL AND status = 'failed'"), 1);
}

// A write that fails half-way (here a duplicate group index) leaves nothing of the run behind.
TEST_F(ProfileStoreTest, AFailedWriteLeavesNoHalfRun) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  RunRecord r = sample_run();
  r.groups.push_back(r.groups[0]);
  auto id = (*db)->record_run(r);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("group timings"), std::string::npos)
      << id.status().message();
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM run_latencies"), 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM devices"), 0);
  // The store stays usable.
  EXPECT_TRUE((*db)->record_run(sample_run()).ok());
}

TEST_F(ProfileStoreTest, RefusesANewerSchema) {
  {
    auto db = ProfileStore::open(path_);
    ASSERT_TRUE(db.ok());
  }
  ASSERT_NO_FATAL_FAILURE(exec_raw("PRAGMA user_version = 99"));
  auto db = ProfileStore::open(path_);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("newer"), std::string::npos) << db.status().message();
}

TEST_F(ProfileStoreTest, RefusesAFileThatIsNotADatabase) {
  fs::create_directories(fs::path(path_).parent_path());
  std::ofstream(path_) << "this is not sqlite, just text that is long enough to be a header....";
  auto db = ProfileStore::open(path_);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find(path_), std::string::npos) << db.status().message();
}

TEST_F(ProfileStoreTest, SweepsKeepTheirPointsWithPredictedArenasAndGroupOps) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  SweepRecord w;
  w.symbol = "seq";
  w.lo = 16;
  w.hi = 48;
  w.step = 16;
  w.held = "batch=1";
  auto id = (*db)->record_sweep(w);
  ASSERT_TRUE(id.ok()) << id.status().message();
  // Points recorded out of order read back by value; a failed one keeps its reason.
  for (int64_t v : {48, 16, 32}) {
    RunRecord r = sample_run();
    r.sweep_id = *id;
    r.sweep_value = v;
    r.predicted_arena_bytes = v * 1000;
    r.groups[0].ops = v * 10;
    r.groups[0].p50_ms = 0.375;
    r.groups[0].p90_ms = 0.625;
    if (v == 32) {
      r.ok = false;
      r.failure = "out of memory";
    }
    ASSERT_TRUE((*db)->record_run(r).ok());
  }
  ASSERT_TRUE((*db)->record_run(sample_run()).ok());  // not a point of it
  auto back = (*db)->sweep(*id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->symbol, "seq");
  EXPECT_EQ(back->held, "batch=1");
  EXPECT_EQ(back->points, 3);
  EXPECT_EQ(back->failed, 1);
  EXPECT_EQ(back->model_name, "bert_tiny/model.onnx");
  EXPECT_EQ(back->device_id, "local");
  ASSERT_EQ(back->runs.size(), 3u);
  EXPECT_EQ(back->runs[0].sweep_value, 16);
  EXPECT_EQ(back->runs[0].predicted_arena_bytes, 16000);
  ASSERT_EQ(back->runs[0].groups.size(), 2u);
  EXPECT_EQ(back->runs[0].groups[0].ops, 160);
  EXPECT_EQ(back->runs[0].groups[1].ops, -1);  // not counted
  EXPECT_DOUBLE_EQ(back->runs[0].groups[0].p50_ms, 0.375);
  EXPECT_DOUBLE_EQ(back->runs[0].groups[0].p90_ms, 0.625);
  EXPECT_EQ(back->runs[0].latencies.size(), 3u);
  EXPECT_FALSE(back->runs[1].ok);
  EXPECT_EQ(back->runs[1].failure, "out of memory");
  EXPECT_EQ(back->runs[2].sweep_value, 48);
  auto listed = (*db)->sweeps();
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].runs.empty());
  EXPECT_EQ((*db)->sweeps({"", "adb:X", 10})->size(), 0u);
  EXPECT_EQ((*db)->sweeps({"bert_tiny/model.onnx", "", 10})->size(), 1u);
  auto plain = (*db)->run(4);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->sweep_id, 0);
  EXPECT_EQ(plain->predicted_arena_bytes, -1);
  auto missing = (*db)->sweep(9);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// A database an older sod2 wrote (schema 1) opens, migrates and keeps its runs.
TEST_F(ProfileStoreTest, ASchemaOneDatabaseMigratesAndKeepsItsRuns) {
  fs::create_directories(fs::path(path_).parent_path());
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  const char* v1 = R"sql(
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
)sql";
  ASSERT_EQ(sqlite3_exec(raw, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(raw);
  ASSERT_EQ(sqlite3_exec(raw,
                         "INSERT INTO devices VALUES(1, 'local', 'local', '', '', '', '', 2, 0, "
                         "'t', 't'); INSERT INTO models VALUES(1, 'ab', 'old', '/old'); "
                         "INSERT INTO runs(id, started_at, device_id, model_id, bindings, status, "
                         "avg_ms) VALUES(1, 't', 1, 1, 'seq=4', 'ok', 2.5); "
                         "INSERT INTO group_timings VALUES(1, 0, 'g', 'Conv', 'g', '[1]', 2.5, 4); "
                         "PRAGMA user_version = 1;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(raw);
  sqlite3_close(raw);
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
  auto old = (*db)->run(1);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_DOUBLE_EQ(old->avg_ms, 2.5);
  EXPECT_EQ(old->sweep_id, 0);
  ASSERT_EQ(old->groups.size(), 1u);
  EXPECT_EQ(old->groups[0].ops, -1);
  EXPECT_DOUBLE_EQ(old->groups[0].p50_ms, 2.5) << "the average stands in for what was not kept";
  EXPECT_EQ(old->duration_s, 0);  // not a sustained run (schema 3)
  EXPECT_TRUE(old->windows.empty());
  EXPECT_TRUE((*db)->record_sweep({}).ok());
  RunRecord sustained = sample_run();
  sustained.duration_s = 1;
  sustained.window_s = 1;
  sustained.windows.push_back({});
  EXPECT_TRUE((*db)->record_run(sustained).ok());
}

// Issue 24: a sustained run's windows, each group's mean time per window and the device's
// sensors come back as recorded; a run without a duration has none.
TEST_F(ProfileStoreTest, ASustainedRunKeepsItsWindowsGroupsAndSensors) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  RunRecord r = sample_run();
  r.duration_s = 120;
  r.window_s = 60;
  r.stopped_early = true;
  r.unreadable_sensors = {"thermal_zone3 (battery): Permission denied", "cpu7 frequency: x"};
  WindowRecord cold{0, 60, 1000, 1.0, 1.2, 1.5, 2.0, 3.0, 1.25, 20 << 20, {0.5, 0.25}, {}};
  cold.sensors = {{"thermal:cpu", 41.5, 44}, {"cpu0 MHz", 2400, 2400}};
  WindowRecord hot{60, 95.5, 500, 1.5, 1.9, 2.5, 3.0, 4.0, 2.0, 21 << 20, {0.8, 0.3}, {}};
  hot.sensors = {{"thermal:cpu", 70, 72.5}, {"cpu0 MHz", 1200, 1800}};
  r.windows = {cold, hot};
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_DOUBLE_EQ(back->duration_s, 120);
  EXPECT_DOUBLE_EQ(back->window_s, 60);
  EXPECT_TRUE(back->stopped_early);
  EXPECT_EQ(back->unreadable_sensors, r.unreadable_sensors);
  ASSERT_EQ(back->windows.size(), 2u);
  const WindowRecord& w = back->windows[1];
  EXPECT_DOUBLE_EQ(w.start_s, 60);
  EXPECT_DOUBLE_EQ(w.end_s, 95.5);
  EXPECT_EQ(w.runs, 500);
  EXPECT_DOUBLE_EQ(w.p99_ms, 3.0);
  EXPECT_DOUBLE_EQ(w.mean_ms, 2.0);
  EXPECT_EQ(w.rss_bytes, 21 << 20);
  EXPECT_EQ(w.group_mean_ms, (std::vector<double>{0.8, 0.3}));
  ASSERT_EQ(w.sensors.size(), 2u);
  EXPECT_EQ(w.sensors[0].name, "thermal:cpu");
  EXPECT_DOUBLE_EQ(w.sensors[0].max, 72.5);
  EXPECT_DOUBLE_EQ(w.sensors[1].mean, 1200);
  // The list shows it as sustained without reading its windows.
  auto listed = (*db)->runs();
  ASSERT_TRUE(listed.ok());
  EXPECT_DOUBLE_EQ(listed->front().duration_s, 120);
  EXPECT_TRUE(listed->front().windows.empty());
  auto plain = (*db)->record_run(sample_run());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ((*db)->run(*plain)->duration_s, 0);
  EXPECT_TRUE((*db)->run(*plain)->windows.empty());
}

// Issue 23 item 2: an If/Loop/Scan group's body nodes come back under their group, in the order
// recorded (depth first), with every field; groups without bodies get none.
TEST_F(ProfileStoreTest, BodyNodesComeBackUnderTheirGroupInOrder) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  RunRecord r = sample_run();
  r.groups.push_back({2, "/gated/If", "If", "/gated/If", "[1,8,32,32]", 2.0, 32768});
  r.groups.push_back({3, "/loop/Loop", "Loop", "/loop/Loop", "[4]", 1.0, 16});
  r.groups[2].body = {{1, "then_branch", 1, 0, "/gated/then/Conv", "Conv+Relu", 1.5, 0.5, 75.0},
                      {1, "then_branch", 1, 1, "/gated/then/If", "If", 0.25, 0.5, 12.5},
                      {2, "else_branch", 4, 0, "/gated/then/inner/Add", "Add", 0.125, 0.25, 50.0},
                      {1, "else_branch", 2, 0, "/gated/else/Identity", "Identity", 0.01, 0.5, 0.5}};
  r.groups[3].body = {{1, "body", 3, 0, "/loop/body/MatMul", "MatMul", 0.75, 12, 75.0}};
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(count("SELECT COUNT(*) FROM group_bodies"), 5);
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->groups.size(), 4u);
  EXPECT_TRUE(back->groups[0].body.empty());
  EXPECT_TRUE(back->groups[1].body.empty());
  ASSERT_EQ(back->groups[2].body.size(), 4u);
  const BodyRecord& nested = back->groups[2].body[2];
  EXPECT_EQ(nested.depth, 2);
  EXPECT_EQ(nested.body, "else_branch");
  EXPECT_EQ(nested.graph, 4);
  EXPECT_EQ(nested.node, 0);
  EXPECT_EQ(nested.name, "/gated/then/inner/Add");
  EXPECT_EQ(nested.op_types, "Add");
  EXPECT_DOUBLE_EQ(nested.avg_ms, 0.125);
  EXPECT_DOUBLE_EQ(nested.calls_per_run, 0.25);
  EXPECT_DOUBLE_EQ(nested.percent_of_parent, 50.0);
  std::vector<std::string> names;
  for (const BodyRecord& b : back->groups[2].body) names.push_back(b.name);
  EXPECT_EQ(names, (std::vector<std::string>{"/gated/then/Conv", "/gated/then/If",
                                             "/gated/then/inner/Add", "/gated/else/Identity"}));
  EXPECT_EQ(back->groups[2].body[0].op_types, "Conv+Relu");
  ASSERT_EQ(back->groups[3].body.size(), 1u);
  EXPECT_DOUBLE_EQ(back->groups[3].body[0].calls_per_run, 12);
  // A sweep's points read their body nodes the same way.
  SweepRecord over_seq;
  over_seq.symbol = "seq";
  over_seq.lo = 4;
  over_seq.hi = 8;
  over_seq.step = 4;
  auto sweep = (*db)->record_sweep(over_seq);
  ASSERT_TRUE(sweep.ok());
  r.sweep_id = *sweep;
  r.sweep_value = 4;
  ASSERT_TRUE((*db)->record_run(r).ok());
  auto points = (*db)->sweep(*sweep);
  ASSERT_TRUE(points.ok()) << points.status().message();
  ASSERT_EQ(points->runs.size(), 1u);
  EXPECT_EQ(points->runs[0].groups[2].body.size(), 4u);
}

// A database the previous sod2 wrote (schema 3, before body nodes were kept) migrates: its runs
// read back without body nodes, and new runs keep theirs. Schema 3 is schema 4 less the
// group_bodies table (migrations only append), so it is made by taking that table away.
TEST_F(ProfileStoreTest, ASchemaThreeDatabaseMigratesAndKeepsItsRuns) {
  int64_t old_id = 0;
  {
    auto db = ProfileStore::open(path_);
    ASSERT_TRUE(db.ok());
    auto id = (*db)->record_run(sample_run());
    ASSERT_TRUE(id.ok());
    old_id = *id;
  }
  ASSERT_NO_FATAL_FAILURE(
      exec_raw("DROP TABLE group_bodies; ALTER TABLE group_timings DROP COLUMN ops_bound; "
               "PRAGMA user_version = 3;"));
  EXPECT_EQ(count("SELECT COUNT(*) FROM sqlite_master WHERE name = 'group_bodies'"), 0);
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
  EXPECT_EQ(count("PRAGMA user_version"), kSchemaVersion);
  auto old = (*db)->run(old_id);
  ASSERT_TRUE(old.ok()) << old.status().message();
  ASSERT_EQ(old->groups.size(), 2u);
  EXPECT_EQ(old->groups[0].name, "/MatMul");
  EXPECT_TRUE(old->groups[0].body.empty());
  RunRecord with_body = sample_run();
  with_body.groups[1].body = {{1, "body", 1, 0, "/loop/Add", "Add", 0.2, 3, 80.0}};
  auto id = (*db)->record_run(with_body);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->groups[1].body.size(), 1u);
  EXPECT_EQ(back->groups[1].body[0].name, "/loop/Add");
}

// Node names are any bytes: a list of them in one column reads back exactly, whatever
// separator, backslash, quote, newline, NUL or broken UTF-8 they hold.
TEST(JoinNames, AnyNamesReadBackExactly) {
  const std::vector<std::vector<std::string>> lists = {
      {},
      {""},
      {"", ""},
      {"a", ""},
      {"", "b"},
      {"/MatMul", "/Add"},
      {"a,b", "c"},
      {"back\\slash", "ends\\", "\\", "\\\\,"},
      {"q\"u'o`te", "new\nline\r", std::string("nul\0byte", 8), "bad\xff\xfe"},
      {"+", ",", "a+b,c"}};
  for (const auto& names : lists) {
    for (char sep : {',', '+'}) {
      const std::string text = join_names(names, sep);
      EXPECT_EQ(split_names(text, sep), names) << text;
    }
  }
  // What schema 4 wrote, names without a backslash, reads the same: the format only adds escapes.
  EXPECT_EQ(split_names("/MatMul,/Add", ','), (std::vector<std::string>{"/MatMul", "/Add"}));
  EXPECT_EQ(join_names({"Conv", "Relu"}, '+'), "Conv+Relu");
  EXPECT_EQ(join_names({"a,b"}, ','), "a\\,b");
  EXPECT_EQ(names_label("My\\+Op+Relu", '+'), "My+Op+Relu");
}

TEST_F(ProfileStoreTest, HostileNamesComeBackExactly) {
  const std::vector<std::string> nodes = {"a,b",        "c+d",       "back\\slash\\",
                                          "\"quoted\"", "new\nline", std::string("nul\0", 4),
                                          "\xff\xc3"};
  const std::vector<std::string> ops = {"My+Op", "Conv", "\\", ""};
  RunRecord r = sample_run();
  r.groups[0].name = nodes[2] + nodes[5];
  r.groups[0].nodes = join_names(nodes, ',');
  r.groups[0].op_types = join_names(ops, '+');
  r.groups[0].ops_bound = true;
  r.groups[0].body = {{1, "body", 1, 0, nodes[4] + nodes[6], join_names(ops, '+'), 0.1, 2, 50}};
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok());
  const GroupRecord& g = back->groups[0];
  EXPECT_EQ(g.name, r.groups[0].name);
  EXPECT_EQ(split_names(g.nodes, ','), nodes);
  EXPECT_EQ(split_names(g.op_types, '+'), ops);
  EXPECT_TRUE(g.ops_bound);
  EXPECT_FALSE(back->groups[1].ops_bound);
  ASSERT_EQ(g.body.size(), 1u);
  EXPECT_EQ(g.body[0].name, nodes[4] + nodes[6]);
  EXPECT_EQ(split_names(g.body[0].op_types, '+'), ops);
}

// Rows the previous sod2 wrote (schema 4: names joined as they were, no ops_bound) read as they
// did: a backslash in a name is that backslash, a name that held ',' the two names it read as.
// Schema 4 is schema 5 less ops_bound, with its names unescaped.
TEST_F(ProfileStoreTest, ASchemaFourDatabaseReadsAsItDid) {
  int64_t old_id = 0;
  {
    auto db = ProfileStore::open(path_);
    ASSERT_TRUE(db.ok());
    RunRecord r = sample_run();
    r.groups[1].body = {{1, "body", 1, 0, "/loop/Add", "Add", 0.2, 3, 80.0}};
    auto id = (*db)->record_run(r);
    ASSERT_TRUE(id.ok());
    old_id = *id;
  }
  ASSERT_NO_FATAL_FAILURE(
      exec_raw("ALTER TABLE group_timings DROP COLUMN ops_bound; "
               "UPDATE group_timings SET nodes = '/a\\b,/c\\', op_types = 'My\\Op+If' "
               "WHERE group_index = 0; "
               "UPDATE group_bodies SET op_types = 'Add\\+Mul'; "
               "PRAGMA user_version = 4;"));
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok()) << db.status().message();
  EXPECT_EQ((*db)->schema_version(), kSchemaVersion);
  auto old = (*db)->run(old_id);
  ASSERT_TRUE(old.ok()) << old.status().message();
  ASSERT_EQ(old->groups.size(), 2u);
  EXPECT_EQ(split_names(old->groups[0].nodes, ','), (std::vector<std::string>{"/a\\b", "/c\\"}));
  EXPECT_EQ(split_names(old->groups[0].op_types, '+'), (std::vector<std::string>{"My\\Op", "If"}));
  EXPECT_EQ(split_names(old->groups[1].nodes, ','), (std::vector<std::string>{"/Softmax"}));
  EXPECT_FALSE(old->groups[0].ops_bound);
  ASSERT_EQ(old->groups[1].body.size(), 1u);
  EXPECT_EQ(split_names(old->groups[1].body[0].op_types, '+'),
            (std::vector<std::string>{"Add\\", "Mul"}));
  // New runs beside them write the new form.
  RunRecord r = sample_run();
  r.groups[0].nodes = join_names({"x,y"}, ',');
  auto id = (*db)->record_run(r);
  ASSERT_TRUE(id.ok());
  auto back = (*db)->run(*id);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(split_names(back->groups[0].nodes, ','), (std::vector<std::string>{"x,y"}));
}

TEST_F(ProfileStoreTest, UnknownRunIsNotFound) {
  auto db = ProfileStore::open(path_);
  ASSERT_TRUE(db.ok());
  auto r = (*db)->run(42);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// The studio and the CLI write at once: two connections from two threads, every run lands.
TEST_F(ProfileStoreTest, TwoWritersAtOnce) {
  auto a = ProfileStore::open(path_);
  auto b = ProfileStore::open(path_);
  ASSERT_TRUE(a.ok() && b.ok());
  auto write = [](ProfileStore* s, int n, int* failures) {
    for (int i = 0; i < n; ++i)
      if (!s->record_run(sample_run()).ok()) ++*failures;
  };
  int fa = 0, fb = 0;
  std::thread ta(write, a->get(), 25, &fa), tb(write, b->get(), 25, &fb);
  ta.join();
  tb.join();
  EXPECT_EQ(fa + fb, 0);
  EXPECT_EQ(count("SELECT COUNT(*) FROM runs"), 50);
  EXPECT_EQ(count("SELECT COUNT(*) FROM group_timings"), 100);
}

}  // namespace
}  // namespace sod2::store
