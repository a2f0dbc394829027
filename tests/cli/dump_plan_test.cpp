// #18 item 3 through the tool a person uses: `sod2 run --bind B --dump-plan FILE` writes the plan
// the runtime instantiated, and `sod2 plan --bind` at the values that run bound (execution
// symbols included) prints the same version, arena, every tensor's size and offset, and the same
// steps in order, on every shared model at its first binding.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/cli/plan_command.h"
#include "app/cli/run_command.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::cli {
namespace {

namespace fs = std::filesystem;

struct SharedModel {
  std::string name, file, ranges, bind;
};

std::vector<SharedModel> shared_models() {
  const fs::path root = SOD2_SHARED_DIR "/models";
  std::ifstream in(root / "models.json");
  if (!in) return {};
  const fs::path dir = fs::temp_directory_path() / ("sod2_dump_plan_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<SharedModel> out;
  for (const auto& m : nlohmann::json::parse(in)) {
    SharedModel s;
    s.name = m["name"].get<std::string>();
    s.file = (root / m["file"].get<std::string>()).string();
    std::string safe = s.name;
    for (char& c : safe)
      if (c == '/') c = '_';
    s.ranges = (dir / (safe + ".json")).string();
    std::ofstream(s.ranges) << m.dump();
    for (const auto& [k, v] : m["bindings"][0].items())
      s.bind += (s.bind.empty() ? "" : ",") + k + "=" + std::to_string(v.get<int64_t>());
    out.push_back(std::move(s));
  }
  return out;
}

class DumpPlan : public ::testing::TestWithParam<SharedModel> {};

TEST_P(DumpPlan, ThePlanPrintedAtTheRunsValuesIsThePlanItRan) {
  const SharedModel& m = GetParam();
  const std::string dumped =
      fs::temp_directory_path() / ("sod2_dump_plan_" + std::to_string(::getpid()) + ".json");
  std::ostringstream out, err;
  ASSERT_EQ(
      run_run({m.file, "--ranges", m.ranges, "--bind", m.bind, "--dump-plan", dumped}, out, err), 0)
      << err.str();
  std::ifstream in(dumped);
  const nlohmann::json ran = nlohmann::json::parse(in);
  // Every symbol as the run bound it: the execution symbols too (NonZero's count, TopK's k...).
  std::string bind;
  for (const auto& [k, v] : ran["binding"]["values"].items())
    bind += (bind.empty() ? "" : ",") + k + "=" + std::to_string(v.get<int64_t>());
  std::ostringstream plan_out, plan_err;
  ASSERT_EQ(run_plan({m.file, "--ranges", m.ranges, "--bind", bind, "--json"}, plan_out, plan_err),
            0)
      << plan_err.str();
  const nlohmann::json shown = nlohmann::json::parse(plan_out.str());
  EXPECT_EQ(shown["binding"]["version"], ran["binding"]["version"]);
  EXPECT_EQ(shown["summary"]["arena_bytes"], ran["arena_bytes"]);
  ASSERT_EQ(shown["tensors"].size(), ran["tensors"].size());
  for (size_t t = 0; t < ran["tensors"].size(); ++t) {
    const auto& a = shown["tensors"][t];
    const auto& b = ran["tensors"][t];
    ASSERT_EQ(a["name"], b["name"]) << "tensor " << t;
    EXPECT_EQ(a["size"], b["size"]) << b["name"];
    EXPECT_EQ(a["offset"], b["offset"]) << b["name"];
    // The values viewing the tensor's bytes, as the compiler listed them and as the run found
    // them (the compiler in node order, the run in step order).
    auto sorted = [](const nlohmann::json& names) {
      std::vector<std::string> v = names.get<std::vector<std::string>>();
      std::sort(v.begin(), v.end());
      return v;
    };
    EXPECT_EQ(sorted(shown["plan"]["tensors"][t]["views"]), sorted(b["views"])) << b["name"];
    const std::string layout = b["layout"].get<std::string>();
    EXPECT_TRUE(layout == "plain" || layout == "nChw16c" || layout == "nChw8c") << layout;
  }
  // The order also lists nodes in no group (group -1): constants the package holds, computed
  // when it was compiled, which the run has no step for.
  std::vector<nlohmann::json> steps;
  for (const auto& step : shown["order"]["steps"])
    if (step["group"].get<int>() >= 0) steps.push_back(step["nodes"]);
  ASSERT_EQ(steps.size(), ran["steps"].size());
  for (size_t s = 0; s < steps.size(); ++s)
    EXPECT_EQ(steps[s], ran["steps"][s]["nodes"]) << "step " << s;
  fs::remove(dumped);
}

// Which tensors the session held channel-blocked (the same size and offset, another order of
// their bytes), and none with --plain-layout.
TEST(DumpPlanLayout, NamesTheTensorsHeldChannelBlocked) {
  const std::string sample =
      std::string(SOD2_SOURCE_DIR) + "/resources/models/sample_yolo_tiny.onnx";
  auto blocked_tensors = [&](bool plain) {
    const std::string dumped =
        fs::temp_directory_path() / ("sod2_dump_layout_" + std::to_string(::getpid()) + ".json");
    std::vector<std::string> args = {sample,
                                     "--range",
                                     "height=32:256:32,width=32:256:32",
                                     "--bind",
                                     "height=64,width=96",
                                     "--runs",
                                     "1",
                                     "--dump-plan",
                                     dumped};
    if (plain) args.push_back("--plain-layout");
    std::ostringstream out, err;
    EXPECT_EQ(run_run(args, out, err), 0) << err.str();
    std::ifstream in(dumped);
    const nlohmann::json ran = nlohmann::json::parse(in);
    int blocked = 0;
    for (const auto& t : ran["tensors"]) blocked += t["layout"] != "plain";
    fs::remove(dumped);
    return blocked;
  };
  EXPECT_EQ(blocked_tensors(true), 0);
  if (rt::KernelRegistry::standard().channel_block() == 0)
    GTEST_SKIP() << "no blocked convolutions on this CPU or build";
  EXPECT_GT(blocked_tensors(false), 0);
}

INSTANTIATE_TEST_SUITE_P(SharedModels, DumpPlan, ::testing::ValuesIn(shared_models()),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DumpPlan);

}  // namespace
}  // namespace sod2::cli
