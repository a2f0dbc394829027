// `sod2 plan` driven in-process: the JSON document's contract (checked against an independent
// overlap check of the tensors it lists), the text form, and one-line errors with exit status 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "app/cli/plan_command.h"
#include "golden_models.h"

namespace sod2::cli {
namespace {

const std::string kSample =
    std::string(SOD2_SOURCE_DIR) + "/resources/models/sample_yolo_tiny.onnx";

struct CliRun {
  int code;
  std::string out, err;
};

CliRun plan(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_plan(args, out, err);
  return {code, out.str(), err.str()};
}

std::string write_model(const onnx::ModelProto& m, const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sod2_plan_test_" + std::to_string(::getpid()) + "_" + name + ".onnx");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
  return path.string();
}

TEST(PlanCommand, JsonCarriesTheDocumentedFieldsAndAValidLayout) {
  const CliRun r = plan({kSample, "--range", "height=32:1024:32,width=32:1024:32", "--bind",
                         "height=320,width=320", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 2);
  for (const char* key :
       {"model", "symbols", "order", "groups", "plan", "binding", "tensors", "summary", "warnings"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["binding"]["kind"], "bound");
  EXPECT_EQ(doc["binding"]["values"]["height"], 320);
  // Execution symbols nobody bound take their upper bound.
  EXPECT_EQ(doc["binding"]["values"]["NonMaxSuppression.out0.d0"], 300);
  const auto& s = doc["summary"];
  for (const char* key :
       {"arena_bytes", "lower_bound_bytes", "naive_bytes", "greedy_bytes",
        "source_order_peak_bytes", "groups", "kernels_unfused", "plan_instantiate_us"})
    EXPECT_TRUE(s.contains(key)) << key;
  EXPECT_GE(s["arena_bytes"], s["lower_bound_bytes"]);
  EXPECT_GE(s["naive_bytes"], s["arena_bytes"]);
  EXPECT_LE(s["lower_bound_bytes"], s["source_order_peak_bytes"]);
  EXPECT_LT(s["groups"], s["kernels_unfused"]);
  EXPECT_EQ(doc["groups"].size(), s["groups"].get<size_t>());
  size_t grouped = 0;
  for (const auto& grp : doc["groups"]) {
    for (const char* key : {"id", "kind", "nodes", "inputs", "outputs", "not_fused"})
      ASSERT_TRUE(grp.contains(key)) << key;
    grouped += grp["nodes"].size();
  }
  EXPECT_EQ(grouped, s["kernels_unfused"].get<size_t>());
  // One step per group, plus one per Constant node (no kernel; its value is in the package).
  size_t group_steps = 0, nodes_run = 0;
  for (const auto& step : doc["order"]["steps"]) {
    nodes_run += step["nodes"].size();
    if (step["group"] >= 0) {
      ++group_steps;
    } else {
      EXPECT_EQ(step["ops"], nlohmann::json::array({"Constant"}));
    }
  }
  EXPECT_EQ(group_steps, doc["groups"].size());
  EXPECT_EQ(nodes_run, 465u);

  // The listed tensors, checked here without the verifier: aligned, inside the arena, and no
  // two that live at the same step share a byte.
  const auto& t = doc["tensors"];
  ASSERT_EQ(t.size(), doc["plan"]["tensors"].size());
  const int64_t arena = s["arena_bytes"];
  for (size_t i = 0; i < t.size(); ++i) {
    for (const char* key : {"name", "size", "offset", "first_step", "last_step"})
      ASSERT_TRUE(t[i].contains(key)) << key;
    const int64_t off = t[i]["offset"], size = t[i]["size"];
    EXPECT_EQ(off % 64, 0);
    EXPECT_LE(off + size, arena);
    for (size_t j = 0; j < i; ++j) {
      const bool live_together =
          t[i]["first_step"] <= t[j]["last_step"] && t[j]["first_step"] <= t[i]["last_step"];
      const int64_t o2 = t[j]["offset"], s2 = t[j]["size"];
      const bool share = size > 0 && s2 > 0 && off < o2 + s2 && o2 < off + size;
      EXPECT_FALSE(live_together && share) << t[i]["name"] << " and " << t[j]["name"];
    }
  }
}

TEST(PlanCommand, WithoutBindShowsThePlanAtTheUpperBounds) {
  const CliRun r = plan({kSample, "--range", "height=32:1024:32,width=32:1024:32", "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["binding"]["kind"], "upper_bounds");
  EXPECT_EQ(doc["binding"]["values"]["height"], 1024);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(PlanCommand, TextFormShowsOrderPlanBindingAndSummary) {
  const std::string path = write_model(testing::residual_mlp_model(), "residual");
  const CliRun r = plan({path, "--range", "n=1:64", "--bind", "n=3", "--verbose"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Fused: h and c stay inside their groups; r, g and y are all live at the last step.
  for (const char* line :
       {"order    source: peak 24576 bytes at the upper bounds (source order 24576)",
        "     1  fc1 (+1)  MatMul+Relu", "  r       0..2   64*n   256*n", "arena    384*n",
        "binding  n=3",
        "arena    1152 bytes; lower bound 1152, greedy 1152, naive 1152, source order peak 1152",
        "groups   3 (5 kernels unfused)", "  1  contraction: fc1, act",
        "summary  arena 1152 bytes = 1.000 x lower bound; 3 groups (5 kernels unfused)"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;

  const CliRun unfused =
      plan({path, "--range", "n=1:64", "--bind", "n=3", "--no-fusion", "--verbose"});
  ASSERT_EQ(unfused.code, 0) << unfused.err;
  for (const char* line :
       {"order    source: peak 36864 bytes at the upper bounds (source order 36864)",
        "  r       0..4   64*n   512*n", "arena    576*n",
        "arena    1728 bytes; lower bound 1728, greedy 1728, naive 2112, source order peak 1728",
        "groups   none, planned without fusion: 5 kernels, one node each",
        "summary  arena 1728 bytes = 1.000 x lower bound; 5 groups (5 kernels unfused)"})
    EXPECT_NE(unfused.out.find(line), std::string::npos) << line << "\n" << unfused.out;
  std::filesystem::remove(path);
}

TEST(PlanCommand, SaysWhichExecutionSymbolsItSizesAtTheirBound) {
  const std::string path = write_model(testing::nonzero_model(), "nonzero");
  // Not bound: NonZero's count is sized at its bound, the element count of its input.
  const CliRun at_bound = plan({path, "--range", "n=1:100", "--bind", "n=10"});
  ASSERT_EQ(at_bound.code, 0) << at_bound.err;
  EXPECT_NE(at_bound.out.find("execution symbol nonzero.out0.d1 = 40 (at its bound "),
            std::string::npos)
      << at_bound.out;
  // Bound by --bind: no such line, and the JSON says where each value came from.
  const CliRun bound =
      plan({path, "--range", "n=1:100", "--bind", "n=10,nonzero.out0.d1=3", "--json"});
  ASSERT_EQ(bound.code, 0) << bound.err;
  const auto doc = nlohmann::json::parse(bound.out);
  int seen = 0;
  for (const auto& sym : doc["symbols"]) {
    if (sym["name"] == "n") {
      EXPECT_EQ(sym["value_source"], "bind");
      ++seen;
    }
    if (sym["name"] == "nonzero.out0.d1") {
      EXPECT_EQ(sym["value"], 3);
      EXPECT_EQ(sym["value_source"], "bind");
      EXPECT_FALSE(sym["bound"].get<std::string>().empty());
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2) << bound.out.substr(0, 2000);
  const CliRun json_at_bound = plan({path, "--range", "n=1:100", "--bind", "n=10", "--json"});
  ASSERT_EQ(json_at_bound.code, 0) << json_at_bound.err;
  for (const auto& sym : nlohmann::json::parse(json_at_bound.out)["symbols"])
    if (sym["name"] == "nonzero.out0.d1") EXPECT_EQ(sym["value_source"], "execution_bound");
  // Above its bound: an error naming the symbol and the limit.
  const CliRun above = plan({path, "--range", "n=1:100", "--bind", "n=10,nonzero.out0.d1=41"});
  EXPECT_EQ(above.code, 1);
  EXPECT_NE(above.err.find("nonzero.out0.d1"), std::string::npos) << above.err;
  EXPECT_NE(above.err.find("40"), std::string::npos) << above.err;
  std::filesystem::remove(path);
}

TEST(PlanCommand, SaysWhenABindingRunsALayoutMadeForItsOwnSizes) {
  // gpt_tiny_kv over wide ranges, at batch 1, seq 200, past 4: its bucket's plan version is 4.1%
  // above the peak of live bytes, a layout for these exact sizes is within 1% of it, and with no
  // execution symbol the runtime uses that one.
  const std::string model = std::string(SOD2_SHARED_DIR) + "/models/gpt_tiny_kv/model.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no shared models at " << model;
  const std::vector<std::string> args{model, "--range", "batch=1:64:1,seq=1:1024:1,past=0:512:1",
                                      "--bind", "batch=1,seq=200,past=4"};
  std::vector<std::string> json_args = args;
  json_args.push_back("--json");
  const CliRun j = plan(json_args);
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["binding"]["version"], -2);
  EXPECT_EQ(doc["binding"]["layout"], "greedy by size at this binding");
  EXPECT_GT(doc["binding"]["version_arena_bytes"].get<int64_t>(),
            doc["summary"]["arena_bytes"].get<int64_t>());
  EXPECT_LE(doc["summary"]["arena_bytes"].get<int64_t>(),
            doc["summary"]["greedy_bytes"].get<int64_t>());
  EXPECT_LE(doc["summary"]["arena_bytes"].get<double>(),
            1.01 * doc["summary"]["lower_bound_bytes"].get<double>());
  const CliRun t = plan(args);
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(t.out.find("layout   greedy by size at this binding"), std::string::npos) << t.out;
}

TEST(PlanCommand, WarnsAboutSymbolsWithoutARange) {
  const std::string path = write_model(testing::chain_model(), "chain");
  const CliRun r = plan({path, "--bind", "n=2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("sod2 plan: warning: no range declared for n"), std::string::npos) << r.err;
  std::filesystem::remove(path);
}

TEST(PlanCommand, ErrorsAreOneLineAndExitOne) {
  const std::vector<std::vector<std::string>> cases{
      {},
      {kSample, "--frobnicate"},
      {"/no/such/model.onnx"},
      {kSample, "--range", "height=32:1024:32,width=32:1024:32", "--bind", "height=33,width=64"},
      {kSample, "--bind", "height=64"},
      {kSample, "--bind", "nosuch=1,height=64,width=64"},
      {kSample, "--range", "height=10:1"},
  };
  for (const auto& args : cases) {
    const CliRun r = plan(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty());
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("sod2 plan: ", 0), 0u) << r.err;
  }
}

TEST(PlanCommand, HelpListsTheOptions) {
  const CliRun r = plan({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--bind", "--range", "--ranges", "--json", "--source-order"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace sod2::cli
