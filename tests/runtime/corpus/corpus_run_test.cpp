// Every test_data_set of every model in ../shared/models, compiled in memory (with and without
// fused kernels) and run by the CPU runtime at 1 and 2 threads: each output matches the reference
// at the default tolerances of `sod2 run` (rtol 1e-3, atol 1e-4).
#include <gtest/gtest.h>

#include <filesystem>

#include "../../opt/corpus.h"
#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/package/program_builder.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

std::vector<rt::HostTensor> read_numbered(const fs::path& dir, const std::string& prefix) {
  auto t = testing::read_test_data(dir, prefix);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(*t) : std::vector<rt::HostTensor>{};
}

class CorpusRun : public ::testing::TestWithParam<std::string> {};

TEST_P(CorpusRun, EveryTestDataSetMatchesAtOneAndTwoThreads) {
  auto found = testing::find_corpus_model(SOD2_SHARED_DIR "/models", GetParam());
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  const testing::CorpusModel* m = &*found;
  auto model = import_onnx_file(m->file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  int sets = 0;
  for (const bool fuse : {true, false}) {
    pipeline::CompileOptions options;
    options.rdp = m->options;
    options.fuse = fuse;
    auto program = pipeline::compile_program(*model, options);
    ASSERT_TRUE(program.ok()) << program.status().to_string();
    for (int threads : {1, 2}) {
      auto session = rt::Session::create(*program, rt::KernelRegistry::standard(), {threads});
      ASSERT_TRUE(session.ok()) << session.status().to_string();
      for (int set = 0;; ++set) {
        const fs::path dir = m->file.parent_path() / ("test_data_set_" + std::to_string(set));
        if (!fs::is_directory(dir)) break;
        ++sets;
        const auto inputs = read_numbered(dir, "input_");
        const auto expected = read_numbered(dir, "output_");
        std::vector<rt::Tensor> views;
        for (const auto& h : inputs) views.push_back(h.view());
        auto outputs = (*session)->run(views);
        ASSERT_TRUE(outputs.ok()) << dir << ": " << outputs.status().to_string();
        ASSERT_GE(outputs->size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
          const cli::Comparison c =
              cli::compare_tensors((*outputs)[i], expected[i].view(), 1e-3, 1e-4);
          EXPECT_TRUE(c.ok()) << dir << " output " << i << " (" << threads << " threads, "
                              << (fuse ? "fused" : "unfused") << "): shape "
                              << (*outputs)[i].shape.to_string() << " vs "
                              << expected[i].shape().to_string() << ", max abs " << c.max_abs
                              << ", max rel " << c.max_rel << ", " << c.mismatches << " mismatches";
        }
      }
    }
  }
  EXPECT_GT(sets, 0) << "no test_data_set_N folders next to " << m->file;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  return testing::gtest_safe_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Models, CorpusRun,
                         ::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                         test_name);

TEST(CorpusRunSetup, FindsTheCorpus) {
  EXPECT_GE(testing::corpus_names(SOD2_SHARED_DIR "/models").size(), 10u);
}

}  // namespace
}  // namespace sod2
