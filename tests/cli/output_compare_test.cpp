// `sod2 run --test-data` compares outputs element by element: float16 and bfloat16 by value (they
// used to read as NaN on both sides, so every float16 output passed), and types the comparison
// cannot read are a failure, never a silent pass.
#include "app/cli/output_compare.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace sod2::cli {
namespace {

rt::HostTensor bits16(rt::DType dtype, const std::vector<uint16_t>& bits) {
  rt::HostTensor t(dtype, rt::Shape{static_cast<int64_t>(bits.size())});
  std::memcpy(t.bytes().data(), bits.data(), bits.size() * 2);
  return t;
}

TEST(OutputCompare, Float16IsComparedByValue) {
  // 1.0, 2.0, -0.5 in float16; then 1.0, 2.0, -0.25.
  const rt::HostTensor a = bits16(rt::DType::kFloat16, {0x3c00, 0x4000, 0xb800});
  const rt::HostTensor same = bits16(rt::DType::kFloat16, {0x3c00, 0x4000, 0xb800});
  const rt::HostTensor other = bits16(rt::DType::kFloat16, {0x3c00, 0x4000, 0xb400});
  EXPECT_TRUE(compare_tensors(a.view(), same.view(), 1e-3, 1e-4).ok());
  const Comparison c = compare_tensors(a.view(), other.view(), 1e-3, 1e-4);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_DOUBLE_EQ(c.max_abs, 0.25);
}

TEST(OutputCompare, BFloat16IsComparedByValue) {
  // 1.0 and 3.0 in bfloat16 (the top half of the float32 bits).
  const rt::HostTensor a = bits16(rt::DType::kBFloat16, {0x3f80, 0x4040});
  const rt::HostTensor b = bits16(rt::DType::kBFloat16, {0x3f80, 0x4000});
  const Comparison c = compare_tensors(a.view(), b.view(), 1e-3, 1e-4);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_DOUBLE_EQ(c.max_abs, 1.0);
}

TEST(OutputCompare, ATypeItCannotReadFailsInsteadOfPassing) {
  rt::HostTensor a(rt::DType::kComplex64, rt::Shape{2});
  rt::HostTensor b(rt::DType::kComplex64, rt::Shape{2});
  const Comparison c = compare_tensors(a.view(), b.view(), 1e-3, 1e-4);
  EXPECT_FALSE(c.comparable);
  EXPECT_FALSE(c.ok());
}

TEST(OutputCompare, StringsMatchExactly) {
  rt::HostTensor a(rt::DType::kString, rt::Shape{2});
  rt::HostTensor b(rt::DType::kString, rt::Shape{2});
  a.strings() = {"x", "y"};
  b.strings() = {"x", "y"};
  EXPECT_TRUE(compare_tensors(a.view(), b.view(), 1e-3, 1e-4).ok());
  b.strings()[1] = "Y";
  const Comparison c = compare_tensors(a.view(), b.view(), 1e-3, 1e-4);
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.mismatches, 1);
}

}  // namespace
}  // namespace sod2::cli
