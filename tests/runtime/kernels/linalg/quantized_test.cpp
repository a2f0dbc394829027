// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear and the integer contractions against
// the ONNX spec's examples and straightforward references (int64 sums, the same requantize
// rule written out).
#include <cmath>
#include <random>

#include "runtime/kernels/linalg/quantize.h"
#include "runtime/tensor/float8.h"
#include "tests/runtime/kernels/linalg/int_conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

using testing::make_tensor;

HostTensor u8(Shape s, const std::vector<uint8_t>& v) { return make_tensor(DType::kUint8, s, v); }
HostTensor i8(Shape s, const std::vector<int8_t>& v) { return make_tensor(DType::kInt8, s, v); }
HostTensor i32(Shape s, const std::vector<int32_t>& v) { return make_tensor(DType::kInt32, s, v); }

template <class T>
std::vector<T> vals(const HostTensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.shape().numel());
}

template <class T>
HostTensor random_q(DType dt, Shape s, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> d(std::numeric_limits<T>::min(),
                                       std::numeric_limits<T>::max());
  std::vector<T> v(static_cast<size_t>(s.numel()));
  for (T& x : v) x = static_cast<T>(d(g));
  return make_tensor(dt, s, v);
}

std::vector<HostTensor> ok(const std::string& op, int opset,
                           const std::vector<const HostTensor*>& in, size_t outs = 1,
                           const Attrs& a = {}, int threads = 1) {
  auto r = testing::run_kernel(registry(), op, opset, in, outs, a, threads);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  if (!r.ok()) return std::vector<HostTensor>(outs);
  return std::move(r).value();
}

StatusCode code(const std::string& op, int opset, const std::vector<const HostTensor*>& in,
                size_t outs = 1, const Attrs& a = {}) {
  auto r = testing::run_kernel(registry(), op, opset, in, outs, a, 1);
  return r.ok() ? StatusCode::kOk : r.status().code();
}

TEST(Quantize, RoundHalfEvenSaturationAndNan) {
  EXPECT_EQ(quant::round_saturate<uint8_t>(2.5f, 0), 2);
  EXPECT_EQ(quant::round_saturate<uint8_t>(3.5f, 0), 4);
  EXPECT_EQ(quant::round_saturate<int8_t>(-2.5f, 0), -2);
  EXPECT_EQ(quant::round_saturate<int8_t>(-1000.f, 3), -128);
  EXPECT_EQ(quant::round_saturate<uint8_t>(1e30f, 0), 255);
  EXPECT_EQ(quant::round_saturate<uint8_t>(std::nanf(""), 7), 7);
  EXPECT_EQ(quant::requantize<int8_t>(100, 0.025f, -1), 1);  // 2.5 -> 2, + -1
}

// A constant input's scales are checked on its first run and again only if its tensor moves; any
// other input's, every run.
TEST(Quantize, ScaleCheckSkipsOnlyAConstantItHasChecked) {
  Tensor good, bad;
  float good_values[3] = {0.1f, 0.2f, 0.3f}, bad_values[3] = {0.1f, 0.f, 0.3f};
  good.dtype = bad.dtype = DType::kFloat;
  good.shape = bad.shape = Shape({3});
  good.data = good_values;
  bad.data = bad_values;
  const quant::QuantParam g{&good, 3}, b{&bad, 3};
  quant::ScaleCheck constant(true), varying(false);
  EXPECT_FALSE(constant.check("Op", "w_scale", b).ok());
  EXPECT_TRUE(constant.check("Op", "w_scale", g).ok());
  EXPECT_FALSE(constant.check("Op", "w_scale", b).ok()) << "another tensor is checked again";
  EXPECT_TRUE(varying.check("Op", "w_scale", g).ok());
  good_values[2] = -1.f;
  const Status s = varying.check("Op", "w_scale", g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("w_scale[2]"), std::string::npos) << s.to_string();
}

TEST(Quantize, OnnxExamplePerTensor) {
  const HostTensor x = floats({6}, {0, 2, 3, 1000, -254, -1000});
  const HostTensor s = floats({}, {2});
  const HostTensor zp = u8({}, {128});
  EXPECT_EQ(vals<uint8_t>(ok("QuantizeLinear", 13, {&x, &s, &zp})[0]),
            (std::vector<uint8_t>{128, 129, 130, 255, 1, 0}));
  // No zero point: uint8 with zero point 0. Ties round to even.
  const HostTensor t = floats({5}, {1, 3, 5, -1, 7});
  EXPECT_EQ(vals<uint8_t>(ok("QuantizeLinear", 10, {&t, &s})[0]),
            (std::vector<uint8_t>{0, 2, 2, 0, 4}));
  const HostTensor z8 = i8({}, {0});
  const HostTensor neg = floats({4}, {-1, -3, -5, -300});
  EXPECT_EQ(vals<int8_t>(ok("QuantizeLinear", 13, {&neg, &s, &z8})[0]),
            (std::vector<int8_t>{0, -2, -2, -128}));
  // int32 input.
  const HostTensor xi = i32({3}, {7, -7, 600});
  EXPECT_EQ(vals<int8_t>(ok("QuantizeLinear", 10, {&xi, &s, &z8})[0]),
            (std::vector<int8_t>{4, -4, 127}));
}

TEST(Quantize, PerAxisAndDequantizeRoundTrip) {
  // [1, 3, 2] along axis 1 (the default).
  const HostTensor x = floats({1, 3, 2}, {-1, 1, 20, 30, 3, -3});
  const HostTensor s = floats({3}, {1, 10, 0.5f});
  const HostTensor zp = u8({3}, {10, 100, 128});
  const auto q = ok("QuantizeLinear", 13, {&x, &s, &zp}, 1, {}, 2);
  EXPECT_EQ(vals<uint8_t>(q[0]), (std::vector<uint8_t>{9, 11, 102, 103, 134, 122}));
  const auto back = ok("DequantizeLinear", 13, {&q[0], &s, &zp});
  expect_close(back[0], Shape{1, 3, 2}, {-1, 1, 20, 30, 3, -3}, 1e-6);
  // axis -1 with a per-axis scale of 2 values.
  const HostTensor s2 = floats({2}, {1, 2});
  const HostTensor z2 = i8({2}, {0, 1});
  const auto q2 = ok("QuantizeLinear", 13, {&x, &s2, &z2}, 1, A().i("axis", -1));
  EXPECT_EQ(vals<int8_t>(q2[0]), (std::vector<int8_t>{-1, 1, 20, 16, 3, -1}));
  // Opset 10 is per tensor only; a wrong size or a bad axis is an error.
  EXPECT_EQ(code("QuantizeLinear", 10, {&x, &s, &zp}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code("QuantizeLinear", 13, {&x, &s2, &z2}), StatusCode::kInvalidArgument);
  EXPECT_EQ(code("QuantizeLinear", 13, {&x, &s, &zp}, 1, A().i("axis", 3)),
            StatusCode::kInvalidArgument);
  const HostTensor zp16 = make_tensor<int16_t>(DType::kInt16, {}, {0});
  const HostTensor s1 = floats({}, {1});
  EXPECT_EQ(code("QuantizeLinear", 13, {&x, &s1, &zp16}), StatusCode::kUnsupported);
}

TEST(Dequantize, OnnxExamplesAndInt32) {
  const HostTensor x = u8({4}, {0, 3, 128, 255});
  const HostTensor s = floats({}, {2});
  const HostTensor zp = u8({}, {128});
  expect_close(ok("DequantizeLinear", 10, {&x, &s, &zp})[0], Shape{4}, {-256, -250, 0, 254}, 0);
  const HostTensor xi = i32({3}, {-5, 0, 2000000000});
  expect_close(ok("DequantizeLinear", 13, {&xi, &s})[0], Shape{3}, {-10, 0, 4e9}, 1e-7);
  const HostTensor zp8 = i8({}, {0});
  EXPECT_EQ(code("DequantizeLinear", 13, {&x, &s, &zp8}), StatusCode::kInvalidArgument);
  const HostTensor f = floats({1}, {1});
  EXPECT_EQ(code("DequantizeLinear", 13, {&f, &s}), StatusCode::kUnsupported);
}

// Opset 21's blocked form: parameters of x's shape with the axis cut into blocks of block_size
// (the last block may be short).
TEST(Quantize, BlockedAlongAnAxis) {
  const HostTensor x = i8({2, 5}, {10, 20, 30, 40, 50, -10, -20, -30, -40, -50});
  const HostTensor s = floats({2, 3}, {0.5f, 1.f, 2.f, 0.25f, 4.f, 8.f});
  const HostTensor z = i8({2, 3}, {0, 1, 2, -1, 0, 3});
  const auto y = ok("DequantizeLinear", 21, {&x, &s, &z}, 1, A().i("axis", 1).i("block_size", 2));
  const std::vector<float> want = {
      (10 - 0) * 0.5f,   (20 - 0) * 0.5f,   (30 - 1) * 1.f,  (40 - 1) * 1.f,  (50 - 2) * 2.f,
      (-10 + 1) * 0.25f, (-20 + 1) * 0.25f, (-30 - 0) * 4.f, (-40 - 0) * 4.f, (-50 - 3) * 8.f};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y[0].data<float>()[i], want[i]) << i;
  // QuantizeLinear blocked along axis 0: rows 0-1 share a parameter row, row 2 has its own.
  const HostTensor xf = floats({3, 2}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  const HostTensor qs = floats({2, 2}, {0.5f, 1.f, 2.f, 4.f});
  const HostTensor qz = u8({2, 2}, {0, 10, 20, 30});
  const auto q = ok("QuantizeLinear", 21, {&xf, &qs, &qz}, 1, A().i("axis", 0).i("block_size", 2));
  EXPECT_EQ(vals<uint8_t>(q[0]), (std::vector<uint8_t>{2, 12, 6, 14, 22, 32}));
  // Parameters of another shape, or a negative block size, are errors.
  const HostTensor bad = floats({2, 2}, {1, 1, 1, 1});
  EXPECT_EQ(code("DequantizeLinear", 21, {&x, &bad}, 1, A().i("axis", 1).i("block_size", 2)),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(code("DequantizeLinear", 21, {&x, &s, &qz}, 1, A().i("axis", 1).i("block_size", 2)),
            StatusCode::kInvalidArgument);
  EXPECT_NE(code("DequantizeLinear", 21, {&x, &s}, 1, A().i("axis", 1).i("block_size", -1)),
            StatusCode::kOk);
}

TEST(DynamicQuantize, OnnxExamplesAndAllZero) {
  const HostTensor x = floats({6}, {0, 2, -3, -2.5f, 1.34f, 0.5f});
  const auto r = ok("DynamicQuantizeLinear", 11, {&x}, 3, {}, 2);
  EXPECT_FLOAT_EQ(r[1].data<float>()[0], 5.0f / 255.0f);
  EXPECT_EQ(r[2].data<uint8_t>()[0], 153);
  EXPECT_EQ(vals<uint8_t>(r[0]), (std::vector<uint8_t>{153, 255, 0, 26, 221, 179}));
  // All positive: the range still includes 0, zero point 0.
  const HostTensor pos = floats({3}, {1, 2, 3.4f});
  const auto p = ok("DynamicQuantizeLinear", 11, {&pos}, 3);
  EXPECT_EQ(p[2].data<uint8_t>()[0], 0);
  EXPECT_EQ(vals<uint8_t>(p[0]), (std::vector<uint8_t>{75, 150, 255}));
  const HostTensor zeros = floats({2}, {0, 0});
  const auto z = ok("DynamicQuantizeLinear", 11, {&zeros}, 3);
  EXPECT_EQ(z[1].data<float>()[0], 0.0f);
  EXPECT_EQ(vals<uint8_t>(z[0]), (std::vector<uint8_t>{0, 0}));
  const HostTensor ints = i32({1}, {1});
  EXPECT_EQ(code("DynamicQuantizeLinear", 11, {&ints}, 3), StatusCode::kUnsupported);
}

// sum_k (a - azp[row]) * (b - bzp[col]) for one [M, K] x [K, N] pair.
template <class TA, class TB>
std::vector<int64_t> ref_matmul(const TA* a, const TB* b, int64_t m, int64_t k, int64_t n,
                                const std::vector<int>& azp, const std::vector<int>& bzp) {
  std::vector<int64_t> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += (int64_t{a[i * k + kk]} - azp[azp.size() == 1 ? 0 : i]) *
               (int64_t{b[kk * n + j]} - bzp[bzp.size() == 1 ? 0 : j]);
      y[static_cast<size_t>(i * n + j)] = acc;
    }
  return y;
}

TEST(MatMulInteger, OnnxExampleAndPerRowColumnZeroPoints) {
  const HostTensor a = u8({4, 3}, {11, 7, 3, 10, 6, 2, 9, 5, 1, 8, 4, 0});
  const HostTensor b = u8({3, 2}, {1, 4, 2, 5, 3, 6});
  const HostTensor azp = u8({}, {12}), bzp = u8({}, {0});
  EXPECT_EQ(vals<int32_t>(ok("MatMulInteger", 10, {&a, &b, &azp, &bzp})[0]),
            (std::vector<int32_t>{-38, -83, -44, -98, -50, -113, -56, -128}));
  // int8 A per row, uint8 B per column, with threads.
  const HostTensor a8 = random_q<int8_t>(DType::kInt8, {5, 33}, 1);
  const HostTensor b8 = random_q<uint8_t>(DType::kUint8, {33, 7}, 2);
  const std::vector<int8_t> az{-3, 0, 5, 127, -128};
  const std::vector<uint8_t> bz{0, 1, 2, 128, 200, 255, 9};
  const HostTensor az_t = i8({5}, az), bz_t = u8({7}, bz);
  const auto y = ok("MatMulInteger", 10, {&a8, &b8, &az_t, &bz_t}, 1, {}, 2);
  const auto want =
      ref_matmul(a8.data<int8_t>(), b8.data<uint8_t>(), 5, 33, 7,
                 std::vector<int>(az.begin(), az.end()), std::vector<int>(bz.begin(), bz.end()));
  ASSERT_EQ(y[0].shape(), (Shape{5, 7}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y[0].data<int32_t>()[i], want[i]) << i;
}

TEST(MatMulInteger, BroadcastBatchesAndOneDimOperands) {
  // [2, 3, 4] x [4, 5] and [4] x [2, 4, 5].
  const HostTensor a = random_q<uint8_t>(DType::kUint8, {2, 3, 4}, 3);
  const HostTensor b = random_q<uint8_t>(DType::kUint8, {4, 5}, 4);
  const HostTensor azp = u8({2, 3, 1}, {1, 2, 3, 4, 5, 6});  // per row of each matrix
  const auto y = ok("MatMulInteger", 10, {&a, &b, &azp}, 1, {}, 2);
  ASSERT_EQ(y[0].shape(), (Shape{2, 3, 5}));
  for (int bt = 0; bt < 2; ++bt) {
    const auto want = ref_matmul(a.data<uint8_t>() + bt * 12, b.data<uint8_t>(), 3, 4, 5,
                                 {1 + 3 * bt, 2 + 3 * bt, 3 + 3 * bt}, {0});
    for (int i = 0; i < 15; ++i) EXPECT_EQ(y[0].data<int32_t>()[bt * 15 + i], want[i]);
  }
  const HostTensor v = random_q<uint8_t>(DType::kUint8, {4}, 5);
  const HostTensor bb = random_q<uint8_t>(DType::kUint8, {2, 4, 5}, 6);
  const auto yv = ok("MatMulInteger", 10, {&v, &bb});
  ASSERT_EQ(yv[0].shape(), (Shape{2, 5}));
  const auto want = ref_matmul(v.data<uint8_t>(), bb.data<uint8_t>() + 20, 1, 4, 5, {0}, {0});
  for (int j = 0; j < 5; ++j) EXPECT_EQ(yv[0].data<int32_t>()[5 + j], want[j]);
}

TEST(MatMulInteger, BadInputsAreErrors) {
  const HostTensor a = u8({2, 3}, {1, 2, 3, 4, 5, 6});
  const HostTensor b = u8({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(code("MatMulInteger", 10, {&a, &b}), StatusCode::kInvalidArgument);
  const HostTensor b3 = u8({3, 1}, {1, 2, 3});
  const HostTensor zp_wrong_type = i8({}, {0});
  EXPECT_EQ(code("MatMulInteger", 10, {&a, &b3, &zp_wrong_type}), StatusCode::kInvalidArgument);
  const HostTensor zp_wrong_size = u8({3}, {0, 0, 0});
  EXPECT_EQ(code("MatMulInteger", 10, {&a, &b3, &zp_wrong_size}), StatusCode::kInvalidArgument);
  const HostTensor f = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(code("MatMulInteger", 10, {&f, &b3}), StatusCode::kUnsupported);
}

TEST(QLinearMatMul, OnnxExampleAndReference) {
  const HostTensor a = u8({2, 4}, {208, 236, 0, 238, 3, 214, 255, 29});
  const HostTensor as = floats({}, {0.0066f}), az = u8({}, {113});
  const HostTensor b = u8({4, 3}, {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247});
  const HostTensor bs = floats({}, {0.00705f}), bz = u8({}, {114});
  const HostTensor ys = floats({}, {0.0107f}), yz = u8({}, {118});
  EXPECT_EQ(vals<uint8_t>(ok("QLinearMatMul", 10, {&a, &as, &az, &b, &bs, &bz, &ys, &yz})[0]),
            (std::vector<uint8_t>{168, 115, 255, 1, 66, 151}));
  // int8 output, per-column b scale and zero point, batched a.
  const HostTensor a8 = random_q<int8_t>(DType::kInt8, {3, 2, 9}, 11);
  const HostTensor b8 = random_q<int8_t>(DType::kInt8, {9, 4}, 12);
  const HostTensor as8 = floats({}, {0.02f}), az8 = i8({}, {-2});
  const HostTensor bs4 = floats({4}, {0.01f, 0.02f, 0.005f, 0.03f}), bz4 = i8({4}, {0, 1, -1, 3});
  const HostTensor ys8 = floats({}, {0.05f}), yz8 = i8({}, {-5});
  const auto y = ok("QLinearMatMul", 10, {&a8, &as8, &az8, &b8, &bs4, &bz4, &ys8, &yz8}, 1, {}, 2);
  ASSERT_EQ(y[0].shape(), (Shape{3, 2, 4}));
  for (int bt = 0; bt < 3; ++bt) {
    const auto acc =
        ref_matmul(a8.data<int8_t>() + bt * 18, b8.data<int8_t>(), 2, 9, 4, {-2}, {0, 1, -1, 3});
    for (int i = 0; i < 8; ++i) {
      const float mult = 0.02f * bs4.data<float>()[i % 4] / 0.05f;
      const float v = std::nearbyint(static_cast<float>(acc[i]) * mult) - 5.0f;
      const auto want = static_cast<int8_t>(std::clamp(v, -128.0f, 127.0f));
      EXPECT_EQ(y[0].data<int8_t>()[bt * 8 + i], want) << bt << "," << i;
    }
  }
  const HostTensor ys2 = floats({2}, {1, 1});
  EXPECT_EQ(code("QLinearMatMul", 10, {&a, &as, &az, &b, &bs, &bz, &ys2, &yz}),
            StatusCode::kInvalidArgument);
}

// Direct 2-D convolution of centred values (int64 sums), NCHW, with per-channel w zero points.
struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, group = 1, stride = 1, pad = 0, dil = 1;
};

// A square-window case of the shared reference (int_conv_reference.h).
template <class TX, class TW>
std::vector<int64_t> ref_conv(const ConvCase& p, const TX* x, const TW* w, int xzp,
                              const std::vector<int>& wzp, int64_t* oh, int64_t* ow) {
  const IntConvGeometry g{p.n,      p.c,      p.h,   p.w,   p.m,   p.kh,  p.kw, p.group,
                          p.stride, p.stride, p.pad, p.pad, p.pad, p.pad, p.dil};
  return ref_int_conv(g, x, w, xzp, wzp, oh, ow);
}

Attrs conv_attrs(const ConvCase& p) {
  return A()
      .i("group", p.group)
      .is("strides", {p.stride, p.stride})
      .is("pads", {p.pad, p.pad, p.pad, p.pad})
      .is("dilations", {p.dil, p.dil});
}

// int8 B with zero point 0 and a per-tensor A zero point take the int8 GEMM (int8_gemm.h):
// batches (one broadcast), both A types, blocks of rows over two threads, requantized with a
// scale per column.
TEST(QLinearMatMul, Int8GemmPathMatchesTheReference) {
  for (DType at : {DType::kUint8, DType::kInt8}) {
    SCOPED_TRACE(dtype_name(at));
    const int64_t batches = 3, m = 37, k = 70, n = 29;
    const HostTensor a = at == DType::kUint8 ? random_q<uint8_t>(at, {batches, m, k}, 41)
                                             : random_q<int8_t>(at, {batches, m, k}, 41);
    const HostTensor b = random_q<int8_t>(DType::kInt8, {1, k, n}, 42);  // broadcast batch
    const HostTensor az = at == DType::kUint8 ? u8({}, {131}) : i8({}, {-9});
    const int azv = at == DType::kUint8 ? 131 : -9;
    const HostTensor bz = i8({n}, std::vector<int8_t>(static_cast<size_t>(n), 0));
    const auto y = ok("MatMulInteger", 10, {&a, &b, &az, &bz}, 1, {}, 2);
    ASSERT_EQ(y[0].shape(), (Shape{batches, m, n}));
    std::vector<float> bs;
    for (int64_t j = 0; j < n; ++j) bs.push_back(0.001f * static_cast<float>(1 + j % 5));
    const HostTensor as = floats({}, {0.03f}), bst = floats({n}, bs), ys = floats({}, {0.2f});
    const HostTensor yz = u8({}, {100});
    const auto q = ok("QLinearMatMul", 10, {&a, &as, &az, &b, &bst, &bz, &ys, &yz}, 1, {}, 2);
    for (int64_t bi = 0; bi < batches; ++bi) {
      const auto want =
          at == DType::kUint8
              ? ref_matmul(a.data<uint8_t>() + bi * m * k, b.data<int8_t>(), m, k, n, {azv}, {0})
              : ref_matmul(a.data<int8_t>() + bi * m * k, b.data<int8_t>(), m, k, n, {azv}, {0});
      for (int64_t e = 0; e < m * n; ++e) {
        const int64_t j = e % n;
        ASSERT_EQ(y[0].data<int32_t>()[bi * m * n + e], want[static_cast<size_t>(e)]) << e;
        const float mult = 0.03f * bs[static_cast<size_t>(j)] / 0.2f;
        const float v =
            std::nearbyint(static_cast<float>(want[static_cast<size_t>(e)]) * mult) + 100.0f;
        ASSERT_EQ(q[0].data<uint8_t>()[bi * m * n + e],
                  static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f)))
            << e;
      }
    }
  }
}

TEST(ConvInteger, OnnxExamples) {
  const HostTensor x = u8({1, 1, 3, 3}, {2, 3, 4, 5, 6, 7, 8, 9, 10});
  const HostTensor w = u8({1, 1, 2, 2}, {1, 1, 1, 1});
  const HostTensor xz = u8({}, {1});
  EXPECT_EQ(vals<int32_t>(ok("ConvInteger", 10, {&x, &w, &xz})[0]),
            (std::vector<int32_t>{12, 16, 24, 28}));
  const auto padded = ok("ConvInteger", 10, {&x, &w, &xz}, 1, A().is("pads", {1, 1, 1, 1}));
  ASSERT_EQ(padded[0].shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(vals<int32_t>(padded[0]),
            (std::vector<int32_t>{1, 3, 5, 3, 5, 12, 16, 9, 11, 24, 28, 15, 7, 15, 17, 9}));
}

TEST(ConvInteger, GroupsStridesDilationsPerChannelZeroPoints) {
  const ConvCase p{2, 4, 9, 8, 6, 3, 3, 2, 2, 1, 1};
  const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 21);
  const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, p.c / p.group, p.kh, p.kw}, 22);
  const HostTensor xz = u8({}, {100});
  const std::vector<int8_t> wz{0, 1, -1, 5, -7, 127};
  const HostTensor wz_t = i8({6}, wz);
  const auto y = ok("ConvInteger", 10, {&x, &w, &xz, &wz_t}, 1, conv_attrs(p), 2);
  int64_t oh = 0, ow = 0;
  const auto want = ref_conv(p, x.data<uint8_t>(), w.data<int8_t>(), 100,
                             std::vector<int>(wz.begin(), wz.end()), &oh, &ow);
  ASSERT_EQ(y[0].shape(), (Shape{p.n, p.m, oh, ow}));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y[0].data<int32_t>()[i], want[i]) << i;
  // Dilation 2 without padding, per-tensor zero point.
  const ConvCase d{2, 4, 9, 8, 6, 3, 3, 1, 1, 0, 2};
  const HostTensor wd = random_q<int8_t>(DType::kInt8, {d.m, d.c, d.kh, d.kw}, 23);
  const auto yd = ok("ConvInteger", 10, {&x, &wd, &xz}, 1, conv_attrs(d));
  const auto wantd = ref_conv(d, x.data<uint8_t>(), wd.data<int8_t>(), 100, {0}, &oh, &ow);
  ASSERT_EQ(yd[0].shape(), (Shape{d.n, d.m, oh, ow}));
  for (size_t i = 0; i < wantd.size(); ++i) EXPECT_EQ(yd[0].data<int32_t>()[i], wantd[i]) << i;
}

// A strided 1x1 conv without padding (ResNet's downsample) runs as a stride-1 one on the input
// it reads, copied compactly: the same sums, for uint8 and int8 inputs, strides 2 and 3, odd
// sizes, one or two images.
TEST(ConvInteger, StridedPointwiseMatchesTheReference) {
  for (const ConvCase& p :
       {ConvCase{1, 32, 9, 7, 48, 1, 1, 1, 2, 0, 1}, ConvCase{2, 16, 11, 10, 32, 1, 1, 1, 3, 0, 1},
        ConvCase{1, 64, 28, 28, 128, 1, 1, 1, 2, 0, 1}}) {
    SCOPED_TRACE("c " + std::to_string(p.c) + " stride " + std::to_string(p.stride));
    const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, p.c, 1, 1}, 41);
    int64_t oh = 0, ow = 0;
    const HostTensor xu = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 42);
    const HostTensor zu = u8({}, {120});
    const auto yu = ok("ConvInteger", 10, {&xu, &w, &zu}, 1, conv_attrs(p), 2);
    const auto want_u = ref_conv(p, xu.data<uint8_t>(), w.data<int8_t>(), 120, {0}, &oh, &ow);
    ASSERT_EQ(yu[0].shape(), (Shape{p.n, p.m, oh, ow}));
    for (size_t i = 0; i < want_u.size(); ++i) ASSERT_EQ(yu[0].data<int32_t>()[i], want_u[i]) << i;
    const HostTensor xi = random_q<int8_t>(DType::kInt8, {p.n, p.c, p.h, p.w}, 43);
    const HostTensor zi = i8({}, {-5});
    const auto yi = ok("ConvInteger", 10, {&xi, &w, &zi}, 1, conv_attrs(p), 2);
    const auto want_i = ref_conv(p, xi.data<int8_t>(), w.data<int8_t>(), -5, {0}, &oh, &ow);
    for (size_t i = 0; i < want_i.size(); ++i) ASSERT_EQ(yi[0].data<int32_t>()[i], want_i[i]) << i;
  }
}

TEST(QLinearConv, RequantizesWithBiasAndPerChannelScales) {
  const ConvCase p{1, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1};
  const HostTensor x = random_q<int8_t>(DType::kInt8, {p.n, p.c, p.h, p.w}, 31);
  const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, p.c, p.kh, p.kw}, 32);
  const HostTensor xs = floats({}, {0.02f}), xz = i8({}, {3});
  const HostTensor ws = floats({4}, {0.01f, 0.002f, 0.004f, 0.03f}), wz = i8({}, {0});
  const HostTensor ys = floats({}, {0.1f}), yz = u8({}, {128});
  const HostTensor bias = i32({4}, {100, -2000, 0, 7});
  const auto y =
      ok("QLinearConv", 10, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &bias}, 1, conv_attrs(p), 2);
  int64_t oh = 0, ow = 0;
  const auto acc = ref_conv(p, x.data<int8_t>(), w.data<int8_t>(), 3, {0}, &oh, &ow);
  ASSERT_EQ(y[0].shape(), (Shape{1, 4, oh, ow}));
  ASSERT_EQ(y[0].dtype(), DType::kUint8);
  const int64_t plane = oh * ow;
  for (size_t i = 0; i < acc.size(); ++i) {
    const int64_t m = static_cast<int64_t>(i) / plane;
    const float mult = 0.02f * ws.data<float>()[m] / 0.1f;
    const float v =
        std::nearbyint(static_cast<float>(acc[i] + bias.data<int32_t>()[m]) * mult) + 128.0f;
    EXPECT_EQ(y[0].data<uint8_t>()[i], static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f))) << i;
  }
  // The ONNX example: 1x1 kernel, uint8.
  const HostTensor x1 = u8({1, 1, 2, 2}, {255, 174, 162, 25});
  const HostTensor xs1 = floats({}, {0.00369204697f}), xz1 = u8({}, {132});
  const HostTensor w1 = u8({1, 1, 1, 1}, {0});
  const HostTensor ws1 = floats({1}, {0.00172794575f}), wz1 = u8({1}, {255});
  const HostTensor ys1 = floats({}, {0.00162681262f}), yz1 = u8({}, {123});
  EXPECT_EQ(vals<uint8_t>(ok("QLinearConv", 10, {&x1, &xs1, &xz1, &w1, &ws1, &wz1, &ys1, &yz1})[0]),
            (std::vector<uint8_t>{0, 81, 93, 230}));
}

TEST(ConvInteger, BadInputsAreErrors) {
  const HostTensor x = u8({1, 2, 3, 3}, std::vector<uint8_t>(18, 1));
  const HostTensor w = u8({1, 3, 2, 2}, std::vector<uint8_t>(12, 1));
  EXPECT_EQ(code("ConvInteger", 10, {&x, &w}), StatusCode::kInvalidArgument);
  const HostTensor w2 = u8({2, 2, 2, 2}, std::vector<uint8_t>(16, 1));
  const HostTensor wz3 = u8({3}, {0, 0, 0});
  EXPECT_EQ(code("ConvInteger", 10, {&x, &w2, nullptr, &wz3}), StatusCode::kInvalidArgument);
  const HostTensor xz2 = u8({2}, {0, 0});
  EXPECT_EQ(code("ConvInteger", 10, {&x, &w2, &xz2}), StatusCode::kInvalidArgument);
  const HostTensor w_odd = u8({3, 2, 2, 2}, std::vector<uint8_t>(24, 1));
  EXPECT_EQ(code("ConvInteger", 10, {&x, &w_odd}, 1, A().i("group", 2)),
            StatusCode::kInvalidArgument);
  const HostTensor s = floats({}, {1}), z = u8({}, {0});
  const HostTensor bias_f = floats({2}, {0, 0});
  EXPECT_EQ(code("QLinearConv", 10, {&x, &s, &z, &w2, &s, &z, &s, &z, &bias_f}),
            StatusCode::kInvalidArgument);
}

// An empty w may have any dims: w's channels times group overflowed (2^62 * 4 = 0 mod 2^64)
// and matched x's 0 channels.
TEST(ConvInteger, GroupTimesWeightChannelsOverflowIsAnError) {
  const HostTensor x = u8(Shape{1, 0, 3}, {});
  const HostTensor w = u8(Shape{0, int64_t{1} << 62, 1}, {});
  EXPECT_EQ(code("ConvInteger", 10, {&x, &w}, 1, A().i("group", 4)), StatusCode::kInvalidArgument);
}

// ---- float8 (opset 19) ------------------------------------------------------------------------

HostTensor f8(DType t, Shape s, const std::vector<uint8_t>& bits) {
  return make_tensor(t, s, bits);
}

// y = saturate(x / scale + zero_point) rounded to nearest even in the float8 type (the zero
// point's), and back: (x - zero_point) * scale.
TEST(QuantizeFloat8, PerTensorSaturatesAndRoundTrips) {
  const std::vector<float> xs = {0.f, 1.f, -2.5f, 100.f, 1000.f, -1e9f, std::nanf("")};
  const HostTensor x = floats({7}, xs);
  const HostTensor s = floats({}, {2});
  const HostTensor zp = f8(DType::kFloat8E4M3FN, {}, {0});
  const auto q = ok("QuantizeLinear", 19, {&x, &s, &zp});
  ASSERT_EQ(q[0].dtype(), DType::kFloat8E4M3FN);
  // 0, 0.5, -1.25, 50 -> 48 (the nearest), 500 -> 448 and -5e8 -> -448 (saturated), NaN.
  EXPECT_EQ(vals<uint8_t>(q[0]), (std::vector<uint8_t>{0x00, 0x30, 0xba, 0x64, 0x7e, 0xfe, 0x7f}));
  const auto back = ok("DequantizeLinear", 19, {&q[0], &s, &zp});
  const std::vector<float> b = vals<float>(back[0]);
  EXPECT_EQ(std::vector<float>(b.begin(), b.begin() + 6),
            (std::vector<float>{0.f, 1.f, -2.5f, 96.f, 896.f, -896.f}));
  EXPECT_TRUE(std::isnan(b[6]));
  // saturate = 0: out of range becomes NaN (e4m3fn has no infinity).
  const auto q0 = ok("QuantizeLinear", 19, {&x, &s, &zp}, 1, A().i("saturate", 0));
  EXPECT_EQ(vals<uint8_t>(q0[0])[4], 0x7f);
  EXPECT_EQ(vals<uint8_t>(q0[0])[5], 0xff);
  EXPECT_EQ(code("QuantizeLinear", 19, {&x, &s, &zp}, 1, A().i("saturate", 3)),
            StatusCode::kInvalidModel);
}

TEST(QuantizeFloat8, PerAxisEveryType) {
  // [2, 3] along axis 1: a scale per column.
  const std::vector<float> xs = {1.f, -3.f, 7.f, 1e5f, 0.001f, -250.f};
  const std::vector<float> scales = {1.f, 2.f, 4.f};
  const HostTensor x = floats({2, 3}, xs);
  const HostTensor s = floats({3}, scales);
  for (DType t :
       {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ}) {
    const HostTensor zp = f8(t, {3}, {0, 0, 0});
    const auto q = ok("QuantizeLinear", 19, {&x, &s, &zp}, 1, {}, 2);
    ASSERT_EQ(q[0].dtype(), t);
    const std::vector<uint8_t> bits = vals<uint8_t>(q[0]);
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(bits[i], float8_from_float(t, xs[i] / scales[i % 3], true))
          << dtype_name(t) << " " << i;
    const auto back = ok("DequantizeLinear", 19, {&q[0], &s, &zp});
    const std::vector<float> b = vals<float>(back[0]);
    for (size_t i = 0; i < xs.size(); ++i)
      EXPECT_EQ(b[i], float8_to_float(t, bits[i]) * scales[i % 3]) << dtype_name(t) << " " << i;
  }
}

// ONNX keeps the integer types' formula for float8, zero point included (models leave it 0).
TEST(QuantizeFloat8, ZeroPointIsPartOfTheFormula) {
  const HostTensor x = floats({3}, {2.f, -4.f, 0.f});
  const HostTensor s = floats({}, {2});
  const HostTensor zp = f8(DType::kFloat8E5M2, {}, {0x3c});  // 1.0
  const auto q = ok("QuantizeLinear", 19, {&x, &s, &zp});
  EXPECT_EQ(vals<uint8_t>(q[0]), (std::vector<uint8_t>{0x40, 0xbc, 0x3c}));  // 2, -1, 1
  const auto back = ok("DequantizeLinear", 19, {&q[0], &s, &zp});
  EXPECT_EQ(vals<float>(back[0]), (std::vector<float>{2.f, -4.f, 0.f}));
  // The zero point must have x's type.
  const HostTensor wrong = f8(DType::kFloat8E4M3FN, {}, {0});
  EXPECT_EQ(code("DequantizeLinear", 19, {&q[0], &s, &wrong}), StatusCode::kInvalidArgument);
}

// The arithmetic kernels never read float8 bytes as numbers: a clear error naming op and type.
TEST(QuantizeFloat8, ContractionsRefuseFloat8) {
  const HostTensor a = f8(DType::kFloat8E4M3FN, {2, 2}, {0x38, 0x38, 0x38, 0x38});
  auto r = testing::run_kernel(registry(), "MatMul", 13, {&a, &a}, 1, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().to_string();
  EXPECT_NE(r.status().message().find("MatMul"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("float8e4m3fn"), std::string::npos) << r.status().message();
  const HostTensor x = f8(DType::kFloat8E5M2, {1, 1, 2, 2}, {0x3c, 0x3c, 0x3c, 0x3c});
  const HostTensor w = f8(DType::kFloat8E5M2, {1, 1, 1, 1}, {0x3c});
  auto c = testing::run_kernel(registry(), "Conv", 11, {&x, &w}, 1, {}, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnsupported) << c.status().to_string();
  EXPECT_NE(c.status().message().find("float8e5m2"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace sod2::rt::linalg_test
