#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/ir/tensor.h"

namespace sod2 {
namespace {

template <typename T>
Tensor make(DataType dt, std::vector<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor("t", dt, {static_cast<int64_t>(values.size())}, std::move(bytes));
}

TEST(Tensor, IntAtConvertsIntegersAndExactFloatsOnly) {
  const Tensor i64 = make<int64_t>(DataType::kInt64, {-3, 1LL << 40});
  EXPECT_EQ(i64.int_at(0), -3);
  EXPECT_EQ(i64.int_at(1), 1LL << 40);
  EXPECT_EQ(i64.int_at(2), std::nullopt);
  EXPECT_EQ(i64.int_at(-1), std::nullopt);
  const Tensor f = make<float>(DataType::kFloat, {2.0f, 2.5f});
  EXPECT_EQ(f.int_at(0), 2);
  EXPECT_EQ(f.int_at(1), std::nullopt);  // a shape never rounds silently
  const Tensor u64 = make<uint64_t>(DataType::kUint64, {~uint64_t{0}});
  EXPECT_EQ(u64.int_at(0), std::nullopt);
}

TEST(Tensor, HalfAndBFloat16Decode) {
  const Tensor h = make<uint16_t>(DataType::kFloat16, {0x3C00, 0xC000, 0x0001, 0x7C00});
  EXPECT_EQ(h.double_at(0), 1.0);
  EXPECT_EQ(h.double_at(1), -2.0);
  EXPECT_FLOAT_EQ(static_cast<float>(*h.double_at(2)), 5.9604645e-08f);  // smallest subnormal
  EXPECT_TRUE(std::isinf(*h.double_at(3)));
  const Tensor b = make<uint16_t>(DataType::kBFloat16, {0x3F80, 0xC040});
  EXPECT_EQ(b.double_at(0), 1.0);
  EXPECT_EQ(b.double_at(1), -3.0);
}

TEST(Tensor, NumelOfScalarAndEmpty) {
  EXPECT_EQ(Tensor("s", DataType::kFloat, {}, std::vector<uint8_t>(4)).numel(), 1);
  EXPECT_EQ(Tensor("e", DataType::kFloat, {3, 0}, {}).numel(), 0);
}

}  // namespace
}  // namespace sod2
