// Every test_data_set of every model in ../shared/models through the Vulkan backend (lavapipe
// where there is no GPU), compiled with generated shaders: each output matches the reference at
// `sod2 run`'s tolerances (rtol 1e-3, atol 1e-4), twice in a row, with no validation error. What
// ran on the CPU, and why, is printed per model.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "../opt/corpus.h"
#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "vulkan_test_util.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

class VulkanCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(VulkanCorpus, EveryTestDataSetMatchesTheReference) {
  auto vk = testing::make_vulkan();
  SOD2_REQUIRE_VULKAN(vk);
  const int errors_before = vk.context->validation_errors();
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  auto model = import_onnx_file(found->file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  pipeline::CompileOptions options;
  options.rdp = found->options;
  options.target = sod2::pipeline::Target::kVulkan;
  auto program = pipeline::compile_program(*model, options);
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  rt::SessionOptions session_options;
  session_options.threads = 2;
  session_options.backend = vk.backend;
  auto session = rt::Session::create(*program, rt::KernelRegistry::standard(), session_options);
  ASSERT_TRUE(session.ok()) << session.status().to_string();

  // Where the nodes run, for the log (and the closing note's fallback list).
  const rt::GraphDesc& g = (*session)->program().graphs[0];
  int groups = 0, grouped = 0, builtin = 0;
  std::map<std::string, int> cpu;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const auto& where = (*session)->node_backends()[n];
    if (where.device) {
      if (g.nodes[n].info.op_type == "GpuElementwise") {
        ++groups;
        grouped += static_cast<int>(g.nodes[n].fused_nodes.size());
      } else {
        ++builtin;
      }
    } else {
      ++cpu[where.why_cpu];
    }
  }
  std::cout << "[vulkan] " << GetParam() << ": " << groups << " groups (" << grouped << " nodes), "
            << builtin << " hand-written-shader nodes on the device; CPU:";
  for (const auto& [what, count] : cpu) std::cout << " " << count << "x " << what << ";";
  std::cout << "\n";

  int sets = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (int set = 0;; ++set) {
      const fs::path dir = found->file.parent_path() / ("test_data_set_" + std::to_string(set));
      if (!fs::is_directory(dir)) break;
      ++sets;
      auto inputs = testing::read_test_data(dir, "input_");
      auto expected = testing::read_test_data(dir, "output_");
      ASSERT_TRUE(inputs.ok() && expected.ok()) << dir;
      std::vector<rt::Tensor> views;
      for (const auto& h : *inputs) views.push_back(h.view());
      auto outputs = (*session)->run(views);
      ASSERT_TRUE(outputs.ok()) << dir << ": " << outputs.status().to_string();
      ASSERT_GE(outputs->size(), expected->size());
      for (size_t i = 0; i < expected->size(); ++i) {
        const cli::Comparison c =
            cli::compare_tensors((*outputs)[i], (*expected)[i].view(), 1e-3, 1e-4);
        EXPECT_TRUE(c.ok()) << dir << " output " << i << " (pass " << pass << "): shape "
                            << (*outputs)[i].shape.to_string() << " vs "
                            << (*expected)[i].shape().to_string() << ", max abs " << c.max_abs
                            << ", max rel " << c.max_rel << ", " << c.mismatches << " mismatches";
      }
    }
  }
  EXPECT_GT(sets, 0);
  // A model the backend takes nothing of (an LSTM in a Loop) still runs, all on the CPU.
  if (groups + builtin > 0) EXPECT_GT(vk.backend->counters().dispatches, 0);
  EXPECT_EQ(vk.context->validation_errors(), errors_before)
      << testing::validation_report(*vk.context);
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, VulkanCorpus,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         test_name);

}  // namespace
}  // namespace sod2
