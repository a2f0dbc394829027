#include <algorithm>

#include "runtime/kernels/linalg/linalg_kernels.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

// numpy matmul, written from the definition.
std::vector<double> ref_matmul(const HostTensor& a, const HostTensor& b, Shape* out) {
  std::vector<int64_t> ad(a.shape().dims().begin(), a.shape().dims().end());
  std::vector<int64_t> bd(b.shape().dims().begin(), b.shape().dims().end());
  const bool a1 = ad.size() == 1, b1 = bd.size() == 1;
  if (a1) ad.insert(ad.begin(), 1);
  if (b1) bd.push_back(1);
  const size_t r = std::max(ad.size(), bd.size());
  while (ad.size() < r) ad.insert(ad.begin(), 1);
  while (bd.size() < r) bd.insert(bd.begin(), 1);
  const int64_t m = ad[r - 2], k = ad[r - 1], n = bd[r - 1];
  std::vector<int64_t> batch(r - 2);
  int64_t nb = 1;
  for (size_t i = 0; i + 2 < r; ++i) nb *= batch[i] = std::max(ad[i], bd[i]);
  *out = Shape{};
  for (int64_t d : batch) out->push_back(d);
  if (!a1) out->push_back(m);
  if (!b1) out->push_back(n);
  std::vector<double> y(static_cast<size_t>(nb * m * n));
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0, sa = m * k, sb = k * n;
    for (size_t i = r - 2; i-- > 0;) {
      const int64_t v = rem % batch[i];
      rem /= batch[i];
      oa += (ad[i] == 1 ? 0 : v) * sa;
      ob += (bd[i] == 1 ? 0 : v) * sb;
      sa *= ad[i];
      sb *= bd[i];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q)
          s += double(a.data<float>()[oa + i * k + q]) * b.data<float>()[ob + q * n + j];
        y[static_cast<size_t>((bi * m + i) * n + j)] = s;
      }
  }
  return y;
}

void check_matmul(Shape as, Shape bs, uint32_t seed) {
  SCOPED_TRACE(as.to_string() + " x " + bs.to_string());
  const HostTensor a = rand_tensor(as, seed), b = rand_tensor(bs, seed + 1);
  Shape out;
  const std::vector<double> want = ref_matmul(a, b, &out);
  auto got = run_both("MatMul", 13, {&a, &b}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], out, want);
}

TEST(MatMul, ShapesAndBroadcast) {
  check_matmul({3, 4}, {4, 5}, 1);
  check_matmul({2, 3, 4}, {4, 5}, 2);           // A's batch folds into M
  check_matmul({2, 1, 3, 4}, {3, 4, 6}, 3);     // both broadcast
  check_matmul({4}, {2, 4, 3}, 4);              // 1-D A
  check_matmul({2, 3, 4}, {4}, 5);              // 1-D B
  check_matmul({4}, {4}, 6);                    // dot product -> scalar
  check_matmul({3, 4}, {2, 4, 5}, 7);           // B batched, A shared
  check_matmul({64, 96, 80}, {64, 80, 72}, 8);  // many batches in parallel
  check_matmul({300, 256}, {256, 200}, 9);      // one parallel GEMM with tiles
  check_matmul({1, 16, 512}, {512, 128}, 10);
  check_matmul({3, 200, 160}, {3, 160, 150}, 11);      // few big batches: parallel GEMMs
  check_matmul({3, 2, 130, 32}, {3, 2, 32, 140}, 12);  // attention-like, batch-parallel
  check_matmul({2, 2, 150, 150}, {2, 2, 150, 40}, 13);
}

TEST(MatMul, ZeroSized) {
  check_matmul({0, 4}, {4, 5}, 1);
  check_matmul({2, 0, 3}, {3, 5}, 2);
  // k = 0: all zeros
  const HostTensor a(DType::kFloat, Shape{3, 0}), b(DType::kFloat, Shape{0, 5});
  auto got = run_both("MatMul", 13, {&a, &b}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{3, 5}, std::vector<double>(15, 0.0));
}

TEST(MatMul, Errors) {
  const HostTensor a = rand_tensor({3, 4}, 1), b = rand_tensor({5, 6}, 2);
  Status s = run_status("MatMul", 13, {&a, &b}, 1, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[3,4]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("[5,6]"), std::string::npos) << s.message();
  const HostTensor c = rand_tensor({2, 3, 4}, 1), d = rand_tensor({3, 4, 2}, 2);
  EXPECT_EQ(run_status("MatMul", 13, {&c, &d}, 1, {}).code(), StatusCode::kInvalidArgument);
  // float16 runs through the float32 kernel (narrow_float_ops_test.cpp); bool has no MatMul.
  const HostTensor h(DType::kBool, Shape{2, 2});
  s = run_status("MatMul", 13, {&h, &h}, 1, {});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("MatMul"), std::string::npos);
  EXPECT_NE(s.message().find(dtype_name(DType::kBool)), std::string::npos) << s.message();
}

TEST(MatMul, Integers) {
  const HostTensor a = testing::make_tensor<int32_t>(DType::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = testing::make_tensor<int32_t>(DType::kInt32, {3, 2}, {7, 8, 9, 10, 11, 12});
  auto got = run_both("MatMul", 13, {&a, &b}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_EQ(got[0].dtype(), DType::kInt32);
  const int32_t* y = got[0].data<int32_t>();
  EXPECT_EQ((std::vector<int32_t>(y, y + 4)), (std::vector<int32_t>{58, 64, 139, 154}));
  const HostTensor c = testing::make_tensor<int64_t>(DType::kInt64, {3}, {1, 2, 3});
  const HostTensor d = testing::make_tensor<int64_t>(DType::kInt64, {3}, {4, 5, 6});
  got = run_both("MatMul", 13, {&c, &d}, 1, {});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().rank(), 0);
  EXPECT_EQ(got[0].data<int64_t>()[0], 32);
}

std::vector<double> ref_gemm(const HostTensor& a, const HostTensor& b, const HostTensor* c, bool ta,
                             bool tb, double alpha, double beta, int64_t* m_out, int64_t* n_out) {
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  *m_out = m;
  *n_out = n;
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double av = a.data<float>()[ta ? q * m + i : i * k + q];
        const double bv = b.data<float>()[tb ? j * k + q : q * n + j];
        s += av * bv;
      }
      double cv = 0;
      if (c) {
        const Shape& cs = c->shape();
        const int64_t cn = cs.rank() >= 1 ? cs[cs.rank() - 1] : 1;
        const int64_t cm = cs.rank() == 2 ? cs[0] : 1;
        cv = c->data<float>()[(cm == 1 ? 0 : i) * cn + (cn == 1 ? 0 : j)];
      }
      y[static_cast<size_t>(i * n + j)] = alpha * s + beta * cv;
    }
  return y;
}

TEST(Gemm, TransposesAlphaBetaAndBroadcastC) {
  const int64_t M = 7, K = 5, N = 6;
  uint32_t seed = 10;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (Shape cs : {Shape{}, Shape{N}, Shape{1, N}, Shape{M, 1}, Shape{M, N}, Shape{1}}) {
        SCOPED_TRACE("transA " + std::to_string(ta) + " transB " + std::to_string(tb) + " C " +
                     cs.to_string());
        const HostTensor a = rand_tensor(ta ? Shape{K, M} : Shape{M, K}, ++seed);
        const HostTensor b = rand_tensor(tb ? Shape{N, K} : Shape{K, N}, ++seed);
        const HostTensor c = rand_tensor(cs, ++seed);
        for (float beta : {1.f, 0.5f}) {
          int64_t m, n;
          const auto want = ref_gemm(a, b, &c, ta, tb, 1.5, beta, &m, &n);
          auto got = run_both("Gemm", 13, {&a, &b, &c}, 1,
                              A().i("transA", ta).i("transB", tb).f("alpha", 1.5f).f("beta", beta));
          ASSERT_EQ(got.size(), 1u);
          expect_close(got[0], Shape{m, n}, want);
        }
      }
}

TEST(Gemm, NoCLargeAndErrors) {
  const HostTensor a = rand_tensor({200, 300}, 1), b = rand_tensor({256, 300}, 2);
  int64_t m, n;
  const auto want = ref_gemm(a, b, nullptr, false, true, 1.0, 1.0, &m, &n);
  auto got = run_both("Gemm", 11, {&a, &b, nullptr}, 1, A().i("transB", 1));
  ASSERT_EQ(got.size(), 1u);
  expect_close(got[0], Shape{m, n}, want);

  Status s = run_status("Gemm", 13, {&a, &b}, 1, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("[200,300]"), std::string::npos) << s.message();
  const HostTensor c = rand_tensor({3, 256}, 3);
  EXPECT_EQ(run_status("Gemm", 13, {&a, &b, &c}, 1, A().i("transB", 1)).code(),
            StatusCode::kInvalidArgument);
  const HostTensor z(DType::kFloat, Shape{0, 300});
  got = run_both("Gemm", 13, {&z, &b}, 1, A().i("transB", 1));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].shape().to_string(), "[0,256]");
}

TEST(Epilogue, MatMulAndGemmBiasActivationResidual) {
  const HostTensor a = rand_tensor({2, 40, 64}, 1), b = rand_tensor({64, 48}, 2);
  const HostTensor bias = rand_tensor({48}, 3), res = rand_tensor({2, 40, 48}, 4);
  Shape out;
  const auto mm = ref_matmul(a, b, &out);
  Epilogue e;
  e.bias_input = 2;
  e.residual_input = 3;
  e.activation = Activation::kClip;
  e.alpha = -0.5f;
  e.beta = 0.75f;
  for (bool before : {true, false}) {
    e.residual_before_activation = before;
    std::vector<double> want(mm.size());
    for (size_t i = 0; i < mm.size(); ++i) {
      double v = mm[i] + bias.data<float>()[i % 48];
      if (before) v += res.data<float>()[i];
      v = std::min(0.75, std::max(-0.5, v));
      if (!before) v += res.data<float>()[i];
      want[i] = v;
    }
    for (int threads : {1, 2}) {
      const NodeInfo node = testing::node_info("MatMul", 13, {&a, &b, &bias, &res}, 1);
      auto got = run_made(make_matmul_kernel(node, e), {&a, &b, &bias, &res}, 1, threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(got.value()[0], out, want);
    }
  }
  // Gemm with a Linear-style C and a HardSwish epilogue.
  const HostTensor x = rand_tensor({33, 20}, 5, -4, 4), w = rand_tensor({24, 20}, 6),
                   c = rand_tensor({24}, 7);
  int64_t m, n;
  auto want = ref_gemm(x, w, &c, false, true, 1.0, 1.0, &m, &n);
  for (double& v : want) v = v * std::min(1.0, std::max(0.0, v / 6 + 0.5));
  Epilogue hs;
  hs.activation = Activation::kHardSwish;
  const NodeInfo node = testing::node_info("Gemm", 13, {&x, &w, &c}, 1, A().i("transB", 1));
  auto got = run_made(make_gemm_kernel(node, hs), {&x, &w, &c}, 1, 2);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_close(got.value()[0], Shape{m, n}, want);
  // A residual of the wrong shape is an error naming both shapes.
  Epilogue bad;
  bad.residual_input = 2;
  const HostTensor wrong = rand_tensor({2, 40}, 8);
  const NodeInfo node2 = testing::node_info("MatMul", 13, {&a, &b, &wrong}, 1);
  auto err = run_made(make_matmul_kernel(node2, bad), {&a, &b, &wrong}, 1, 1);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
