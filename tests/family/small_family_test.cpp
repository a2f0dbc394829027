// Weight sharing on a hand-built family, independent of any model: two variants of a small
// program, the second with weights derived from the first's in every way the format has (the
// same tensor, leading channels, a centred crop, an int64 window, a scaled crop with values one
// float step off and two that fit no scale). Each must be found, stored as the right kind of
// view, and come back bit for bit through the loader. With SOD2_WRITE_FUZZ_SEED=DIR it also
// writes the package as the family seed of package_load_fuzzer.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "../runtime/package/tiny_program.h"
#include "core/family/family_writer.h"
#include "runtime/family/family_package.h"

namespace sod2 {
namespace {

rt::HostTensor floats(rt::Shape shape, uint32_t seed) {
  rt::HostTensor t(rt::DType::kFloat, shape);
  float* p = t.view().as<float>();
  uint32_t x = seed;
  for (int64_t i = 0; i < t.view().numel(); ++i) {
    x = x * 1664525u + 1013904223u;
    p[i] = static_cast<float>(static_cast<int32_t>(x >> 8) - (1 << 23)) / static_cast<float>(1 << 23);
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
          const int64_t i = (((a + at[0]) * b.shape[1] + c + at[1]) * b.shape[2] + h + at[2]) *
                                b.shape[3] +
                            w + at[3];
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
  f.small.constants.push_back(w);                                                    // identical
  f.small.constants.push_back(window(w, rt::Shape{4, 4, 5, 5}, {0, 0, 0, 0}));       // leading
  f.small.constants.push_back(window(w, rt::Shape{8, 4, 3, 3}, {0, 0, 1, 1}));       // centred
  rt::HostTensor int_window(rt::DType::kInt64, rt::Shape{100});
  std::memcpy(int_window.bytes().data(), ints.bytes().data(), 100 * sizeof(int64_t));
  f.small.constants.push_back(int_window);                                           // int window
  std::vector<float> scales = {0.5f, 1.25f, -2.0f, 0.3f, 3.7f, 0.011f};
  rt::HostTensor scaled = window(w, rt::Shape{6, 4, 3, 3}, {0, 0, 1, 1}, scales);
  float* p = scaled.view().as<float>();
  p[3] = std::nextafter(p[3], INFINITY);    // one float step: a residual code
  p[40] = std::nextafter(p[40], -INFINITY);
  p[100] = 123.456f;                        // fits no scale: escapes
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
        .write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  }
}

TEST(SmallFamily, ATensorFarFromAnyScaleIsStored) {
  // Half the elements off the scale: the view would cost more than the tensor.
  rt::ProgramDesc big = testing::tiny_program(), small = testing::tiny_program();
  const rt::HostTensor w = floats(rt::Shape{8, 4, 5, 5}, 3);
  big.constants.push_back(w);
  rt::HostTensor noisy = window(w, rt::Shape{8, 4, 5, 5}, {0, 0, 0, 0}, std::vector<float>(8, 2.5f));
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

}  // namespace
}  // namespace sod2
