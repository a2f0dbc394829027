// The steady state of every corpus model: after two warm-up runs at a binding, further runs at
// the same binding make no heap allocation through operator new (the arena, kernel scratch, body
// frames and body results are all reused). Allocations inside the GEMM library (malloc) are not
// counted here, nor those oneDNN's primitive execute makes for its argument map (LibraryCall).
#include <gtest/gtest.h>

#include <filesystem>

#include "../../common/allocation_counter.h"
#include "../../opt/corpus.h"
#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

class SteadyState : public ::testing::TestWithParam<std::string> {};

TEST_P(SteadyState, RunsAtOneBindingAllocateNothing) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const testing::CorpusModel* m = &*found;
  auto model = import_onnx_file(m->file.string());
  ASSERT_TRUE(model.ok());
  pipeline::CompileOptions options;
  options.rdp = m->options;
  auto program = pipeline::compile_program(*model, options);
  ASSERT_TRUE(program.ok()) << program.status().to_string();
  auto session = rt::Session::create(std::move(*program), rt::KernelRegistry::standard(), {2});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  const fs::path dir = m->file.parent_path() / "test_data_set_0";
  std::vector<rt::HostTensor> inputs;
  for (int i = 0;; ++i) {
    const fs::path p = dir / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    auto t = read_tensor_file(p.string());
    ASSERT_TRUE(t.ok());
    inputs.push_back(*package::to_host_tensor(*t, p.string()));
  }
  std::vector<rt::Tensor> views;
  for (const auto& h : inputs) views.push_back(h.view());
  for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE((*session)->run(views).ok());
  const int64_t before = g_allocations.load();
  for (int r = 0; r < 3; ++r) ASSERT_TRUE((*session)->run(views).ok());
  EXPECT_EQ(g_allocations.load() - before, 0) << "allocations in 3 steady-state runs";
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, SteadyState,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         test_name);

}  // namespace
}  // namespace sod2
