// The family commands end to end, in-process: `sod2 compile --family`, `sod2 profile --family`
// (through the local transport and the real agent) and `sod2 ofa` (short runs: the test asserts
// what is printed and where expected latencies come from, never how fast anything ran). Then the
// pieces the commands share: the --load parser and the Pareto front.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/cli/compile_command.h"
#include "app/cli/device_commands.h"
#include "app/cli/ofa_command.h"
#include "app/ofa/family_profile.h"
#include "runtime/family/family_demo.h"
#include "runtime/family/family_package.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;
const std::string kFamily = SOD2_SHARED_DIR "/models/dofa_mbv3/variants.json";
const std::string kBind = "batch=1,height=64,width=64";

struct Result {
  int status;
  std::string out, err;
};

template <typename F>
Result call(F command, std::vector<std::string> args) {
  std::ostringstream out, err;
  const int status = command(args, out, err);
  return {status, out.str(), err.str()};
}

class OfaCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sod2_ofa_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("SOD2_PLUGIN_DIR", (SOD2_BINARY_DIR "/lib/sod2/plugins"), 1);
    ::setenv("SOD2_AGENT", (SOD2_BINARY_DIR "/bin/sod2-agent"), 1);
    ::setenv("SOD2_AGENT_DIR", (dir_ / "agent").c_str(), 1);
    db_ = (dir_ / "profiles.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string db_;
};

TEST_F(OfaCommands, CompileFamilyWritesOnePackageSmallerThanTheSeparateOnes) {
  const std::string pkg = (dir_ / "dofa.sod2").string();
  Result r = call(cli::run_compile, {"--family", kFamily, "-o", pkg, "--range",
                                     "batch=1:8,height=32:320,width=32:320"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4 variants"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("family / separate: 0."), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("compiling max (4/4)"), std::string::npos) << r.err;
  EXPECT_TRUE(rt::is_family_package_file(pkg));
  // A model next to --family is a mistake, not something to ignore.
  Result both = call(cli::run_compile, {"--family", kFamily, "model.onnx"});
  EXPECT_EQ(both.status, 1);
  EXPECT_NE(both.err.find("drop model.onnx"), std::string::npos) << both.err;
}

TEST_F(OfaCommands, OfaRunsWithAndWithoutTheManagerAndCompares) {
  Result r = call(cli::run_ofa, {kFamily, "--budget-ms", "1000", "--duration-s", "0.3", "--bind",
                                 kBind, "--threads", "1", "--db", db_, "--load", "0.1:0.2:1"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* want : {"family dofa_mbv3: 4 variants", "(measured: median of 3 warm-up runs)",
                           "with the manager:", "largest variant alone:", "comparison (budget",
                           "switching variant:", "load 0.1-0.2 s on 1 busy processes"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << " missing in\n" << r.out;
  }
}

TEST_F(OfaCommands, ProfileFamilyFeedsTheExpectedLatenciesOfOfa) {
  Result p = call(cli::run_profile, {"--family", kFamily, "--bind", kBind, "--runs", "2",
                                     "--warmup", "0", "--threads", "1", "--db", db_});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(p.out.find("Pareto front (low latency, high MACs):"), std::string::npos) << p.out;
  for (const char* v : {"small", "medium", "large", "max"})
    EXPECT_NE(p.out.find(std::string("  ") + v), std::string::npos) << v;
  Result o = call(cli::run_ofa, {kFamily, "--budget-ms", "1000", "--duration-s", "0.2", "--bind",
                                 kBind, "--threads", "1", "--db", db_, "--no-compare"});
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("(from the profile store)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("largest variant alone"), std::string::npos);
  // Other bindings have no profiles: measured again.
  Result other = call(
      cli::run_ofa, {kFamily, "--budget-ms", "1000", "--duration-s", "0.1", "--bind",
                     "batch=1,height=32,width=32", "--threads", "1", "--db", db_, "--no-compare"});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_NE(other.out.find("(measured"), std::string::npos) << other.out;
}

// Through the agent on a (stand-in) phone: the family package is sent, the demo and its load run
// on the device, and the points stream back.
TEST_F(OfaCommands, OfaRunsOnADeviceThroughItsAgent) {
  ::setenv("SOD2_ADB", SOD2_TEST_DATA_DIR "/../device/fake_adb.sh", 1);
  ::setenv("FAKE_ADB_ROOT", dir_.c_str(), 1);
  std::ofstream(dir_ / "devices") << "FAKE01 device Fake_Phone\n";
  Result r = call(cli::run_ofa, {kFamily, "--budget-ms", "1000", "--duration-s", "0.3", "--bind",
                                 kBind, "--threads", "1", "--db", db_, "--device", "adb:FAKE01",
                                 "--load", "0.1:0.2:1", "--timeline-ms", "50"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  for (const char* want :
       {"device adb:FAKE01", "package: ", "measured on the device",
        "with the manager:", "largest variant alone:", "comparison (budget", "one arena of"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << " missing in\n" << r.out;
  }
  // The same family again: the device has the package already.
  Result again =
      call(cli::run_ofa, {kFamily, "--budget-ms", "1000", "--duration-s", "0.1", "--bind", kBind,
                          "--threads", "1", "--db", db_, "--device", "adb:FAKE01", "--no-compare"});
  ::unsetenv("SOD2_ADB");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("(on the device already)"), std::string::npos) << again.out;
}

TEST_F(OfaCommands, BadArgumentsAreOneLineErrors) {
  struct Case {
    std::vector<std::string> args;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {{kFamily}, "--budget-ms is required"},
      {{kFamily, "--budget-ms", "-3"}, "--budget-ms expects a positive number"},
      {{kFamily, "--budget-ms", "10", "--load", "5:2"}, "T1 > T0"},
      {{kFamily, "--budget-ms", "10", "--load", "1:2:0"}, "THREADS must be"},
      {{(dir_ / "none.sod2").string(), "--budget-ms", "10"}, "none.sod2"},
      {{kFamily, "--budget-ms", "10", "--floor", "tiny", "--bind", kBind}, "no variant 'tiny'"},
      {{}, "expected exactly one FAMILY"},
  };
  for (const Case& c : cases) {
    Result r = call(cli::run_ofa, c.args);
    EXPECT_EQ(r.status, 1) << c.expect;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << "got: " << r.err;
  }
}

TEST(LoadSchedule, ParsesStartStopAndThreads) {
  auto s = rt::parse_load_schedule("3:8:2", 4);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->start_s, 3);
  EXPECT_EQ(s->stop_s, 8);
  EXPECT_EQ(s->threads, 2);
  auto d = rt::parse_load_schedule("0.5:1", 4);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->threads, 4);
  for (const char* bad : {"", "3", "3:x", "8:3", "-1:2", "1:2:3:4", "1:2:1.5"})
    EXPECT_FALSE(rt::parse_load_schedule(bad, 4).ok()) << bad;
}

TEST(ParetoFront, KeepsPointsNoOtherBeatsOnBothAxes) {
  // (latency, value): b is slower and smaller than a, so it is off the front.
  EXPECT_EQ(ofa::pareto_front({1, 2, 3, 4}, {10, 5, 20, 30}),
            (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(ofa::pareto_front({1, 1}, {5, 5}), (std::vector<bool>{true, true}));
  EXPECT_EQ(ofa::pareto_front({}, {}), std::vector<bool>{});
}

}  // namespace
}  // namespace sod2
