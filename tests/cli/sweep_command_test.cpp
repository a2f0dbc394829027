// `sod2 sweep` driven in-process: every point is the plan `sod2 plan --bind` shows there (the
// plan that runs), layout changes are marked, points that cannot be planned carry their reason,
// and usage errors are one line with exit status 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../opt/golden_models.h"
#include "app/cli/plan_command.h"
#include "app/cli/sweep_command.h"

namespace sod2::cli {
namespace {

struct CliRun {
  int code;
  std::string out, err;
};

CliRun sweep(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_sweep(args, out, err);
  return {code, out.str(), err.str()};
}

CliRun plan(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_plan(args, out, err);
  return {code, out.str(), err.str()};
}

std::string write_model(const onnx::ModelProto& m, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sod2_sweep_test_" + std::to_string(::getpid()) + "_" + name + ".onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path.string();
}

TEST(SweepCommand, EveryPointIsThePlanShownAtThatBinding) {
  const std::string path = write_model(testing::nonzero_model(), "nonzero");
  const CliRun s = sweep({path, "--range", "n=1:100", "--sym", "n=1:100:9", "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto doc = nlohmann::json::parse(s.out);
  ASSERT_EQ(doc["points"].size(), 12u);  // 1, 10, ..., 100
  EXPECT_EQ(doc["symbol"]["step"], 9);
  int64_t previous = 0;
  for (const auto& p : doc["points"]) {
    ASSERT_FALSE(p.contains("error")) << p.dump();
    const int64_t n = p["value"].get<int64_t>();
    const CliRun one =
        plan({path, "--range", "n=1:100", "--bind", "n=" + std::to_string(n), "--json"});
    ASSERT_EQ(one.code, 0) << one.err;
    const auto shown = nlohmann::json::parse(one.out);
    EXPECT_EQ(p["arena_bytes"], shown["summary"]["arena_bytes"]) << "n=" << n;
    EXPECT_EQ(p["lower_bound_bytes"], shown["summary"]["lower_bound_bytes"]) << "n=" << n;
    EXPECT_EQ(p["version"], shown["binding"]["version"]) << "n=" << n;
    // NonZero's count at its bound grows with n: so does the arena.
    EXPECT_GE(p["arena_bytes"].get<int64_t>(), previous);
    EXPECT_FALSE(p.contains("greedy_bytes"));  // only with --greedy
    previous = p["arena_bytes"].get<int64_t>();
  }
  EXPECT_EQ(doc["summary"]["failed"], 0);
  std::filesystem::remove(path);
}

TEST(SweepCommand, WholeRangeByDefaultAndATextTable) {
  const std::string path = write_model(testing::residual_mlp_model(), "mlp");
  const CliRun s = sweep({path, "--range", "n=1:1000", "--sym", "n"});
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.out.find("sweep    n = 1..1000 step 16 (63 points)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("arena/LB"), std::string::npos);
  EXPECT_NE(s.out.find("summary  63 of 63 points planned"), std::string::npos) << s.out;
  std::filesystem::remove(path);
}

// Per-group curves (#24 item 1): each group's operations and bytes at every point are what
// `sod2 plan --bind --json` reports for that group there; the text names the groups with the
// most work and how it grew.
TEST(SweepCommand, PerGroupCurvesAreThePlansGroupCountsAtEachPoint) {
  const std::string path = write_model(testing::residual_mlp_model(), "mlp_groups");
  const CliRun s =
      sweep({path, "--range", "n=1:1000", "--sym", "n=1:1000:333", "--groups", "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto doc = nlohmann::json::parse(s.out);
  ASSERT_GE(doc["groups"].size(), 2u);
  ASSERT_EQ(doc["points"].size(), 4u);
  for (const auto& p : doc["points"]) {
    const int64_t n = p["value"].get<int64_t>();
    const CliRun one =
        plan({path, "--range", "n=1:1000", "--bind", "n=" + std::to_string(n), "--json"});
    ASSERT_EQ(one.code, 0) << one.err;
    const auto shown = nlohmann::json::parse(one.out);
    ASSERT_EQ(p["group_ops"].size(), shown["groups"].size());
    for (size_t i = 0; i < shown["groups"].size(); ++i) {
      const auto& grp = shown["groups"][i];
      EXPECT_EQ(p["group_ops"][i], grp["ops"].is_null() ? nlohmann::json(-1) : grp["ops"])
          << "n=" << n << " group " << i;
      EXPECT_EQ(p["group_bytes"][i],
                grp["bytes_moved"].is_null() ? nlohmann::json(-1) : grp["bytes_moved"])
          << "n=" << n << " group " << i;
    }
  }
  // Linear in n: the last point's work is about 1000x the first's.
  const auto& first = doc["points"][0]["group_ops"];
  const auto& last = doc["points"][3]["group_ops"];
  int64_t total_first = 0, total_last = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    total_first += std::max<int64_t>(first[i].get<int64_t>(), 0);
    total_last += std::max<int64_t>(last[i].get<int64_t>(), 0);
  }
  EXPECT_EQ(total_last, 1000 * total_first);
  const CliRun text = sweep({path, "--range", "n=1:1000", "--sym", "n=1:1000:333", "--groups"});
  ASSERT_EQ(text.code, 0) << text.err;
  for (const char* part : {"groups   by operations at n=1000, from n=1", "ops x", "1000.00x",
                           "ops/B first", "ops/B last"})
    EXPECT_NE(text.out.find(part), std::string::npos) << part << "\n" << text.out;
  EXPECT_EQ(sweep({path, "--range", "n=1:1000", "--sym", "n", "--top", "3"}).code, 1);
  std::filesystem::remove(path);
}

// gpt_tiny_kv over wide ranges: some bindings run their bucket's version, others a layout made
// for their own sizes; the sweep says where the layout changes.
TEST(SweepCommand, MarksWhereTheLayoutChanges) {
  const std::string model = std::string(SOD2_SHARED_DIR) + "/models/gpt_tiny_kv/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no shared models at " << model;
  const CliRun s = sweep({model, "--range", "batch=1:64:1,seq=1:1024:1,past=0:512:1", "--sym",
                          "seq=1:1024:16", "--bind", "batch=1,past=4", "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto doc = nlohmann::json::parse(s.out);
  ASSERT_EQ(doc["points"].size(), 64u);
  EXPECT_EQ(doc["held"]["batch"], 1);
  EXPECT_FALSE(doc["version_changes"].empty());
  bool greedy = false;
  for (const auto& p : doc["points"]) greedy |= p["version"] == -2;
  EXPECT_TRUE(greedy);
  for (const auto& c : doc["version_changes"]) EXPECT_NE(c["from"], c["to"]);
}

TEST(SweepCommand, AnUnplannablePointIsPartOfTheCurveWithItsReason) {
  // Off the symbol's multiple: that point fails, the others are planned.
  const std::string path = write_model(testing::chain_model(), "chain");
  const CliRun s = sweep({path, "--range", "n=2:64:2", "--sym", "n=2:8:1", "--json"});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto doc = nlohmann::json::parse(s.out);
  ASSERT_EQ(doc["points"].size(), 7u);
  EXPECT_EQ(doc["summary"]["failed"], 3);
  EXPECT_TRUE(doc["points"][1].contains("error"));
  EXPECT_NE(doc["points"][1]["error"].get<std::string>().find("3"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(SweepCommand, UsageErrorsAreOneLineAndExitOne) {
  const std::string path = write_model(testing::chain_model(), "chain_errors");
  for (const auto& [args, needle] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{path}, "--sym NAME[=lo:hi[:step]] is required"},
           {{path, "--sym", "batch"}, "'batch' is not an input symbol of the model (n)"},
           {{path, "--range", "n=1:64", "--sym", "n=0:10"}, "outside its range 1:64"},
           {{path, "--sym", "n=1:x"}, "hi 'x' is not a whole number"},
           {{path, "--sym", "n=1:8:0"}, "the step must be at least 1"},
           {{path, "--sym", "n", "--bind", "n=3"}, "both swept (--sym) and held (--bind)"},
           {{"/nonexistent.onnx", "--sym", "n"}, "/nonexistent.onnx"},
       }) {
    const CliRun r = sweep(args);
    EXPECT_EQ(r.code, 1) << needle;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  std::filesystem::remove(path);
}

TEST(SweepCommand, HelpListsTheOptions) {
  const CliRun r = sweep({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--sym", "--bind", "--range", "--ranges", "--json"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace sod2::cli
