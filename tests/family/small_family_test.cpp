// Weight sharing on a hand-built family, independent of any model: two variants of a small
// program, the second with weights derived from the first's in every way the format has (the
// same tensor, leading channels, a centred crop, an int64 window, a scaled crop with values one
// float step off and two that fit no scale). Each must be found, stored as the right kind of
// view, and come back bit for bit through the loader. With SOD2_WRITE_FUZZ_SEED=DIR it also
// writes the package as the family seed of package_load_fuzzer. Then hostile changes of such a
// family's manifest, which must be refused before the views they ask for are allocated.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "../common/bounded_run.h"
#include "../runtime/package/tiny_program.h"
#include "core/family/family_writer.h"
#include "core/package/manifest_builder.h"
#include "runtime/family/family_package.h"
#include "runtime/package/sod2_package.pb.h"

namespace sod2 {
namespace {

rt::HostTensor floats(rt::Shape shape, uint32_t seed) {
  rt::HostTensor t(rt::DType::kFloat, shape);
  float* p = t.view().as<float>();
  uint32_t x = seed;
  for (int64_t i = 0; i < t.view().numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] =
        static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
  }
  return t;
}

// base[o0:o0+d0, o1:o1+d1, o2:o2+d2, o3:o3+d3] of a rank-4 float tensor, times scale[o] when
// `scales` is given.
rt::HostTensor window(const rt::HostTensor& base, rt::Shape dims, std::array<int64_t, 4> at,
                      const std::vector<float>& scales = {}) {
  rt::HostTensor out(rt::DType::kFloat, dims);
  const rt::Tensor b = base.view();
  float* o = out.view().as<float>();
  const float* s = b.as<const float>();
  int64_t k = 0;
  for (int64_t a = 0; a < dims[0]; ++a)
    for (int64_t c = 0; c < dims[1]; ++c)
      for (int64_t h = 0; h < dims[2]; ++h)
        for (int64_t w = 0; w < dims[3]; ++w) {
          const int64_t i =
              (((a + at[0]) * b.shape[1] + c + at[1]) * b.shape[2] + h + at[2]) * b.shape[3] + w +
              at[3];
          o[k++] = scales.empty() ? s[i] : s[i] * scales[static_cast<size_t>(a)];
        }
  return out;
}

struct SmallFamily {
  rt::ProgramDesc big = testing::tiny_program();
  rt::ProgramDesc small = testing::tiny_program();
  size_t first_extra = 0;  // small's constants from here on are the derived ones
};

SmallFamily make_family() {
  SmallFamily f;
  const rt::HostTensor w = floats(rt::Shape{8, 4, 5, 5}, 7);
  rt::HostTensor ints(rt::DType::kInt64, rt::Shape{200});
  for (int64_t i = 0; i < 200; ++i) ints.view().as<int64_t>()[i] = i * i - 7;
  f.big.constants.push_back(w);
  f.big.constants.push_back(ints);

  f.first_extra = f.small.constants.size();
  f.small.constants.push_back(w);                                               // identical
  f.small.constants.push_back(window(w, rt::Shape{4, 4, 5, 5}, {0, 0, 0, 0}));  // leading
  f.small.constants.push_back(window(w, rt::Shape{8, 4, 3, 3}, {0, 0, 1, 1}));  // centred
  rt::HostTensor int_window(rt::DType::kInt64, rt::Shape{100});
  std::memcpy(int_window.bytes().data(), ints.bytes().data(), 100 * sizeof(int64_t));
  f.small.constants.push_back(int_window);  // int window
  std::vector<float> scales = {0.5f, 1.25f, -2.0f, 0.3f, 3.7f, 0.011f};
  rt::HostTensor scaled = window(w, rt::Shape{6, 4, 3, 3}, {0, 0, 1, 1}, scales);
  float* p = scaled.view().as<float>();
  p[3] = std::nextafter(p[3], INFINITY);  // one float step: a residual code
  p[40] = std::nextafter(p[40], -INFINITY);
  p[100] = 123.456f;  // fits no scale: escapes
  p[150] = -0.0f;
  f.small.constants.push_back(scaled);
  return f;
}

TEST(SmallFamily, EveryKindOfViewIsFoundAndComesBackBitForBit) {
  SmallFamily f = make_family();
  std::vector<family::FamilyMember> members(2);
  members[0].spec.name = "small";
  members[0].program = &f.small;
  members[1].spec.name = "big";
  members[1].program = &f.big;
  family::FamilyPackageStats stats;
  auto bytes = family::serialize_family("synthetic", members, {}, &stats);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const family::WeightSharingStats& s = stats.sharing;
  // The tiny program's own constants are identical between the two variants, too.
  EXPECT_GE(s.identical, f.first_extra + 1);
  EXPECT_EQ(s.windows, 3u);
  EXPECT_EQ(s.scaled, 1u);
  EXPECT_EQ(s.escapes, 2u);

  auto family = rt::load_family_package(*bytes, nullptr);
  ASSERT_TRUE(family.ok()) << family.status().to_string();
  ASSERT_EQ(family->variants.size(), 2u);
  EXPECT_EQ(family->variants[0].name, "small");
  EXPECT_GE(family->stats.views_in_place, 2u);  // the leading and the int64 windows
  EXPECT_EQ(family->stats.views_built, 2u);     // the crop and the scaled crop
  for (size_t v = 0; v < 2; ++v) {
    const rt::ProgramDesc& want = v == 0 ? f.small : f.big;
    const rt::ProgramDesc& got = family->variants[v].program;
    ASSERT_EQ(got.constants.size(), want.constants.size());
    for (size_t c = 0; c < got.constants.size(); ++c) {
      const rt::Tensor a = want.constants[c].view(), b = got.constants[c].view();
      ASSERT_EQ(a.dtype, b.dtype) << v << "/" << c;
      ASSERT_EQ(a.shape, b.shape) << v << "/" << c;
      EXPECT_TRUE(a.bytes() == 0 || std::memcmp(a.data, b.data, a.bytes()) == 0)
          << "variant " << v << " constant " << c << " differs";
    }
  }
  if (const char* dir = std::getenv("SOD2_WRITE_FUZZ_SEED")) {
    std::ofstream(std::string(dir) + "/small_family.sod2", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
  }
}

TEST(SmallFamily, ATensorFarFromAnyScaleIsStored) {
  // Half the elements off the scale: the view would cost more than the tensor.
  rt::ProgramDesc big = testing::tiny_program(), small = testing::tiny_program();
  const rt::HostTensor w = floats(rt::Shape{8, 4, 5, 5}, 3);
  big.constants.push_back(w);
  rt::HostTensor noisy =
      window(w, rt::Shape{8, 4, 5, 5}, {0, 0, 0, 0}, std::vector<float>(8, 2.5f));
  float* p = noisy.view().as<float>();
  for (int64_t i = 0; i < noisy.view().numel(); i += 2) p[i] += 1.0f;
  small.constants.push_back(noisy);
  std::vector<family::FamilyMember> members = {{{"small"}, &small}, {{"big"}, &big}};
  members[0].spec.name = "small";
  members[1].spec.name = "big";
  family::FamilyPackageStats stats;
  auto bytes = family::serialize_family("noisy", members, {}, &stats);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(stats.sharing.scaled, 0u);
  auto family = rt::load_family_package(*bytes, nullptr);
  ASSERT_TRUE(family.ok()) << family.status().to_string();
  const rt::Tensor got = family->variants[0].program.constants.back().view();
  EXPECT_EQ(std::memcmp(got.data, noisy.view().data, noisy.view().bytes()), 0);
}

// Hostile family packages: a valid family (a 1 MiB supernet weight, and a variant that needs a
// centred crop of it built at load) whose manifest is then changed the way an attacker would: a
// view entry costs about 20 bytes of manifest but builds as many bytes as its window, so copies
// of it could make a package of a few MB ask for any amount of memory. The loader must refuse
// them before allocating, naming the view or variant and the limit.
class HostileFamily : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    big_ = new rt::ProgramDesc(testing::tiny_program());
    small_ = new rt::ProgramDesc(testing::tiny_program());
    const rt::HostTensor w = floats(rt::Shape{16, 64, 16, 16}, 11);
    big_->constants.push_back(w);
    small_->constants.push_back(window(w, rt::Shape{16, 64, 14, 14}, {0, 0, 1, 1}));
    std::vector<family::FamilyMember> members(2);
    members[0].spec.name = "small";
    members[0].program = small_;
    members[1].spec.name = "big";
    members[1].program = big_;
    auto bytes = family::serialize_family("hostile", members, {});
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    bytes_ = new std::vector<uint8_t>(std::move(*bytes));
  }
  static void TearDownTestSuite() {
    delete big_;
    delete small_;
    delete bytes_;
  }

  // Re-seals the package with a changed manifest (the blob kept as it is), so the loader's
  // checks past the digest are reached.
  static std::vector<uint8_t> with_manifest(const std::function<void(pkg::Manifest&)>& change) {
    auto sections = rt::read_package_sections(*bytes_, nullptr);
    EXPECT_TRUE(sections.ok());
    pkg::Manifest m = *sections->manifest;
    change(m);
    package::BlobBuilder blob;
    blob.add_owned(std::vector<uint8_t>(sections->blob.begin(), sections->blob.end()));
    package::PackageStats stats;
    auto out = package::seal_package(m, blob, &stats);
    EXPECT_TRUE(out.ok());
    return out.ok() ? *out : std::vector<uint8_t>{};
  }

  // The crop the small variant needs built, and which of its constants names it.
  static int crop_weight(const pkg::Manifest& m) {
    for (int i = 0; i < m.family().weights_size(); ++i) {
      const pkg::FamilyWeight& w = m.family().weights(i);
      if (w.has_view() && w.view().dims_size() == 4 && w.view().dims(3) == 14) return i;
    }
    return -1;
  }
  static int crop_constant(const pkg::Manifest& m) {
    const pkg::Variant& v = m.family().variants(0);
    for (int c = 0; c < v.constant_weights_size(); ++c)
      if (static_cast<int>(v.constant_weights(c)) == crop_weight(m)) return c;
    return -1;
  }

  // Appends `copies` copies of the crop's view; each is named by the variant `use` if >= 0.
  static void add_crops(pkg::Manifest& m, int copies, int use) {
    const int k = crop_weight(m);
    ASSERT_GE(k, 0);
    const pkg::FamilyWeight crop = m.family().weights(k);
    pkg::Family* fam = m.mutable_family();
    for (int i = 0; i < copies; ++i) {
      *fam->add_weights() = crop;
      if (use >= 0)
        fam->mutable_variants(use)->add_constant_weights(
            static_cast<uint32_t>(fam->weights_size() - 1));
    }
  }

  static rt::ProgramDesc* big_;
  static rt::ProgramDesc* small_;
  static std::vector<uint8_t>* bytes_;
};
rt::ProgramDesc* HostileFamily::big_ = nullptr;
rt::ProgramDesc* HostileFamily::small_ = nullptr;
std::vector<uint8_t>* HostileFamily::bytes_ = nullptr;

constexpr uint64_t kCropBytes = 16 * 64 * 14 * 14 * 4;

TEST_F(HostileFamily, TheUnchangedFamilyLoadsAndBuildsItsCrop) {
  auto family = rt::load_family_package(*bytes_, nullptr);
  ASSERT_TRUE(family.ok()) << family.status().to_string();
  EXPECT_EQ(family->stats.views_built, 1u);
  EXPECT_EQ(family->stats.built_bytes, kCropBytes);
}

// The case: a package of about 5 MB whose views ask for over 100 GB.
TEST_F(HostileFamily, AFewMegabytesAskingForHundredsOfGigabytesIsRefusedUnallocated) {
  const int copies = 150000;
  const std::vector<uint8_t> hostile =
      with_manifest([&](pkg::Manifest& m) { add_crops(m, copies, 0); });
  ASSERT_LT(hostile.size(), 8u << 20);
  ASSERT_GT(kCropBytes * copies, uint64_t{100} << 30);
  auto family = rt::load_family_package(hostile, nullptr);
  ASSERT_FALSE(family.ok()) << "built " << family->stats.built_bytes << " bytes";
  const std::string& msg = family.status().message();
  EXPECT_EQ(family.status().code(), StatusCode::kParseError) << msg;
  EXPECT_NE(msg.find("variant 0 ('small')"), std::string::npos) << msg;
  EXPECT_NE(msg.find("bytes of weights the family stores"), std::string::npos) << msg;
  EXPECT_NE(msg.find("family weight"), std::string::npos) << msg;
}

// A moderate amplification: a package of about 1 MB whose unused views would take 200 MB.
TEST_F(HostileFamily, ViewsNoVariantUsesAreRefused) {
  const std::vector<uint8_t> hostile =
      with_manifest([&](pkg::Manifest& m) { add_crops(m, 250, -1); });
  ASSERT_LT(hostile.size(), 2u << 20);
  auto family = rt::load_family_package(hostile, nullptr);
  ASSERT_FALSE(family.ok()) << "built " << family->stats.built_bytes << " bytes from "
                            << hostile.size();
  const std::string& msg = family.status().message();
  EXPECT_NE(msg.find("a view (" + std::to_string(kCropBytes) + " bytes) that no variant uses"),
            std::string::npos)
      << msg;
}

// The same moderate amplification spread over a variant that names every copy.
TEST_F(HostileFamily, AVariantNeedingMoreThanTheStoredWeightsIsRefused) {
  const std::vector<uint8_t> hostile =
      with_manifest([&](pkg::Manifest& m) { add_crops(m, 250, 0); });
  auto family = rt::load_family_package(hostile, nullptr);
  ASSERT_FALSE(family.ok()) << "built " << family->stats.built_bytes << " bytes from "
                            << hostile.size();
  EXPECT_NE(family.status().message().find("variant 0 ('small')"), std::string::npos)
      << family.status().message();
}

// Variants that each stay within the stored bytes, but are many: the caller's ceiling holds.
TEST_F(HostileFamily, ManyVariantsWithinTheRuleStillMeetTheCeiling) {
  const std::vector<uint8_t> many = with_manifest([&](pkg::Manifest& m) {
    const int c = crop_constant(m);
    ASSERT_GE(c, 0);
    const pkg::Variant small = m.family().variants(0);
    for (int i = 0; i < 8; ++i) {
      add_crops(m, 1, -1);
      pkg::Variant* v = m.mutable_family()->add_variants();
      *v = small;
      v->set_name("copy " + std::to_string(i));
      v->set_constant_weights(c, static_cast<uint32_t>(m.family().weights_size() - 1));
    }
  });
  auto loaded = rt::load_family_package(many, nullptr);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->stats.built_bytes, 9 * kCropBytes);  // a multiple of 64: no gaps

  rt::FamilyLoadLimits limits;
  limits.max_built_bytes = 4 * kCropBytes;
  auto refused = rt::load_family_package(many, nullptr, {}, limits);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("more than the limit of " +
                                            std::to_string(4 * kCropBytes) + " bytes"),
            std::string::npos)
      << refused.status().message();
}

TEST(FamilyPackageFile, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = (std::filesystem::temp_directory_path() /
                            ("sod2_family_fifo_" + std::to_string(::getpid()) + ".sod2"))
                               .string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto run = testing::run_bounded(
      [&] {
        auto family = rt::load_family_package_file(fifo);
        return family.ok() ? std::string("accepted") : family.status().message();
      },
      5);
  std::filesystem::remove(fifo);
  ASSERT_TRUE(run.finished) << run.result;
  EXPECT_NE(run.result.find(fifo + ": is a FIFO (named pipe), not a regular file"),
            std::string::npos)
      << run.result;
}

}  // namespace
}  // namespace sod2
