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
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
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
