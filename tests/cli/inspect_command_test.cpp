// `sod2 inspect` driven in-process: exit codes, one-line errors, and the JSON document's contract.
#include <gtest/gtest.h>

#include <filesystem>
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
  bool saw_unknown_rank = false;
  for (const auto& v : doc["values"]) {
    ASSERT_TRUE(v.contains("rank") && v.contains("dims") && v.contains("dtype"));
    if (v["rank"].is_null()) {
      EXPECT_TRUE(v["dims"].is_null());
      saw_unknown_rank = true;
    }
  }
  EXPECT_TRUE(saw_unknown_rank);  // intermediate values carry no declared shape in this file
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
  for (const char* flag : {"--json", "--no-external-data", "--help"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace sod2::cli
