// `sod2 inspect` driven in-process: exit codes, one-line errors, and the JSON document's contract.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <unistd.h>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/inspect_command.h"

namespace sod2::cli {
namespace {

const std::string kSample = std::string(SOD2_SOURCE_DIR) + "/resources/models/sample_yolo_tiny.onnx";

struct CliRun {
  int code;
  std::string out, err;
};

CliRun inspect(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = run_inspect(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(InspectCommand, JsonCarriesTheDocumentedFields) {
  const CliRun r = inspect({kSample, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["schema_version"], 1);
  for (const char* key : {"model", "opset", "inputs", "outputs", "nodes", "values", "subgraphs",
                          "op_histogram", "counts", "diagnostics"})
    EXPECT_TRUE(doc.contains(key)) << key;
  EXPECT_EQ(doc["opset"], 17);
  ASSERT_EQ(doc["inputs"].size(), 1u);
  EXPECT_EQ(doc["inputs"][0]["name"], "image");
  EXPECT_EQ(doc["inputs"][0]["dims"], nlohmann::json({"1", "3", "height", "width"}));
  EXPECT_EQ(doc["counts"]["nodes"], 465);
  const auto& node = doc["nodes"][0];
  for (const char* key : {"name", "op", "inputs", "outputs", "subgraphs"})
    EXPECT_TRUE(node.contains(key)) << key;
  for (const auto& v : doc["values"]) {
    ASSERT_TRUE(v.contains("rank") && v.contains("dims") && v.contains("dtype"));
    EXPECT_FALSE(v["rank"].is_null()) << v["name"];  // RDP knows every rank of this model
  }
  std::map<std::string, std::string> class_of;
  for (const auto& n : doc["nodes"]) class_of[n["op"]] = n["class"];
  EXPECT_EQ(class_of["Shape"], "ISDO");
  EXPECT_EQ(class_of["Conv"], "ISDOS");
  EXPECT_EQ(class_of["Reshape"], "ISVDOS");
  EXPECT_EQ(class_of["NonZero"], "EDO");
  for (const char* key : {"values_total", "rank_unknown", "dims_total", "dims_constant",
                          "dims_symbolic", "dims_unknown", "dims_execution", "assumptions"})
    EXPECT_TRUE(doc["summary"].contains(key)) << key;
  EXPECT_EQ(doc["summary"]["dims_unknown"], 0);
}

TEST(InspectCommand, BindInstantiatesEveryDim) {
  const CliRun r = inspect({kSample, "--json", "--range", "height=32:1024:32,width=32:1024:32",
                            "--bind", "height=64,width=96"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["inputs"][0]["dims_at"], nlohmann::json({1, 3, 64, 96}));
  for (const auto& v : doc["values"]) ASSERT_TRUE(v.contains("dims_at")) << v["name"];
  // Execution-dependent dims stay null until bound.
  EXPECT_TRUE(doc["outputs"][1]["dims_at"][0].is_null());
}

TEST(InspectCommand, BindingOutsideTheRangeOrOffItsMultipleIsRefused) {
  for (const char* bind : {"height=48,width=64", "height=2048,width=64", "height=64"}) {
    const CliRun r = inspect({kSample, "--range", "height=32:1024:32,width=32:1024:32", "--bind", bind});
    EXPECT_EQ(r.code, 1) << bind;
    EXPECT_NE(r.err.find("--bind"), std::string::npos) << r.err;
  }
}

TEST(InspectCommand, ComparesWithLibonnxAndWritesShapes) {
  const auto out = std::filesystem::temp_directory_path() / ("sod2_shapes_" + std::to_string(::getpid()) + ".onnx");
  const CliRun r = inspect({kSample, "--json", "--compare-onnx", "--write-shapes", out.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.contains("onnx_summary"));
  EXPECT_GT(doc["onnx_summary"]["dims_unknown"].get<int>() + doc["onnx_summary"]["rank_unknown"].get<int>(),
            doc["summary"]["dims_unknown"].get<int>());
  // The written model carries RDP's shapes: inspecting it shows them as declared dims.
  const CliRun again = inspect({out.string(), "--json"});
  ASSERT_EQ(again.code, 0) << again.err;
  const auto doc2 = nlohmann::json::parse(again.out);
  size_t declared = 0;
  for (const auto& v : doc2["values"])
    if (v["kind"] == "node_output" && !v["declared_dims"].is_null()) ++declared;
  EXPECT_GT(declared, 250u);
  for (const auto& d : doc2["diagnostics"])
    EXPECT_EQ(d["message"].get<std::string>().find("RDP derives"), std::string::npos) << d["message"];
  std::filesystem::remove(out);
}

TEST(InspectCommand, TextSummaryListsInputsAndOps) {
  const CliRun r = inspect({kSample});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("image"), std::string::npos);
  EXPECT_NE(r.out.find("[1, 3, height, width]"), std::string::npos);
  EXPECT_NE(r.out.find("NonMaxSuppression 1"), std::string::npos);
  EXPECT_NE(r.out.find("465"), std::string::npos);
}

TEST(InspectCommand, FailuresAreOneLineAndExitOne) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"/no/such/model.onnx"}, {}, {kSample, "--bogus"}, {kSample, kSample}}) {
    const CliRun r = inspect(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty());
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_EQ(r.err.rfind("sod2 inspect: ", 0), 0u) << r.err;
  }
}

TEST(InspectCommand, HelpExplainsEveryOption) {
  const CliRun r = inspect({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* flag : {"--json", "--bind", "--range", "--ranges", "--compare-onnx",
                           "--write-shapes", "--no-external-data", "--help"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace sod2::cli
