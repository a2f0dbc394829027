// Models of opsets 18-23 (tests/onnx/opset18plus/cases, written by make_opset18plus_models.cpp)
// imported, compiled and run by the CPU runtime; each output matches ONNX Runtime 1.30's
// (recorded by run_ort.js) at the default tolerances of `sod2 run` (rtol 1e-3, atol 1e-4).
// Regenerate the cases with tests/onnx/opset18plus/generate.sh.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "../opt/corpus.h"
#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "proto_builder.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

const fs::path kCases = fs::path(SOD2_TEST_DATA_DIR) / "opset18plus" / "cases";

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(kCases, ec))
    if (fs::exists(e.path() / "model.onnx")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class Opset18Plus : public ::testing::TestWithParam<std::string> {};

TEST_P(Opset18Plus, MatchesOnnxRuntime) {
  const fs::path dir = kCases / GetParam();
  auto model = import_onnx_file((dir / "model.onnx").string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const fs::path data = dir / "test_data_set_0";
  auto inputs = testing::read_test_data(data, "input_");
  auto expected = testing::read_test_data(data, "output_");
  ASSERT_TRUE(inputs.ok()) << inputs.status().to_string();
  ASSERT_TRUE(expected.ok()) << expected.status().to_string();
  ASSERT_FALSE(expected->empty()) << "no reference outputs in " << data;
  for (const bool fuse : {true, false}) {
    pipeline::CompileOptions options;
    options.fuse = fuse;
    auto program = pipeline::compile_program(*model, options);
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    auto session = rt::Session::create(*program, rt::KernelRegistry::standard(), {1});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    std::vector<rt::Tensor> views;
    for (const auto& h : *inputs) views.push_back(h.view());
    auto outputs = (*session)->run(views);
    ASSERT_TRUE(outputs.ok()) << outputs.status().to_string();
    ASSERT_EQ(outputs->size(), expected->size());
    for (size_t i = 0; i < expected->size(); ++i) {
      const cli::Comparison c =
          cli::compare_tensors((*outputs)[i], (*expected)[i].view(), 1e-3, 1e-4);
      EXPECT_TRUE(c.ok()) << "output " << i << (fuse ? " (fused)" : " (unfused)") << ": shape "
                          << (*outputs)[i].shape.to_string() << " vs "
                          << (*expected)[i].shape().to_string() << ", max abs " << c.max_abs << ", "
                          << c.mismatches << " mismatches";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Opset18Plus, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

TEST(Opset18PlusSetup, FindsTheCases) { EXPECT_GE(case_names().size(), 10u); }

// GridSample-20's cubic mode is defined for 4-D X only: a 5-D one is refused when it runs, by node
// and mode (ONNX Runtime refuses it too, so there is no reference case).
TEST(Opset18PlusRefused, GridSampleCubicOn5D) {
  onnx::ModelProto m = sod2::testing::make_model(20, 9);
  auto* g = m.mutable_graph();
  sod2::testing::add_input(g, "x", {1, 1, 2, 2, 2});
  sod2::testing::add_input(g, "grid", {1, 1, 1, 1, 3});
  auto* n = sod2::testing::add_node(g, "GridSample", {"x", "grid"}, {"y"}, "volume_sampler");
  auto* mode = n->add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("cubic");
  sod2::testing::add_output(g, "y");
  const std::vector<uint8_t> bytes = sod2::testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "cubic5d");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto program = pipeline::compile_program(*model, {});
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  auto session = rt::Session::create(*program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  std::vector<float> x(8, 1.f), grid(3, 0.f);
  std::vector<rt::Tensor> inputs{
      rt::Tensor{rt::DType::kFloat, rt::Shape{1, 1, 2, 2, 2}, x.data()},
      rt::Tensor{rt::DType::kFloat, rt::Shape{1, 1, 1, 1, 3}, grid.data()}};
  auto outputs = (*session)->run(inputs);
  ASSERT_FALSE(outputs.ok());
  const std::string msg = outputs.status().to_string();
  EXPECT_EQ(outputs.status().code(), StatusCode::kUnsupported) << msg;
  EXPECT_NE(msg.find("volume_sampler"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'cubic'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace sod2
