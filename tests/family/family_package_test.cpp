// The Dynamic-OFA family of ../shared/models compiled into one family package: it is at most 0.45
// of the separate packages, every variant's constants come back bit for bit, and every variant
// run from the family package matches its reference outputs and, bit for bit, its own separately
// compiled program. Then the loader against damaged family manifests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../opt/corpus.h"
#include "app/cli/output_compare.h"
#include "core/family/family_writer.h"
#include "core/onnx/onnx_import.h"
#include "core/package/manifest_builder.h"
#include "core/package/program_builder.h"
#include "runtime/exec/session.h"
#include "runtime/family/family_package.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2 {
namespace {

namespace fs = std::filesystem;

const fs::path kFamilyFile = fs::path(SOD2_SHARED_DIR) / "models/dofa_mbv3/variants.json";

std::vector<rt::HostTensor> read_numbered(const fs::path& dir, const std::string& prefix) {
  auto t = testing::read_test_data(dir, prefix);
  EXPECT_TRUE(t.ok()) << t.status().to_string();
  return t.ok() ? std::move(*t) : std::vector<rt::HostTensor>{};
}

std::vector<rt::HostTensor> copy_outputs(std::span<const rt::Tensor> outs) {
  std::vector<rt::HostTensor> copies;
  for (const rt::Tensor& t : outs) {
    rt::HostTensor h(t.dtype, t.shape);
    if (t.bytes() > 0) std::memcpy(h.bytes().data(), t.data, t.bytes());
    copies.push_back(std::move(h));
  }
  return copies;
}

// The family compiled once for the whole suite (about a second).
class FamilyPackage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto spec = family::read_family_spec(kFamilyFile.string());
    ASSERT_TRUE(spec.ok()) << spec.status().to_string();
    spec_ = new family::FamilySpec(*spec);
    auto corpus = testing::find_corpus_model(SOD2_SHARED_DIR "/models", "dofa_mbv3/max");
    ASSERT_TRUE(corpus.ok()) << corpus.status().to_string();
    options_ = new family::FamilyCompileOptions;
    options_->compile.rdp = corpus->options;
    stats_ = new family::FamilyPackageStats;
    auto bytes = family::build_family_package(*spec_, *options_, stats_);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    bytes_ = new std::vector<uint8_t>(std::move(*bytes));
  }
  static void TearDownTestSuite() {
    delete spec_;
    delete options_;
    delete stats_;
    delete bytes_;
  }
  static Expected<rt::FamilyProgram> load() { return rt::load_family_package(*bytes_, nullptr); }

  static family::FamilySpec* spec_;
  static family::FamilyCompileOptions* options_;
  static family::FamilyPackageStats* stats_;
  static std::vector<uint8_t>* bytes_;
};
family::FamilySpec* FamilyPackage::spec_ = nullptr;
family::FamilyCompileOptions* FamilyPackage::options_ = nullptr;
family::FamilyPackageStats* FamilyPackage::stats_ = nullptr;
std::vector<uint8_t>* FamilyPackage::bytes_ = nullptr;

TEST_F(FamilyPackage, IsAtMostFortyFivePercentOfTheSeparatePackages) {
  ASSERT_NE(bytes_, nullptr);
  ASSERT_EQ(stats_->variant_package_bytes.size(), 4u);
  EXPECT_EQ(stats_->package.file_bytes, bytes_->size());
  const double ratio =
      static_cast<double>(bytes_->size()) / static_cast<double>(stats_->separate_bytes);
  EXPECT_LE(ratio, 0.45) << bytes_->size() << " of " << stats_->separate_bytes;
  // Every kind of sharing occurs in this family: identical tensors, plain windows (leading
  // channels, centred kernel crops) and scaled windows (folded BatchNorm).
  EXPECT_GT(stats_->sharing.identical, 0u);
  EXPECT_GT(stats_->sharing.windows, 0u);
  EXPECT_GT(stats_->sharing.scaled, 0u);
}

TEST_F(FamilyPackage, EveryVariantsConstantsComeBackBitForBit) {
  ASSERT_NE(bytes_, nullptr);
  auto family = load();
  ASSERT_TRUE(family.ok()) << family.status().to_string();
  ASSERT_EQ(family->variants.size(), spec_->variants.size());
  EXPECT_GT(family->stats.views_built, 0u);
  EXPECT_GT(family->stats.views_in_place, 0u);
  for (size_t v = 0; v < spec_->variants.size(); ++v) {
    auto model = import_onnx_file(spec_->variants[v].model_path);
    ASSERT_TRUE(model.ok());
    auto alone = pipeline::compile_program(*model, options_->compile);
    ASSERT_TRUE(alone.ok());
    const rt::ProgramDesc& got = family->variants[v].program;
    EXPECT_EQ(family->variants[v].name, spec_->variants[v].name);
    EXPECT_EQ(family->variants[v].macs, spec_->variants[v].macs);
    ASSERT_EQ(got.constants.size(), alone->constants.size());
    for (size_t c = 0; c < got.constants.size(); ++c) {
      const rt::Tensor a = alone->constants[c].view(), b = got.constants[c].view();
      ASSERT_EQ(a.dtype, b.dtype) << spec_->variants[v].name << " constant " << c;
      ASSERT_EQ(a.shape, b.shape) << spec_->variants[v].name << " constant " << c;
      ASSERT_EQ(reinterpret_cast<uintptr_t>(b.data) % 4, 0u);
      ASSERT_TRUE(a.bytes() == 0 || std::memcmp(a.data, b.data, a.bytes()) == 0)
          << spec_->variants[v].name << " constant " << c << " differs";
    }
  }
}

TEST_F(FamilyPackage, EveryVariantMatchesItsReferenceOutputs) {
  ASSERT_NE(bytes_, nullptr);
  auto family = load();
  ASSERT_TRUE(family.ok()) << family.status().to_string();
  for (size_t v = 0; v < family->variants.size(); ++v) {
    const std::string& name = family->variants[v].name;
    auto model = import_onnx_file(spec_->variants[v].model_path);
    ASSERT_TRUE(model.ok());
    auto alone = pipeline::compile_program(*model, options_->compile);
    ASSERT_TRUE(alone.ok());
    auto from_family =
        rt::Session::create(family->variants[v].program, rt::KernelRegistry::standard(), {1});
    auto separate = rt::Session::create(*alone, rt::KernelRegistry::standard(), {1});
    ASSERT_TRUE(from_family.ok()) << from_family.status().to_string();
    ASSERT_TRUE(separate.ok());
    int sets = 0;
    const fs::path model_dir = fs::path(spec_->variants[v].model_path).parent_path();
    for (int set = 0;; ++set) {
      const fs::path dir = model_dir / ("test_data_set_" + std::to_string(set));
      if (!fs::is_directory(dir)) break;
      ++sets;
      const auto inputs = read_numbered(dir, "input_");
      const auto expected = read_numbered(dir, "output_");
      std::vector<rt::Tensor> views;
      for (const auto& h : inputs) views.push_back(h.view());
      auto want = (*separate)->run(views);
      ASSERT_TRUE(want.ok());
      const auto want_copy = copy_outputs(*want);
      auto got = (*from_family)->run(views);
      ASSERT_TRUE(got.ok()) << name << " " << dir << ": " << got.status().to_string();
      ASSERT_EQ(got->size(), want_copy.size());
      for (size_t i = 0; i < expected.size(); ++i) {
        const cli::Comparison c = cli::compare_tensors((*got)[i], expected[i].view(), 1e-3, 1e-4);
        EXPECT_TRUE(c.ok()) << name << " " << dir << " output " << i << ": max abs " << c.max_abs;
        EXPECT_TRUE(
            std::memcmp((*got)[i].data, want_copy[i].view().data, want_copy[i].bytes().size()) == 0)
            << name << " " << dir << " output " << i
            << " differs from the separately compiled variant";
      }
    }
    EXPECT_GT(sets, 0) << name;
  }
}

TEST_F(FamilyPackage, SingleModelLoaderRefusesItByName) {
  ASSERT_NE(bytes_, nullptr);
  auto single = rt::load_package(*bytes_, nullptr);
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("family package"), std::string::npos)
      << single.status().message();
  EXPECT_NE(single.status().message().find("sod2 ofa"), std::string::npos);
}

// Re-seals the package with a changed manifest (the blob kept as it is), so the loader's checks
// past the digest are reached.
std::vector<uint8_t> with_manifest(const std::vector<uint8_t>& bytes,
                                   const std::function<void(pkg::Manifest&)>& change) {
  auto sections = rt::read_package_sections(bytes, nullptr);
  EXPECT_TRUE(sections.ok());
  pkg::Manifest m = *sections->manifest;
  change(m);
  package::BlobBuilder blob;
  blob.add_owned(std::vector<uint8_t>(sections->blob.begin(), sections->blob.end()));
  package::PackageStats stats;
  auto out = package::seal_package(m, blob, &stats);
  EXPECT_TRUE(out.ok());
  return *out;
}

int first_view(const pkg::Manifest& m, bool scaled) {
  for (int i = 0; i < m.family().weights_size(); ++i) {
    const pkg::FamilyWeight& w = m.family().weights(i);
    if (w.has_view() && (w.view().scale_axis() >= 0) == scaled &&
        (!scaled || w.view().escape_count() > 0))
      return i;
  }
  return -1;
}

TEST_F(FamilyPackage, DamagedFamilyManifestsAreErrorsNamingTheProblem) {
  ASSERT_NE(bytes_, nullptr);
  struct Case {
    const char* what;
    std::function<void(pkg::Manifest&)> change;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"a view of a later weight",
       [](pkg::Manifest& m) {
         m.mutable_family()
             ->mutable_weights(first_view(m, false))
             ->mutable_view()
             ->set_base(static_cast<uint32_t>(m.family().weights_size() - 1));
       },
       "is not an earlier stored weight"},
      {"a window outside its base",
       [](pkg::Manifest& m) {
         m.mutable_family()
             ->mutable_weights(first_view(m, false))
             ->mutable_view()
             ->set_offsets(0, 1000000);
       },
       "of a base dim of"},
      {"an escape count that disagrees with the residual",
       [](pkg::Manifest& m) {
         pkg::WeightView* v =
             m.mutable_family()->mutable_weights(first_view(m, true))->mutable_view();
         v->set_escape_count(v->escape_count() + 1);
       },
       "escape"},
      {"scales outside the blob",
       [](pkg::Manifest& m) {
         m.mutable_family()
             ->mutable_weights(first_view(m, true))
             ->mutable_view()
             ->set_scale_offset(1ull << 40);
       },
       "outside the weight blob"},
      {"a constant naming a missing weight",
       [](pkg::Manifest& m) {
         m.mutable_family()->mutable_variants(0)->set_constant_weights(0, 1u << 30);
       },
       "names family weight"},
      {"two variants with one name",
       [](pkg::Manifest& m) {
         m.mutable_family()->mutable_variants(1)->set_name(m.family().variants(0).name());
       },
       "distinct"},
      {"a variant with constants of its own",
       [](pkg::Manifest& m) {
         m.mutable_family()->mutable_variants(0)->mutable_program()->add_constants();
       },
       "constants of its own"},
      {"no variants", [](pkg::Manifest& m) { m.mutable_family()->clear_variants(); },
       "no variants"},
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> damaged = with_manifest(*bytes_, c.change);
    auto loaded = rt::load_family_package(damaged, nullptr);
    ASSERT_FALSE(loaded.ok()) << c.what;
    EXPECT_NE(loaded.status().message().find(c.expect), std::string::npos)
        << c.what << ": " << loaded.status().message();
  }
}

TEST(FamilySpec, BadFamilyFilesAreErrorsNamingTheEntry) {
  const fs::path dir =
      fs::temp_directory_path() / ("sod2_family_spec_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& text) {
    std::ofstream(dir / "variants.json") << text;
    return family::read_family_spec((dir / "variants.json").string());
  };
  EXPECT_FALSE(family::read_family_spec((dir / "missing.json").string()).ok());
  auto not_json = write("{not json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.status().message().find("not a JSON object"), std::string::npos);
  auto empty = write(R"({"variants": []})");
  EXPECT_NE(empty.status().message().find("non-empty \"variants\""), std::string::npos);
  auto no_file = write(R"({"variants": [{"name": "a"}]})");
  EXPECT_NE(no_file.status().message().find("\"name\" and a \"file\""), std::string::npos);
  auto missing_model = write(R"({"variants": [{"name": "a", "file": "a.onnx"}]})");
  EXPECT_NE(missing_model.status().message().find("does not exist"), std::string::npos);
  std::ofstream(dir / "a.onnx") << "x";
  auto dup =
      write(R"({"variants": [{"name": "a", "file": "a.onnx"}, {"name": "a", "file": "a.onnx"}]})");
  EXPECT_NE(dup.status().message().find("distinct"), std::string::npos);
  auto bad_macs = write(R"({"variants": [{"name": "a", "file": "a.onnx", "macs": "many"}]})");
  EXPECT_NE(bad_macs.status().message().find("non-negative number"), std::string::npos);
  auto ok = write(
      R"({"family": "f", "variants": [{"name": "a", "file": "a.onnx", "macs_224": 5, "top1": 0.7}]})");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->name, "f");
  EXPECT_EQ(ok->variants[0].macs, 5u);
  EXPECT_TRUE(ok->variants[0].has_accuracy);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sod2
