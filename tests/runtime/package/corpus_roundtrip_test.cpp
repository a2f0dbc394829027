// Every model of ../shared/models compiled, written as a package, loaded back through mmap and
// run on its test-data sets: each output is bit-identical to running the in-memory program, the
// constants are aligned views into the mapping, and writing the loaded program again reproduces
// the file byte for byte.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "../../opt/corpus.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/package/program_builder.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

std::vector<rt::HostTensor> read_inputs(const fs::path& dir) {
  auto t = testing::read_test_data(dir, "input_");
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(*t) : std::vector<rt::HostTensor>{};
}

// Copies of a run's outputs (views die with the next run).
std::vector<rt::HostTensor> run(rt::Session& s, const std::vector<rt::HostTensor>& inputs,
                                const fs::path& dir) {
  std::vector<rt::Tensor> views;
  for (const auto& h : inputs) views.push_back(h.view());
  auto outs = s.run(views);
  EXPECT_TRUE(outs.ok()) << dir << ": " << outs.status().to_string();
  std::vector<rt::HostTensor> copies;
  if (!outs.ok()) return copies;
  for (const rt::Tensor& t : *outs) {
    rt::HostTensor h(t.dtype, t.shape);
    if (t.bytes() > 0) std::memcpy(h.bytes().data(), t.data, t.bytes());
    copies.push_back(std::move(h));
  }
  return copies;
}

// (model name, fuse): both the unfused program and the default one with fused kernels.
using Param = std::tuple<std::string, bool>;
class CorpusRoundTrip : public ::testing::TestWithParam<Param> {};

TEST_P(CorpusRoundTrip, PackageRunsIdenticallyToTheInMemoryProgram) {
  auto corpus = testing::read_corpus(SOD2_SHARED_DIR "/models");
  ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
  const testing::CorpusModel* m = nullptr;
  for (const auto& c : *corpus)
    if (c.name == std::get<0>(GetParam())) m = &c;
  ASSERT_NE(m, nullptr);
  auto model = import_onnx_file(m->file.string());
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  pipeline::CompileOptions options;
  options.rdp = m->options;
  options.fuse = std::get<1>(GetParam());
  auto program = pipeline::compile_program(*model, options);
  ASSERT_TRUE(program.ok()) << program.status().to_string();

  const fs::path path =
      fs::temp_directory_path() / ("sod2_roundtrip_" + std::to_string(::getpid()) + "_" +
                                   testing::gtest_safe_name(m->name) + ".sod2");
  package::PackageStats stats;
  ASSERT_TRUE(package::write_package(*program, path.string(), &stats).ok());
  EXPECT_EQ(fs::file_size(path), stats.file_bytes);
  auto loaded = rt::load_package_file(path.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  ASSERT_EQ(loaded->constants.size(), program->constants.size());
  for (size_t c = 0; c < loaded->constants.size(); ++c) {
    const rt::Tensor a = program->constants[c].view(), b = loaded->constants[c].view();
    ASSERT_TRUE(loaded->constants[c].is_borrowed());
    ASSERT_EQ(reinterpret_cast<uintptr_t>(b.data) % 64, 0u) << "constant " << c;
    ASSERT_EQ(a.dtype, b.dtype);
    ASSERT_EQ(a.shape, b.shape);
    ASSERT_EQ(a.bytes() == 0 || std::memcmp(a.data, b.data, a.bytes()) == 0, true)
        << "constant " << c;
  }
  {
    std::ifstream f(path, std::ios::binary);
    const std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)),
                                    std::istreambuf_iterator<char>());
    auto again = package::serialize_package(*loaded);
    ASSERT_TRUE(again.ok());
    EXPECT_TRUE(*again == file) << "writing the loaded program gives different bytes";
  }

  auto in_memory = rt::Session::create(*program, rt::KernelRegistry::standard(), {1});
  auto from_file = rt::Session::create(std::move(*loaded), rt::KernelRegistry::standard(), {1});
  if (!in_memory.ok()) {
    // Not the package's doing (runtime_corpus_run_test reports it): the package must fail alike.
    ASSERT_FALSE(from_file.ok());
    EXPECT_EQ(from_file.status().message(), in_memory.status().message());
    fs::remove(path);
    GTEST_SKIP() << "the in-memory program does not run either: " << in_memory.status().to_string();
  }
  ASSERT_TRUE(from_file.ok()) << from_file.status().to_string();
  int sets = 0;
  for (int set = 0;; ++set) {
    const fs::path dir = m->file.parent_path() / ("test_data_set_" + std::to_string(set));
    if (!fs::is_directory(dir)) break;
    ++sets;
    const auto inputs = read_inputs(dir);
    const auto want = run(**in_memory, inputs, dir);
    const auto got = run(**from_file, inputs, dir);
    ASSERT_EQ(got.size(), want.size()) << dir;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(got[i].dtype(), want[i].dtype()) << dir << " output " << i;
      EXPECT_EQ(got[i].shape(), want[i].shape()) << dir << " output " << i;
      EXPECT_TRUE(got[i].bytes() == want[i].bytes()) << dir << " output " << i << " differs";
    }
  }
  EXPECT_GT(sets, 0);
  fs::remove(path);
}

std::string test_name(const ::testing::TestParamInfo<Param>& info) {
  return testing::gtest_safe_name(std::get<0>(info.param)) +
         (std::get<1>(info.param) ? "_fused" : "_unfused");
}

INSTANTIATE_TEST_SUITE_P(
    Models, CorpusRoundTrip,
    ::testing::Combine(::testing::ValuesIn(testing::corpus_names(SOD2_SHARED_DIR "/models")),
                       ::testing::Bool()),
    test_name);

TEST(CorpusRoundTripSetup, FindsTheCorpus) {
  EXPECT_GE(testing::corpus_names(SOD2_SHARED_DIR "/models").size(), 10u);
}

}  // namespace
}  // namespace sod2
