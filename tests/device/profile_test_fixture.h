// The fixture of the profile tests (profile_test.cpp and the files beside it, one executable):
// a fresh folder, store and agent directory per test, the real agent over the `local`
// transport, and helpers to read the store and run CLI commands.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/cli/symbol_args.h"
#include "app/profiling/profile_job.h"

namespace sod2::profile_testing {

namespace fs = std::filesystem;
inline const std::string kBin = SOD2_BINARY_DIR "/bin";
inline const std::string kModels = SOD2_SHARED_DIR "/models";
inline const std::string kTests = SOD2_TEST_DATA_DIR;

class ProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_profile_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("SOD2_PLUGIN_DIR", (SOD2_BINARY_DIR "/lib/sod2/plugins"), 1);
    ::setenv("SOD2_AGENT", (kBin + "/sod2-agent").c_str(), 1);
    ::setenv("SOD2_AGENT_DIR", (dir_ / "agent").c_str(), 1);
    ::unsetenv("SOD2_ADB");
    db_ = (dir_ / "profiles.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A models.json entry as a ranges file for one model.
  std::string ranges_of(const std::string& model) {
    std::ifstream in(kModels + "/models.json");
    const nlohmann::json all = nlohmann::json::parse(in);
    for (const auto& m : all) {
      if (m["name"] != model) continue;
      const std::string path = (dir_ / (model + ".json")).string();
      std::ofstream(path) << m.dump();
      return path;
    }
    ADD_FAILURE() << "no model " << model << " in models.json";
    return "";
  }

  profiling::ProfileRequest yolo_request() {
    profiling::ProfileRequest r;
    r.model_path = kModels + "/yolo_tiny/model.onnx";
    r.bind = {{"height", 128}, {"width", 160}};
    r.rdp = cli::rdp_options_from(ranges_of("yolo_tiny"), std::nullopt);
    r.settings.runs = 3;
    r.settings.warmup = 1;
    r.settings.threads = 1;
    r.db_path = db_;
    return r;
  }

  int64_t count(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }

  int cli(int (*command)(const std::vector<std::string>&, std::ostream&, std::ostream&),
          const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return command(args, out_, err_);
  }

  fs::path dir_;
  std::string db_;
  std::ostringstream out_, err_;
};

}  // namespace sod2::profile_testing
