// `sod2 compile` then `sod2 run MODEL.sod2 --test-data` on a corpus model; the public API
// (runtime/include/sod2/runtime.h) on the same package, in-process and through the example
// program run_package, which is built by CMake and run here as a user would run it. Compiled
// with --no-fusion so these tests do not depend on which fused kernels the runtime has.
#include <gtest/gtest.h>
#include <sod2/runtime.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/compile_command.h"
#include "app/cli/output_compare.h"
#include "app/cli/run_command.h"
#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

const fs::path kModelDir = fs::path(SOD2_SHARED_DIR) / "models" / "bert_tiny";

class PackageCliAndApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    package_ = new fs::path(fs::temp_directory_path() /
                            ("sod2_cli_api_" + std::to_string(::getpid()) + ".sod2"));
    std::ostringstream out, err;
    compiled_ = cli::run_compile({(kModelDir / "model.onnx").string(), "-o", package_->string(),
                                  "--range", "batch=1:16,seq=1:512", "--no-fusion"},
                                 out, err);
    compile_output_ = new std::string(out.str() + err.str());
  }
  static void TearDownTestSuite() {
    fs::remove(*package_);
    delete package_;
    delete compile_output_;
  }
  static fs::path* package_;
  static int compiled_;
  static std::string* compile_output_;
};

fs::path* PackageCliAndApi::package_ = nullptr;
int PackageCliAndApi::compiled_ = 1;
std::string* PackageCliAndApi::compile_output_ = nullptr;

TEST_F(PackageCliAndApi, CompileWritesAPackage) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  EXPECT_NE(compile_output_->find("wrote "), std::string::npos) << *compile_output_;
  EXPECT_NE(compile_output_->find("sha256 "), std::string::npos) << *compile_output_;
  EXPECT_NE(compile_output_->find("seq in 1:512"), std::string::npos) << *compile_output_;
}

TEST_F(PackageCliAndApi, RunAcceptsThePackage) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  for (const char* set : {"test_data_set_0", "test_data_set_1"}) {
    std::ostringstream out, err;
    EXPECT_EQ(
        cli::run_run({package_->string(), "--test-data", (kModelDir / set).string()}, out, err), 0)
        << out.str() << err.str();
    EXPECT_NE(out.str().find("PASS"), std::string::npos) << out.str();
  }
}

TEST_F(PackageCliAndApi, CompileStoresWeightsAtHalfWidthAndSaysWhatItCosts) {
  const fs::path half =
      fs::temp_directory_path() / ("sod2_cli_api_fp16_" + std::to_string(::getpid()) + ".sod2");
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_compile({(kModelDir / "model.onnx").string(), "-o", half.string(), "--range",
                              "batch=1:16,seq=1:512", "--no-fusion", "--weights", "fp16"},
                             out, err),
            0)
      << out.str() << err.str();
  const std::string said = out.str();
  EXPECT_NE(said.find("weights fp16: "), std::string::npos) << said;
  EXPECT_NE(said.find("constants stored as fp16"), std::string::npos) << said;
  EXPECT_NE(said.find("output error against the float32 weights at batch=16,seq=32"),
            std::string::npos)
      << said;
  // About half the float32 package (the manifest and the small constants stay as they were).
  const auto full_bytes = fs::file_size(*package_), half_bytes = fs::file_size(half);
  EXPECT_LT(static_cast<double>(half_bytes), 0.6 * static_cast<double>(full_bytes));
  // It runs like any package, its test data within float16's precision of the weights.
  std::ostringstream run_out, run_err;
  EXPECT_EQ(cli::run_run({half.string(), "--test-data", (kModelDir / "test_data_set_0").string(),
                          "--rtol", "0.02", "--atol", "0.02"},
                         run_out, run_err),
            0)
      << run_out.str() << run_err.str();
  fs::remove(half);
  // int8: smaller still.
  std::ostringstream int8_out, int8_err;
  ASSERT_EQ(cli::run_compile({(kModelDir / "model.onnx").string(), "-o", half.string(), "--range",
                              "batch=1:16,seq=1:512", "--no-fusion", "--weights", "int8"},
                             int8_out, int8_err),
            0)
      << int8_out.str() << int8_err.str();
  EXPECT_NE(int8_out.str().find("stored as int8"), std::string::npos) << int8_out.str();
  EXPECT_LT(fs::file_size(half), half_bytes);
  fs::remove(half);
  // Anything else is not a choice.
  std::ostringstream o, e;
  EXPECT_EQ(
      cli::run_compile(
          {(kModelDir / "model.onnx").string(), "-o", half.string(), "--weights", "fp8"}, o, e),
      1);
  EXPECT_NE(e.str().find("--weights must be fp32, fp16 or int8"), std::string::npos) << e.str();
  EXPECT_FALSE(fs::exists(half));
}

TEST_F(PackageCliAndApi, RunRefusesRangesForAPackage) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_run({package_->string(), "--test-data",
                          (kModelDir / "test_data_set_0").string(), "--range", "seq=1:8"},
                         out, err),
            1);
  EXPECT_NE(err.str().find("compiled package"), std::string::npos) << err.str();
}

TEST_F(PackageCliAndApi, CompileReportsAMissingModel) {
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_compile({"/nonexistent/model.onnx", "-o", "/tmp/x.sod2"}, out, err), 1);
  EXPECT_NE(err.str().find("sod2 compile: "), std::string::npos) << err.str();
}

std::vector<rt::HostTensor> read_set(const fs::path& dir, const char* prefix) {
  std::vector<rt::HostTensor> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    auto t = read_tensor_file(p.string());
    EXPECT_TRUE(t.ok());
    auto h = package::to_host_tensor(*t, p.string());
    EXPECT_TRUE(h.ok());
    out.push_back(std::move(*h));
  }
  return out;
}

// Views of `inputs` for Session::run.
std::vector<api::TensorView> api_views(const std::vector<rt::HostTensor>& inputs) {
  std::vector<api::TensorView> views;
  for (const rt::HostTensor& h : inputs) {
    api::TensorView v;
    v.type = static_cast<api::ElementType>(h.dtype());
    v.shape.assign(h.shape().dims().begin(), h.shape().dims().end());
    v.data = h.bytes().data();
    views.push_back(v);
  }
  return views;
}

// A run's outputs against the test set's, within rtol 1e-3 / atol 1e-4.
void expect_outputs(const std::vector<api::TensorView>& outputs,
                    const std::vector<rt::HostTensor>& expected) {
  ASSERT_EQ(outputs.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    rt::Tensor got{static_cast<rt::DType>(outputs[i].type),
                   rt::Shape(std::span<const int64_t>(outputs[i].shape)),
                   const_cast<void*>(outputs[i].data)};
    const cli::Comparison c = cli::compare_tensors(got, expected[i].view(), 1e-3, 1e-4);
    EXPECT_TRUE(c.ok()) << "output " << i << " max abs " << c.max_abs;
  }
}

TEST_F(PackageCliAndApi, PublicApiRunsThePackage) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  std::shared_ptr<const api::Package> package;
  api::Status st = api::Package::load(package_->string(), &package);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(package->inputs().size(), 2u);
  EXPECT_EQ(package->inputs()[0].name, "input_ids");
  EXPECT_EQ(package->inputs()[0].type, api::ElementType::kInt64);
  EXPECT_EQ(package->inputs()[0].rank, 2);
  std::unique_ptr<api::Session> session;
  st = api::Session::create(package, 1, &session);
  ASSERT_TRUE(st.ok()) << st.message();
  package.reset();  // the session keeps the mapping alive

  const fs::path dir = kModelDir / "test_data_set_0";
  const auto inputs = read_set(dir, "input_");
  const auto expected = read_set(dir, "output_");
  std::vector<api::TensorView> views = api_views(inputs);
  std::vector<api::TensorView> outputs;
  for (int repeat = 0; repeat < 2; ++repeat) {
    st = session->run(views, &outputs);
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_NO_FATAL_FAILURE(expect_outputs(outputs, expected));
  }
  views.pop_back();
  st = session->run(views, &outputs);
  EXPECT_EQ(st.code(), api::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("takes 2 inputs"), std::string::npos) << st.message();
}

// The same package through the public API on the Vulkan backend (lavapipe where there is no
// GPU): the generated shaders `sod2 compile` stored run, and the outputs match.
TEST_F(PackageCliAndApi, PublicApiRunsThePackageOnVulkan) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  EXPECT_NE(compile_output_->find("generated compute shaders"), std::string::npos)
      << *compile_output_;
  std::shared_ptr<const api::Package> package;
  api::Status st = api::Package::load(package_->string(), &package);
  ASSERT_TRUE(st.ok()) << st.message();
  api::SessionConfig config;
  config.threads = 1;
  config.backend = api::Backend::kVulkan;
  std::unique_ptr<api::Session> session;
  st = api::Session::create(package, config, &session);
  if (st.code() == api::StatusCode::kNotFound) GTEST_SKIP() << "no Vulkan device: " << st.message();
  ASSERT_TRUE(st.ok()) << st.message();
  const fs::path dir = kModelDir / "test_data_set_1";
  const auto inputs = read_set(dir, "input_");
  const auto expected = read_set(dir, "output_");
  std::vector<api::TensorView> views = api_views(inputs);
  std::vector<api::TensorView> outputs;
  st = session->run(views, &outputs);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_NO_FATAL_FAILURE(expect_outputs(outputs, expected));
}

TEST_F(PackageCliAndApi, RunOnVulkanReportsPlacementCountersAndValidation) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  std::ostringstream out, err;
  const int rc =
      cli::run_run({package_->string(), "--test-data", (kModelDir / "test_data_set_0").string(),
                    "--backend", "vulkan", "--vulkan-validation"},
                   out, err);
  if (rc != 0 && err.str().find("no Vulkan") != std::string::npos) GTEST_SKIP() << err.str();
  EXPECT_EQ(rc, 0) << out.str() << err.str();
  EXPECT_NE(out.str().find("PASS"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("generated elementwise groups"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("validation: 0 errors"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("dispatches"), std::string::npos) << out.str();
}

TEST_F(PackageCliAndApi, RunRefusesBadBackendFlags) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  const std::string set = (kModelDir / "test_data_set_0").string();
  struct Case {
    std::vector<std::string> flags;
    const char* error;
  } cases[] = {
      {{"--backend", "metal"}, "--backend must be cpu or vulkan, got 'metal'"},
      {{"--vulkan-device", "0"}, "need --backend vulkan"},
      {{"--backend", "vulkan", "--vulkan-device", "77"}, "Vulkan device 77 does not exist"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {package_->string(), "--test-data", set};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    std::ostringstream out, err;
    EXPECT_EQ(cli::run_run(args, out, err), 1) << c.error;
    if (err.str().find("no Vulkan") != std::string::npos) continue;  // no device to number
    EXPECT_NE(err.str().find(c.error), std::string::npos) << err.str();
  }
}

TEST_F(PackageCliAndApi, PublicApiReportsBadFiles) {
  std::shared_ptr<const api::Package> package;
  api::Status st = api::Package::load("/nonexistent/model.sod2", &package);
  EXPECT_EQ(st.code(), api::StatusCode::kNotFound);
  st = api::Package::load((kModelDir / "model.onnx").string(), &package);
  EXPECT_EQ(st.code(), api::StatusCode::kParseError);
  EXPECT_NE(st.message().find("not a SoD2 package"), std::string::npos) << st.message();
}

// TensorView exchanges tensors: a package whose input is a sequence is refused by name at load,
// and one that uses sequences inside (tensors in and out) runs.
TEST_F(PackageCliAndApi, PublicApiRefusesSequenceInputsAndRunsSequencesInside) {
  const fs::path data = "/usr/share/libonnx-testdata/data";
  const fs::path seq_in =
      fs::temp_directory_path() / ("sod2_seq_in_" + std::to_string(::getpid()) + ".sod2");
  const fs::path inside =
      fs::temp_directory_path() / ("sod2_seq_inside_" + std::to_string(::getpid()) + ".sod2");
  std::ostringstream out, err;
  ASSERT_EQ(cli::run_compile({(data / "node/test_sequence_insert_at_back/model.onnx").string(),
                              "-o", seq_in.string()},
                             out, err),
            0)
      << out.str() << err.str();
  std::shared_ptr<const api::Package> package;
  api::Status st = api::Package::load(seq_in.string(), &package);
  EXPECT_EQ(st.code(), api::StatusCode::kUnsupported);
  EXPECT_NE(st.message().find("'sequence' is a sequence"), std::string::npos) << st.message();

  ASSERT_EQ(cli::run_compile(
                {(data / "simple/test_sequence_model2/model.onnx").string(), "-o", inside.string()},
                out, err),
            0)
      << out.str() << err.str();
  st = api::Package::load(inside.string(), &package);
  ASSERT_TRUE(st.ok()) << st.message();
  std::unique_ptr<api::Session> session;
  st = api::Session::create(package, 1, &session);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<float> x(24, 1.f), y(24, 2.f), z(24, 3.f);
  const std::vector<int64_t> shape = {2, 3, 4};
  const api::TensorView ins[] = {{api::ElementType::kFloat32, shape, x.data()},
                                 {api::ElementType::kFloat32, shape, y.data()},
                                 {api::ElementType::kFloat32, shape, z.data()}};
  std::vector<api::TensorView> outs;
  st = session->run(ins, &outs);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(outs[0].shape, shape);
  fs::remove(seq_in);
  fs::remove(inside);
}

// Runs the example program on the package with `args` as a user would: its output (stdout and
// stderr) and its exit status.
struct ExampleRun {
  std::string output;
  int status = -1;
};
ExampleRun run_example(const fs::path& package, const std::string& args) {
  ExampleRun r;
  const std::string cmd =
      std::string(SOD2_RUN_PACKAGE_EXAMPLE) + " " + package.string() + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  r.status = ::pclose(pipe);
  return r;
}

TEST_F(PackageCliAndApi, ExampleProgramRunsThePackage) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  const auto [output, status] =
      run_example(*package_, "input_ids=1x16 attention_mask=1x16 --threads 1");
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("last_hidden_state [1,16,128]:"), std::string::npos) << output;
  EXPECT_NE(output.find("logits [1,2]:"), std::string::npos) << output;
}

TEST_F(PackageCliAndApi, ExampleProgramRunsThePackageOnVulkan) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  const auto [output, status] =
      run_example(*package_, "input_ids=1x16 attention_mask=1x16 --threads 1 --vulkan");
  if (output.find("no Vulkan") != std::string::npos) GTEST_SKIP() << output;
  EXPECT_EQ(status, 0) << output;
  EXPECT_NE(output.find("logits [1,2]:"), std::string::npos) << output;
}

TEST_F(PackageCliAndApi, ExampleProgramReportsSizesOutsideTheRange) {
  ASSERT_EQ(compiled_, 0) << *compile_output_;
  const auto [output, status] = run_example(*package_, "input_ids=1x600 attention_mask=1x600");
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("outside the declared range"), std::string::npos) << output;
}

}  // namespace
}  // namespace sod2
