#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

TEST(Einsum, ExplicitImplicitDiagonalEllipsis) {
  const HostTensor a = rand_tensor({2, 3, 4}, 1), b = rand_tensor({2, 4, 5}, 2);
  // Batched matmul.
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int k = 0; k < 4; ++k)
          s += double(a.data<float>()[(n * 3 + i) * 4 + k]) * b.data<float>()[(n * 4 + k) * 5 + j];
        want.push_back(s);
      }
  auto got = run_both("Einsum", 12, {&a, &b}, 1, A().s("equation", "bij,bjk->bik"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{2, 3, 5}, want);
  got = run_both("Einsum", 12, {&a, &b}, 1, A().s("equation", "...ij,...jk"));  // implicit
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{2, 3, 5}, want);
  // Implicit output of a transpose: "ji" -> output "ij" (alphabetical).
  const HostTensor m = rand_tensor({3, 4}, 3);
  want.clear();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) want.push_back(m.data<float>()[j * 4 + i]);
  got = run_both("Einsum", 12, {&m}, 1, A().s("equation", "ji"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{4, 3}, want, 0);
  // Trace and diagonal.
  const HostTensor sq = rand_tensor({4, 4}, 4);
  double tr = 0;
  std::vector<double> diag;
  for (int i = 0; i < 4; ++i) {
    tr += sq.data<float>()[i * 5];
    diag.push_back(sq.data<float>()[i * 5]);
  }
  got = run_both("Einsum", 12, {&sq}, 1, A().s("equation", "ii"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{}, {tr});
  got = run_both("Einsum", 12, {&sq}, 1, A().s("equation", "ii->i"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{4}, diag);
  // Sum over everything, outer product, three operands.
  const HostTensor u = rand_tensor({3}, 5), v = rand_tensor({2}, 6), w = rand_tensor({3}, 7);
  want.clear();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) want.push_back(double(u.data<float>()[i]) * v.data<float>()[j]);
  got = run_both("Einsum", 12, {&u, &v}, 1, A().s("equation", "i,j->ij"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{3, 2}, want);
  double dot3 = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      dot3 += double(u.data<float>()[i]) * v.data<float>()[j] * w.data<float>()[i];
  got = run_both("Einsum", 12, {&u, &v, &w}, 1, A().s("equation", "i,j,i->"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{}, {dot3});
  // Ellipsis broadcasting a size-1 dim.
  const HostTensor p = rand_tensor({1, 3, 2}, 8), q = rand_tensor({4, 2, 2}, 9);
  got = run_both("Einsum", 12, {&p, &q}, 1, A().s("equation", "...ij,...jk->...ik"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[4,3,2]");
}

TEST(Einsum, ZeroSizedAndErrors) {
  const HostTensor a(DType::kFloat, Shape{0, 3}), b = rand_tensor({3, 2}, 1);
  auto got = run_both("Einsum", 12, {&a, &b}, 1, A().s("equation", "ij,jk->ik"));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,2]");
  const HostTensor c(DType::kFloat, Shape{2, 0}), d(DType::kFloat, Shape{0, 3});
  got = run_both("Einsum", 12, {&c, &d}, 1, A().s("equation", "ij,jk->ik"));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{2, 3}, std::vector<double>(6, 0.0));
  const HostTensor e = rand_tensor({4, 2}, 2);
  EXPECT_EQ(run_status("Einsum", 12, {&b, &e}, 1, A().s("equation", "ij,jk->ik")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("Einsum", 12, {&b}, 1, A().s("equation", "ij,jk->ik")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("Einsum", 12, {&b}, 1, A().s("equation", "i1")).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
