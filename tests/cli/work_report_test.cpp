// The operations a model does, as `sod2 inspect`, `sod2 plan`, `sod2 sweep` and `sod2 run` report
// them: one count (core/opt/model_work.h), the same number at the same binding in every tool.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "../opt/golden_models.h"
#include "app/cli/inspect_command.h"
#include "app/cli/plan_command.h"
#include "app/cli/run_command.h"
#include "app/cli/sweep_command.h"

namespace sod2::cli {
namespace {

struct CliRun {
  int code;
  std::string out, err;
};

template <typename Command>
CliRun call(Command command, std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

class WorkReport : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("sod2_work_report_" + std::to_string(::getpid()) + ".onnx"))
                .string();
    std::ofstream(path_, std::ios::binary) << testing::residual_mlp_model().SerializeAsString();
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

// residual_mlp at n = 5: Relu 80, MatMul 2*5*64*16, Relu 320, MatMul 2*5*16*64, Add 80.
constexpr int64_t kOpsAtFive = 80 + 10240 + 320 + 10240 + 80;

TEST_F(WorkReport, PlanRunAndSweepReportOneCount) {
  const CliRun plan = call(run_plan, {path_, "--range", "n=1:64", "--bind", "n=5", "--json"});
  ASSERT_EQ(plan.code, 0) << plan.err;
  const auto p = nlohmann::json::parse(plan.out);
  EXPECT_EQ(p["work"]["ops_at_binding"], kOpsAtFive);
  EXPECT_EQ(p["work"]["uncounted"].size(), 0u);
  EXPECT_EQ(p["work"]["at_most"], false);
  // Each group's count, summed, is the model's.
  int64_t groups = 0;
  for (const auto& g : p["groups"]) groups += g["ops"].get<int64_t>();
  EXPECT_EQ(groups, kOpsAtFive);

  const CliRun run = call(run_run, {path_, "--range", "n=1:64", "--bind", "n=5", "--runs", "2",
                                    "--warmup", "1", "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto r = nlohmann::json::parse(run.out);
  EXPECT_EQ(r["ops"], kOpsAtFive);
  EXPECT_EQ(r["ops_complete"], true);
  EXPECT_GT(r["gops_per_s"].get<double>(), 0.0);

  const CliRun sweep = call(run_sweep, {path_, "--range", "n=1:64", "--sym", "n=5:6", "--json"});
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  const auto s = nlohmann::json::parse(sweep.out);
  EXPECT_EQ(s["points"][0]["ops"], kOpsAtFive);
  // Every node is linear in n.
  EXPECT_EQ(s["points"][1]["ops"], kOpsAtFive / 5 * 6);
}

TEST_F(WorkReport, InspectPrintsTheCountAsAnExpression) {
  const CliRun text = call(run_inspect, {path_, "--range", "n=1:64", "--bind", "n=5"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("work      4192*n operations = 21 kOP at --bind"), std::string::npos)
      << text.out;
  const CliRun json = call(run_inspect, {path_, "--range", "n=1:64", "--json"});
  ASSERT_EQ(json.code, 0) << json.err;
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["work"]["ops"], "4192*n");
  EXPECT_EQ(j["work"]["node_ops"]["fc1"], "2048*n");
}

}  // namespace
}  // namespace sod2::cli
