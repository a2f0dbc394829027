// The linalg kernels of opsets 18-23: Attention and RotaryEmbedding (attention.cpp), LpPool
// (lp_pool.cpp), Resize-18/19 (resize18.cpp, resize.cpp, resize_antialias.cpp) and AveragePool-19
// dilations, against references written from the ONNX definitions, and their bad-input errors.
#include <cmath>
#include <tuple>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

// softmax(Q K^T * scale + mask) V for 4-D [B, H, S, D] inputs with kv heads shared by groups.
std::vector<double> attention_ref(const HostTensor& q, const HostTensor& k, const HostTensor& v,
                                  const std::vector<double>* mask, bool causal, double scale) {
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  const int64_t b = qs[0], hq = qs[1], sq = qs[2], d = qs[3], hkv = ks[1], skv = ks[2], dv = vs[3];
  const auto qv = values(q), kv = values(k), vv = values(v);
  std::vector<double> y(static_cast<size_t>(b * hq * sq * dv));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t hk = h / (hq / hkv);
      for (int64_t i = 0; i < sq; ++i) {
        std::vector<double> s(static_cast<size_t>(skv));
        double mx = -INFINITY;
        for (int64_t j = 0; j < skv; ++j) {
          double dot = 0;
          for (int64_t t = 0; t < d; ++t)
            dot += qv[static_cast<size_t>(((bi * hq + h) * sq + i) * d + t)] *
                   kv[static_cast<size_t>(((bi * hkv + hk) * skv + j) * d + t)];
          dot *= scale;
          if (mask) dot += (*mask)[static_cast<size_t>(i * skv + j)];
          if (causal && j > i) dot = -INFINITY;
          s[static_cast<size_t>(j)] = dot;
          mx = std::max(mx, dot);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t t = 0; t < dv; ++t) {
          double acc = 0;
          for (int64_t j = 0; j < skv; ++j)
            acc += s[static_cast<size_t>(j)] / sum *
                   vv[static_cast<size_t>(((bi * hkv + hk) * skv + j) * dv + t)];
          y[static_cast<size_t>(((bi * hq + h) * sq + i) * dv + t)] = acc;
        }
      }
    }
  return y;
}

TEST(Opset18Linalg, AttentionGroupedQueryWithMaskAndCausal) {
  const HostTensor q = rand_tensor({1, 4, 3, 8}, 1), k = rand_tensor({1, 2, 5, 8}, 2),
                   v = rand_tensor({1, 2, 5, 6}, 3), mask = rand_tensor({3, 5}, 4);
  const auto m = values(mask);
  auto out = run_both("Attention", 23, {&q, &k, &v, &mask}, 1, A());
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 4, 3, 6}, attention_ref(q, k, v, &m, false, 1 / std::sqrt(8.0)));
  const HostTensor k3 = rand_tensor({1, 2, 3, 8}, 5), v3 = rand_tensor({1, 2, 3, 6}, 6);
  out = run_both("Attention", 23, {&q, &k3, &v3}, 1, A().i("is_causal", 1).f("scale", 0.5f));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 4, 3, 6}, attention_ref(q, k3, v3, nullptr, true, 0.5));
}

TEST(Opset18Linalg, AttentionPresentIsPastThenNew) {
  const HostTensor q = rand_tensor({1, 1, 1, 2}, 7), k = floats({1, 1, 1, 2}, {5, 6}),
                   v = floats({1, 1, 1, 2}, {7, 8}), pk = floats({1, 1, 2, 2}, {1, 2, 3, 4}),
                   pv = floats({1, 1, 2, 2}, {-1, -2, -3, -4});
  auto out = run_both("Attention", 23, {&q, &k, &v, nullptr, &pk, &pv}, 3, A());
  ASSERT_EQ(out.size(), 3u);
  expect_close(out[1], Shape{1, 1, 3, 2}, {1, 2, 3, 4, 5, 6});
  expect_close(out[2], Shape{1, 1, 3, 2}, {-1, -2, -3, -4, 7, 8});
}

TEST(Opset18Linalg, AttentionRefusesMismatchedHeadsAndMasks) {
  const HostTensor q = rand_tensor({1, 3, 2, 4}, 1), k = rand_tensor({1, 2, 2, 4}, 2),
                   v = rand_tensor({1, 2, 2, 4}, 3);
  const Status heads = run_status("Attention", 23, {&q, &k, &v}, 1, A());
  EXPECT_FALSE(heads.ok());
  EXPECT_NE(heads.message().find("not a multiple"), std::string::npos) << heads.message();
  const HostTensor q2 = rand_tensor({1, 2, 2, 4}, 1), mask = rand_tensor({3, 3}, 4);
  const Status m = run_status("Attention", 23, {&q2, &k, &v, &mask}, 1, A());
  EXPECT_FALSE(m.ok());
  EXPECT_NE(m.message().find("does not broadcast"), std::string::npos) << m.message();
  const Status mode =
      run_status("Attention", 23, {&q2, &k, &v}, 4, A().i("qk_matmul_output_mode", 4));
  EXPECT_EQ(mode.code(), StatusCode::kInvalidModel) << mode.message();
  EXPECT_NE(mode.message().find("qk_matmul_output_mode 4"), std::string::npos) << mode.message();
  EXPECT_EQ(
      run_status("Attention", 23, {&q2, &k, &v}, 1, A().i("qk_matmul_output_mode", -1)).code(),
      StatusCode::kInvalidModel);
}

// Y and the four stages qk_matmul_output taps (0 scaled Q K^T, 1 softcapped, 2 plus the mask and
// the causal mask, 3 softmax: ONNX's numbering since its softcap-before-mask errata), in double,
// for 4-D inputs with a past: keys and values are the past, then the new. The causal diagonal is
// offset by the past length (query i is position P + i).
struct AttentionStages {
  std::vector<double> y;
  std::vector<double> stage[4];
};
AttentionStages attention_stages_ref(const HostTensor& q, const HostTensor& k, const HostTensor& v,
                                     const HostTensor& pk, const HostTensor& pv,
                                     const std::vector<double>& mask, bool causal, double softcap) {
  const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
  const int64_t b = qs[0], hq = qs[1], sq = qs[2], d = qs[3], hkv = ks[1], skv = ks[2], dv = vs[3];
  const int64_t past = pk.shape()[2], total = past + skv;
  const auto qv = values(q), kv = values(k), vv = values(v), pkv = values(pk), pvv = values(pv);
  auto key = [&](int64_t bi, int64_t h, int64_t j, int64_t t) {
    return j < past ? pkv[static_cast<size_t>(((bi * hkv + h) * past + j) * d + t)]
                    : kv[static_cast<size_t>(((bi * hkv + h) * skv + j - past) * d + t)];
  };
  auto val = [&](int64_t bi, int64_t h, int64_t j, int64_t t) {
    return j < past ? pvv[static_cast<size_t>(((bi * hkv + h) * past + j) * dv + t)]
                    : vv[static_cast<size_t>(((bi * hkv + h) * skv + j - past) * dv + t)];
  };
  AttentionStages r;
  r.y.resize(static_cast<size_t>(b * hq * sq * dv));
  for (auto& st : r.stage) st.resize(static_cast<size_t>(b * hq * sq * total));
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t h = 0; h < hq; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const size_t row = static_cast<size_t>(((bi * hq + h) * sq + i) * total);
        double mx = -INFINITY;
        for (int64_t j = 0; j < total; ++j) {
          double s = 0;
          for (int64_t t = 0; t < d; ++t)
            s += qv[static_cast<size_t>(((bi * hq + h) * sq + i) * d + t)] *
                 key(bi, h / (hq / hkv), j, t);
          s *= scale;
          r.stage[0][row + static_cast<size_t>(j)] = s;
          s = softcap * std::tanh(s / softcap);
          r.stage[1][row + static_cast<size_t>(j)] = s;
          s += mask[static_cast<size_t>(i * total + j)];
          if (causal && j > past + i) s = -INFINITY;
          r.stage[2][row + static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        double sum = 0;
        for (int64_t j = 0; j < total; ++j)
          sum += r.stage[3][row + static_cast<size_t>(j)] =
              std::exp(r.stage[2][row + static_cast<size_t>(j)] - mx);
        for (int64_t j = 0; j < total; ++j) r.stage[3][row + static_cast<size_t>(j)] /= sum;
        for (int64_t t = 0; t < dv; ++t) {
          double acc = 0;
          for (int64_t j = 0; j < total; ++j)
            acc += r.stage[3][row + static_cast<size_t>(j)] * val(bi, h / (hq / hkv), j, t);
          r.y[static_cast<size_t>(((bi * hq + h) * sq + i) * dv + t)] = acc;
        }
      }
  return r;
}

// Every qk_matmul_output_mode against the reference, on grouped-query heads with a past, a float
// mask, softcap and is_causal: masked scores are exactly -inf at mode 2 and 0 at mode 3. One
// thread only: run_both's comparison of the two runs does not take -inf.
TEST(Opset18Linalg, AttentionQkMatmulOutputStagesWithCausalPast) {
  const HostTensor q = rand_tensor({2, 4, 3, 8}, 11), k = rand_tensor({2, 2, 3, 8}, 12),
                   v = rand_tensor({2, 2, 3, 6}, 13), pk = rand_tensor({2, 2, 4, 8}, 14),
                   pv = rand_tensor({2, 2, 4, 6}, 15), mask = rand_tensor({3, 7}, 16);
  const AttentionStages ref = attention_stages_ref(q, k, v, pk, pv, values(mask), true, 1.5);
  for (int64_t mode = 0; mode < 4; ++mode) {
    SCOPED_TRACE("qk_matmul_output_mode " + std::to_string(mode));
    auto run = testing::run_kernel(
        registry(), "Attention", 23, {&q, &k, &v, &mask, &pk, &pv}, 4,
        A().i("is_causal", 1).f("softcap", 1.5f).i("qk_matmul_output_mode", mode), 1);
    ASSERT_TRUE(run.ok()) << run.status().to_string();
    const std::vector<HostTensor>& out = *run;
    ASSERT_EQ(out.size(), 4u);
    expect_close(out[0], Shape{2, 4, 3, 6}, ref.y);
    ASSERT_EQ(out[3].shape().to_string(), Shape({2, 4, 3, 7}).to_string());
    const std::vector<double>& want = ref.stage[mode];
    const float* got = out[3].data<float>();
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const bool ok = std::isinf(want[i])
                          ? got[i] == want[i]
                          : std::fabs(got[i] - want[i]) <= 1e-4 * (1 + std::fabs(want[i]));
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
    }
    EXPECT_EQ(bad, 0u);
  }
}

// A decoding step (one query after a past) under is_causal sees every key: the same Y as without
// the causal mask, and not the oldest key alone (what tril over [1, P + 1] would give).
TEST(Opset18Linalg, AttentionCausalDecodingStepSeesThePast) {
  const HostTensor q = rand_tensor({1, 2, 1, 4}, 21), k = rand_tensor({1, 1, 1, 4}, 22),
                   v = rand_tensor({1, 1, 1, 4}, 23), pk = rand_tensor({1, 1, 5, 4}, 24),
                   pv = rand_tensor({1, 1, 5, 4}, 25);
  auto causal =
      run_both("Attention", 23, {&q, &k, &v, nullptr, &pk, &pv}, 3, A().i("is_causal", 1));
  auto plain = run_both("Attention", 23, {&q, &k, &v, nullptr, &pk, &pv}, 3, A());
  ASSERT_EQ(causal.size(), 3u);
  ASSERT_EQ(plain.size(), 3u);
  expect_close(causal[0], Shape{1, 2, 1, 4}, values(plain[0]), 1e-6);
}

TEST(Opset18Linalg, RotaryEmbeddingHalvesAndInterleaved) {
  // One head of 4 features at position 1: pairs (x0, x2), (x1, x3) rotate by cos/sin row 1.
  const HostTensor x = floats({1, 1, 1, 4}, {1, 2, 3, 4});
  const HostTensor cos = floats({2, 2}, {1, 1, 0.5f, 0.25f}),
                   sin = floats({2, 2}, {0, 0, 0.75f, -0.5f});
  const HostTensor pos = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1}, {1});
  auto out = run_both("RotaryEmbedding", 23, {&x, &cos, &sin, &pos}, 1, A());
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 1, 1, 4},
               {0.5 * 1 - 0.75 * 3, 0.25 * 2 + 0.5 * 4, 0.75 * 1 + 0.5 * 3, -0.5 * 2 + 0.25 * 4});
  out = run_both("RotaryEmbedding", 23, {&x, &cos, &sin, &pos}, 1, A().i("interleaved", 1));
  expect_close(out[0], Shape{1, 1, 1, 4},
               {0.5 * 1 - 0.75 * 2, 0.75 * 1 + 0.5 * 2, 0.25 * 3 + 0.5 * 4, -0.5 * 3 + 0.25 * 4});
  const HostTensor far = testing::make_tensor<int64_t>(DType::kInt64, Shape{1, 1}, {2});
  const Status s = run_status("RotaryEmbedding", 23, {&x, &cos, &sin, &far}, 1, A());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("position id 2"), std::string::npos) << s.message();
}

TEST(Opset18Linalg, LpPoolWithDilations) {
  const HostTensor x = floats({1, 1, 1, 5}, {1, -2, 3, -4, 5});
  auto out = run_both("LpPool", 18, {&x}, 1,
                      A().is("kernel_shape", {1, 2}).is("dilations", {1, 2}).i("p", 2));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 1, 1, 3},
               {std::sqrt(1.0 + 9.0), std::sqrt(4.0 + 16.0), std::sqrt(9.0 + 25.0)});
  EXPECT_FALSE(run_status("LpPool", 18, {&x}, 1, A().i("p", 2)).ok());  // no kernel_shape
  EXPECT_FALSE(run_status("LpPool", 18, {&x}, 1, A().is("kernel_shape", {2}).i("p", 2)).ok());
}

TEST(Opset18Linalg, Resize18AxesAndPolicy) {
  const HostTensor x = rand_tensor({1, 1, 4, 6}, 11);
  const HostTensor sizes = testing::make_tensor<int64_t>(DType::kInt64, Shape{2}, {3, 3});
  // not_larger fits 4x6 into 3x3 with one scale 0.5: 2x3, as nearest Resize-13 to 2x3 gives.
  auto fitted = run_both("Resize", 18, {&x, nullptr, nullptr, &sizes}, 1,
                         A().is("axes", {2, 3}).s("keep_aspect_ratio_policy", "not_larger"));
  const HostTensor full = testing::make_tensor<int64_t>(DType::kInt64, Shape{4}, {1, 1, 2, 3});
  auto plain = run_both("Resize", 13, {&x, nullptr, nullptr, &full}, 1, A());
  ASSERT_EQ(fitted.size(), 1u);
  ASSERT_EQ(plain.size(), 1u);
  expect_close(fitted[0], Shape{1, 1, 2, 3}, values(plain[0]), 0);
  const HostTensor down = floats({2}, {0.5f, 0.5f});
  const Status axes = run_status("Resize", 18, {&x, nullptr, &down}, 1, A().is("axes", {2, 4}));
  EXPECT_FALSE(axes.ok());
  EXPECT_NE(axes.message().find("axes value 4"), std::string::npos) << axes.message();
}

// Antialias at scale 0.5 stretches the triangle filter to 2 inputs each side: the sample at
// 0.5 (half_pixel) weighs taps -1..2 by (1, 3, 3, 1) / 8, tap -1 repeating the edge; with
// exclude_outside tap -1 is dropped and the rest renormalised: (3, 3, 1) / 7.
TEST(Opset18Linalg, Resize18AntialiasStretchesTheFilter) {
  const HostTensor x = floats({1, 1, 1, 4}, {1, 2, 3, 4});
  const HostTensor half = floats({4}, {1.f, 1.f, 1.f, 0.5f});
  auto aa =
      run_both("Resize", 18, {&x, nullptr, &half}, 1, A().s("mode", "linear").i("antialias", 1));
  ASSERT_EQ(aa.size(), 1u);
  expect_close(aa[0], Shape{1, 1, 1, 2}, {13.0 / 8, 27.0 / 8});
  auto excl = run_both("Resize", 18, {&x, nullptr, &half}, 1,
                       A().s("mode", "linear").i("antialias", 1).i("exclude_outside", 1));
  ASSERT_EQ(excl.size(), 1u);
  expect_close(excl[0], Shape{1, 1, 1, 2}, {12.0 / 7, 23.0 / 7});
  // Nearest and an upsample are as without the attribute.
  const HostTensor up = floats({4}, {1.f, 1.f, 1.f, 1.5f});
  for (const auto& [mode, scales, width] :
       {std::tuple{"nearest", &half, 2}, std::tuple{"cubic", &up, 6}}) {
    auto plain = run_both("Resize", 13, {&x, nullptr, scales}, 1, A().s("mode", mode));
    auto with =
        run_both("Resize", 18, {&x, nullptr, scales}, 1, A().s("mode", mode).i("antialias", 1));
    ASSERT_EQ(plain.size(), 1u);
    ASSERT_EQ(with.size(), 1u);
    expect_close(with[0], Shape{1, 1, 1, width}, values(plain[0]), 0);
  }
}

TEST(Opset18Linalg, AveragePool19Dilations) {
  const HostTensor x = floats({1, 1, 1, 5}, {1, 2, 3, 4, 5});
  auto out =
      run_both("AveragePool", 19, {&x}, 1, A().is("kernel_shape", {1, 2}).is("dilations", {1, 2}));
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], Shape{1, 1, 1, 3}, {2, 3, 4});
}

// Hostile attributes and shapes. Attention with a zero head size against 2^62 keys: the tensors
// hold no bytes, the counts wrapped and the scores of 2^62 keys were walked (and written past a
// 64-byte scratch row). LpPool-1's float p of NaN converted to int64 (undefined). LpPool over
// 2^62 empty planes walked them all. Resize-18's not_smaller policy fitted dim 3 to
// 2^62 * 1000 (undefined to convert).
TEST(Opset18Linalg, HostileShapesAndAttributesAreRefusedOrCheap) {
  const HostTensor q = floats({1, 1, 1, 0}, {}), kv = floats({1, 1, int64_t{1} << 62, 0}, {});
  const Status a = run_status("Attention", 23, {&q, &kv, &kv}, 1, A());
  EXPECT_EQ(a.code(), StatusCode::kResourceExhausted) << a.message();

  const HostTensor x = rand_tensor({1, 1, 4}, 5);
  const Status p = run_status("LpPool", 1, {&x}, 1, A().is("kernel_shape", {2}).f("p", NAN));
  EXPECT_FALSE(p.ok());
  EXPECT_NE(p.message().find("p must be in [1, 2^30]"), std::string::npos) << p.message();

  const int64_t big = int64_t{1} << 31;
  const HostTensor planes = floats({big, big, 0}, {});
  auto pooled =
      testing::run_kernel(registry(), "LpPool", 18, {&planes}, 1, A().is("kernel_shape", {1}), 1);
  ASSERT_TRUE(pooled.ok()) << pooled.status().to_string();
  EXPECT_EQ(pooled.value()[0].shape(), (Shape{big, big, 0}));

  // A window of 2^41 taps over one element padded to it: the taps were walked for hours. A
  // dilated kernel whose span passes int64 was undefined.
  const HostTensor one = rand_tensor({1, 1, 1}, 7);
  const int64_t k41 = int64_t{1} << 41;
  const Status taps =
      run_status("LpPool", 18, {&one}, 1, A().is("kernel_shape", {k41}).is("pads", {k41 - 1, 0}));
  EXPECT_EQ(taps.code(), StatusCode::kResourceExhausted) << taps.message();
  const Status span =
      run_status("LpPool", 18, {&one}, 1,
                 A().is("kernel_shape", {int64_t{1} << 40}).is("dilations", {int64_t{1} << 40}));
  EXPECT_FALSE(span.ok());
  EXPECT_NE(span.message().find("too large"), std::string::npos) << span.message();

  const HostTensor img = rand_tensor({1, 1, 1, 1000}, 6);
  const HostTensor sizes =
      testing::make_tensor<int64_t>(DType::kInt64, Shape{2}, {int64_t{1} << 62, 1});
  const Status r = run_status("Resize", 18, {&img, nullptr, nullptr, &sizes}, 1,
                              A().is("axes", {2, 3}).s("keep_aspect_ratio_policy", "not_smaller"));
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.message().find("keep_aspect_ratio_policy"), std::string::npos) << r.message();

  // Antialias shrinking a crop box a million times the input would span 2 million taps per
  // output, for each of the 10 outputs.
  const HostTensor row = rand_tensor({1, 1, 1, 10}, 8);
  const HostTensor roi = floats({8}, {0, 0, 0, 0, 1, 1, 1, 1e6f});
  const HostTensor tiny = floats({4}, {1.f, 1.f, 1.f, 1e-6f});
  const Status crop = run_status("Resize", 18, {&row, &roi, &tiny}, 1,
                                 A().s("mode", "linear")
                                     .s("coordinate_transformation_mode", "tf_crop_and_resize")
                                     .i("antialias", 1));
  EXPECT_EQ(crop.code(), StatusCode::kUnsupported) << crop.message();
  EXPECT_NE(crop.message().find("antialias"), std::string::npos) << crop.message();
}

}  // namespace
}  // namespace sod2::rt::linalg_test
