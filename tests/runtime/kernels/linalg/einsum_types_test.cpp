// Einsum on float64 and the integer types, against naive references.
#include <cstdint>
#include <random>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

HostTensor doubles(Shape s, uint32_t seed) {
  HostTensor t(DType::kDouble, s);
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  for (int64_t i = 0; i < s.numel(); ++i) t.data<double>()[i] = d(g);
  return t;
}

std::vector<HostTensor> run_ok(const std::vector<const HostTensor*>& in, const std::string& eq) {
  auto r = testing::run_kernel(registry(), "Einsum", 12, in, 1, A().s("equation", eq), 2);
  EXPECT_TRUE(r.ok()) << eq << ": " << r.status().to_string();
  if (!r.ok()) return {HostTensor()};
  return std::move(r).value();
}

TEST(EinsumTypes, DoubleBatchMatmulTransposeDiagonalSum) {
  const HostTensor a = doubles({2, 3, 4}, 1), b = doubles({2, 4, 5}, 2);
  auto got = run_ok({&a, &b}, "bij,bjk->bik");
  ASSERT_EQ(got[0].dtype(), DType::kDouble);
  ASSERT_EQ(got[0].shape().to_string(), "[2,3,5]");
  const double* A_ = a.data<double>();
  const double* B = b.data<double>();
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 5; ++k) {
        double s = 0;
        for (int j = 0; j < 4; ++j) s += A_[(n * 3 + i) * 4 + j] * B[(n * 4 + j) * 5 + k];
        EXPECT_NEAR(got[0].data<double>()[(n * 3 + i) * 5 + k], s, 1e-14);
      }
  // Transpose is exact.
  got = run_ok({&a}, "bij->bji");
  ASSERT_EQ(got[0].shape().to_string(), "[2,4,3]");
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(got[0].data<double>()[(n * 4 + j) * 3 + i], A_[(n * 3 + i) * 4 + j]);
  // Batch diagonal and a full sum.
  const HostTensor sq = doubles({3, 4, 4}, 3);
  got = run_ok({&sq}, "...ii->...i");
  ASSERT_EQ(got[0].shape().to_string(), "[3,4]");
  for (int n = 0; n < 3; ++n)
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(got[0].data<double>()[n * 4 + i], sq.data<double>()[(n * 4 + i) * 4 + i]);
  got = run_ok({&a}, "bij->");
  double total = 0;
  for (int i = 0; i < 24; ++i) total += A_[i];
  ASSERT_EQ(got[0].shape().rank(), 0);
  EXPECT_NEAR(got[0].data<double>()[0], total, 1e-13);
}

TEST(EinsumTypes, IntegersWrapAround) {
  const HostTensor a = testing::make_tensor<int64_t>(DType::kInt64, {2, 2}, {1, 2, 3, 4});
  const HostTensor b = testing::make_tensor<int64_t>(DType::kInt64, {2, 2}, {5, 6, 7, 8});
  auto got = run_ok({&a, &b}, "ij,jk->ik");
  ASSERT_EQ(got[0].dtype(), DType::kInt64);
  EXPECT_EQ(std::vector<int64_t>(got[0].data<int64_t>(), got[0].data<int64_t>() + 4),
            (std::vector<int64_t>{19, 22, 43, 50}));
  const HostTensor big = testing::make_tensor<int32_t>(DType::kInt32, {2}, {INT32_MAX, INT32_MAX});
  got = run_ok({&big}, "i->");
  EXPECT_EQ(got[0].data<int32_t>()[0], -2);  // 2 * (2^31 - 1) mod 2^32
  const HostTensor neg = testing::make_tensor<int32_t>(DType::kInt32, {3}, {-1, 2, -3});
  got = run_ok({&neg, &neg}, "i,i->");
  EXPECT_EQ(got[0].data<int32_t>()[0], 14);
}

TEST(EinsumTypes, MixedOrUnsupportedTypesAreErrors) {
  const HostTensor d = doubles({2, 2}, 4);
  const HostTensor f = rand_tensor({2, 2}, 5);
  EXPECT_EQ(run_status("Einsum", 12, {&d, &f}, 1, A().s("equation", "ij,jk->ik")).code(),
            StatusCode::kInvalidArgument);
  // float16 is computed in float32 (narrow_float_kernel.h), so it is no longer refused.
  const HostTensor h(DType::kFloat16, Shape{2, 2});
  EXPECT_TRUE(run_status("Einsum", 12, {&h}, 1, A().s("equation", "ij->ji")).ok());
  const HostTensor b(DType::kBool, Shape{2});
  EXPECT_EQ(run_status("Einsum", 12, {&b}, 1, A().s("equation", "i->")).code(),
            StatusCode::kUnsupported);
}

// Eight 16x16 operands with distinct labels, all reduced: 16^16 = 2^64 reduced terms overflowed
// to 0 (an answer of 0 at once); one fewer operand would have looped for ages. Both are refused.
TEST(EinsumTypes, HugeReductionAcrossOperandsIsRefused) {
  std::vector<HostTensor> ops;
  for (int i = 0; i < 8; ++i) ops.push_back(rand_tensor({16, 16}, static_cast<uint32_t>(i)));
  std::vector<const HostTensor*> in;
  for (const HostTensor& t : ops) in.push_back(&t);
  EXPECT_EQ(run_status("Einsum", 12, in, 1, A().s("equation", "ab,cd,ef,gh,ij,kl,mn,op->")).code(),
            StatusCode::kResourceExhausted);
  in.pop_back();
  EXPECT_EQ(run_status("Einsum", 12, in, 1, A().s("equation", "ab,cd,ef,gh,ij,kl,mn->")).code(),
            StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
