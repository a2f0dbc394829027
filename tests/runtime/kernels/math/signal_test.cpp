// The FFT, DFT, STFT, the windows and MelWeightMatrix against direct O(n^2) sums and the values
// of the ONNX spec; TfIdfVectorizer against the ONNX examples.
#include <chrono>
#include <complex>
#include <numbers>

#include "math_test_util.h"
#include "runtime/kernels/math/fft.h"

namespace sod2::rt::math_test {
namespace {

using C = std::complex<double>;
using math::Cplx;
using math::Fft;

// The definition, in long double.
std::vector<C> naive_dft(const std::vector<C>& x, int64_t n, bool inverse) {
  std::vector<C> y(static_cast<size_t>(n));
  const long double sign = inverse ? 1 : -1;
  for (int64_t k = 0; k < n; ++k) {
    long double re = 0, im = 0;
    for (int64_t j = 0; j < n && j < static_cast<int64_t>(x.size()); ++j) {
      const long double a =
          sign * 2 * std::numbers::pi_v<long double> * static_cast<long double>((j * k) % n) / n;
      const C v = x[static_cast<size_t>(j)];
      re += v.real() * std::cos(a) - v.imag() * std::sin(a);
      im += v.real() * std::sin(a) + v.imag() * std::cos(a);
    }
    y[static_cast<size_t>(k)] = C(static_cast<double>(re), static_cast<double>(im));
  }
  return y;
}

std::vector<C> random_complex(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<C> v(static_cast<size_t>(n));
  for (C& c : v) c = C(d(gen), d(gen));
  return v;
}

// Runs math::Fft on x.
std::vector<C> run_fft(const std::vector<C>& x, bool inverse) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<Cplx> plan(static_cast<size_t>(Fft::plan_count(n)));
  std::vector<Cplx> work(static_cast<size_t>(std::max<int64_t>(1, Fft::work_count(n))));
  Fft fft;
  fft.init(n, inverse, plan.data(), work.data());
  std::vector<Cplx> in(x.size()), out(x.size());
  for (size_t i = 0; i < x.size(); ++i) in[i] = {x[i].real(), x[i].imag()};
  fft.run(in.data(), out.data(), work.data());
  std::vector<C> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = C(out[i].re, out[i].im);
  return y;
}

double max_err(const std::vector<C>& a, const std::vector<C>& b) {
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

TEST(MathFft, MatchesTheDefinitionForEveryKindOfLength) {
  // Powers of two (radix 4 and 2), mixed radices, primes up to the radix limit (generic
  // butterflies) and above it (Bluestein), and products with a large prime.
  for (int64_t n : {1,  2,  3,  4,  5,  6,  7,   8,   9,   10,  12,  15,  16,  17,
                    30, 32, 61, 64, 67, 97, 100, 128, 130, 134, 210, 256, 331, 1000}) {
    const auto x = random_complex(n, static_cast<uint32_t>(n));
    for (bool inverse : {false, true}) {
      const double err = max_err(run_fft(x, inverse), naive_dft(x, n, inverse));
      EXPECT_LT(err, 1e-10 * std::sqrt(static_cast<double>(n)) + 1e-12)
          << "n = " << n << (inverse ? " inverse" : "");
    }
  }
}

TEST(MathFft, LongTransformsAreFastAndRoundTrip) {
  for (int64_t n : {4096, 4099, 65536}) {  // 4099 is prime: Bluestein
    const auto x = random_complex(n, 7);
    const auto t0 = std::chrono::steady_clock::now();
    auto y = run_fft(x, false);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(ms, 500.0) << "n = " << n;  // O(n log n): a few ms even unoptimised
    auto back = run_fft(y, true);
    for (C& v : back) v /= static_cast<double>(n);
    EXPECT_LT(max_err(back, x), 1e-9) << "n = " << n;
  }
}

// A [batch, n, 1|2] float tensor's lines as complex vectors.
std::vector<C> line(const std::vector<float>& v, int64_t start, int64_t n, int64_t stride,
                    bool complex_in) {
  std::vector<C> out;
  for (int64_t j = 0; j < n; ++j) {
    const float* p = v.data() + start + j * stride;
    out.emplace_back(p[0], complex_in ? p[1] : 0.0f);
  }
  return out;
}

TEST(MathDft, RealAndComplexOnesidedInverseAndLength) {
  const HostTensor x = random_f32({2, 10, 1}, -1, 1, 3);
  const auto xv = values<float>(x);
  // Plain: [2, 10, 2].
  const auto y = run_ok("DFT", 17, {&x});
  ASSERT_EQ(y[0].shape(), (Shape{2, 10, 2}));
  std::vector<double> want;
  for (int b = 0; b < 2; ++b)
    for (C v : naive_dft(line(xv, b * 10, 10, 1, false), 10, false)) {
      want.push_back(v.real());
      want.push_back(v.imag());
    }
  expect_near_all<float>(y[0], want, 1e-5, 1e-3);
  // Onesided: the first 10 / 2 + 1 bins.
  const auto half = run_ok("DFT", 17, {&x}, 1, attrs({{"onesided", attr_int(1)}}));
  ASSERT_EQ(half[0].shape(), (Shape{2, 6, 2}));
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k < 6; ++k)
      EXPECT_NEAR(half[0].data<float>()[(b * 6 + k) * 2], want[(b * 10 + k) * 2], 1e-4);
  // Inverse of the spectrum is the signal (scaled by 1/n).
  const auto back = run_ok("DFT", 17, {&y[0]}, 1, attrs({{"inverse", attr_int(1)}}));
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(back[0].data<float>()[2 * i], xv[i], 1e-5);
    EXPECT_NEAR(back[0].data<float>()[2 * i + 1], 0, 1e-5);
  }
  // dft_length pads (16) or truncates (4).
  for (int64_t len : {16, 4}) {
    const HostTensor l = i64({}, {len});
    const auto z = run_ok("DFT", 17, {&x, &l});
    ASSERT_EQ(z[0].shape(), (Shape{2, len, 2}));
    const auto ref = naive_dft(line(xv, 10, std::min<int64_t>(len, 10), 1, false), len, false);
    for (int64_t k = 0; k < len; ++k) {
      EXPECT_NEAR(z[0].data<float>()[(len + k) * 2], ref[k].real(), 1e-4);
      EXPECT_NEAR(z[0].data<float>()[(len + k) * 2 + 1], ref[k].imag(), 1e-4);
    }
  }
}

TEST(MathDft, InnerAxisOfComplexInputWithThreads) {
  // [2, 3, 7, 2] complex, transformed along axis 2 (length 7, generic radix) and axis -3.
  const HostTensor x = random_f32({2, 3, 7, 2}, -1, 1, 5);
  const auto xv = values<float>(x);
  const auto one = run_ok("DFT", 17, {&x}, 1, attrs({{"axis", attr_int(2)}}), 1);
  const auto two = run_ok("DFT", 17, {&x}, 1, attrs({{"axis", attr_int(2)}}), 2);
  EXPECT_EQ(one[0].bytes(), two[0].bytes());
  for (int64_t l = 0; l < 6; ++l) {
    const auto ref = naive_dft(line(xv, l * 14, 7, 2, true), 7, false);
    for (int k = 0; k < 7; ++k) {
      EXPECT_NEAR(one[0].data<float>()[l * 14 + k * 2], ref[k].real(), 1e-4);
      EXPECT_NEAR(one[0].data<float>()[l * 14 + k * 2 + 1], ref[k].imag(), 1e-4);
    }
  }
  // Axis 1 (length 3): line (b, j) starts at b * 42 + j * 2 with stride 14.
  const auto y1 = run_ok("DFT", 17, {&x}, 1, attrs({{"axis", attr_int(-3)}}));
  ASSERT_EQ(y1[0].shape(), (Shape{2, 3, 7, 2}));
  const auto ref = naive_dft(line(xv, 42 + 4 * 2, 3, 14, true), 3, false);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(y1[0].data<float>()[42 + k * 14 + 8], ref[k].real(), 1e-4);
}

TEST(MathDft, BadInputsAreErrors) {
  const HostTensor real = random_f32({1, 8, 1}, -1, 1, 1);
  const HostTensor cplx = random_f32({1, 8, 2}, -1, 1, 1);
  const HostTensor bad_last = random_f32({1, 8, 3}, -1, 1, 1);
  const HostTensor zero = i64({}, {0});
  EXPECT_EQ(run_status("DFT", 17, {&cplx}, 1, attrs({{"onesided", attr_int(1)}})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("DFT", 17, {&real}, 1, attrs({{"axis", attr_int(2)}})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("DFT", 17, {&real}, 1, attrs({{"axis", attr_int(5)}})).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("DFT", 17, {&bad_last}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("DFT", 17, {&real, &zero}).code(), StatusCode::kInvalidArgument);
  const HostTensor ints = i32({1, 4, 1}, {1, 2, 3, 4});
  EXPECT_EQ(run_status("DFT", 17, {&ints}).code(), StatusCode::kUnsupported);
}

TEST(MathStft, FramesWithAndWithoutWindow) {
  const HostTensor x = random_f32({2, 64, 1}, -1, 1, 9);
  const auto xv = values<float>(x);
  const HostTensor step = i64({}, {8}), length = i64({}, {16});
  // Rectangular window from frame_length; onesided by default: [2, 7, 9, 2].
  const auto y = run_ok("STFT", 17, {&x, &step, nullptr, &length}, 1, {}, 2);
  ASSERT_EQ(y[0].shape(), (Shape{2, 7, 9, 2}));
  for (int b = 0; b < 2; ++b)
    for (int f = 0; f < 7; ++f) {
      const auto ref = naive_dft(line(xv, b * 64 + f * 8, 16, 1, false), 16, false);
      for (int k = 0; k < 9; ++k) {
        const float* got = y[0].data<float>() + ((b * 7 + f) * 9 + k) * 2;
        EXPECT_NEAR(got[0], ref[k].real(), 1e-4);
        EXPECT_NEAR(got[1], ref[k].imag(), 1e-4);
      }
    }
  // A Hann window gives frame_length; two-sided.
  const HostTensor size = i64({}, {16});
  const auto w = run_ok("HannWindow", 17, {&size});
  const auto yw = run_ok("STFT", 17, {&x, &step, &w[0]}, 1, attrs({{"onesided", attr_int(0)}}));
  ASSERT_EQ(yw[0].shape(), (Shape{2, 7, 16, 2}));
  auto frame = line(xv, 64 + 3 * 8, 16, 1, false);
  for (int j = 0; j < 16; ++j) frame[j] *= w[0].data<float>()[j];
  const auto ref = naive_dft(frame, 16, false);
  for (int k = 0; k < 16; ++k)
    EXPECT_NEAR(yw[0].data<float>()[((7 + 3) * 16 + k) * 2 + 1], ref[k].imag(), 1e-4);
}

TEST(MathStft, BadInputsAreErrors) {
  const HostTensor x = random_f32({1, 16, 1}, -1, 1, 2);
  const HostTensor step = i64({}, {4}), zero = i64({}, {0}), long_frame = i64({}, {32}),
                   len8 = i64({}, {8});
  const HostTensor w4 = f32({4}, {1, 1, 1, 1});
  EXPECT_EQ(run_status("STFT", 17, {&x, &zero, nullptr, &len8}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("STFT", 17, {&x, &step, nullptr, &long_frame}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("STFT", 17, {&x, &step, &w4, &len8}).code(), StatusCode::kInvalidArgument);
  const HostTensor flat = random_f32({16}, -1, 1, 2);
  EXPECT_EQ(run_status("STFT", 17, {&flat, &step, nullptr, &len8}).code(),
            StatusCode::kInvalidArgument);
}

TEST(MathWindows, PeriodicSymmetricAndTypes) {
  const HostTensor ten = i32({}, {10});
  const double pi = std::numbers::pi;
  for (int periodic : {1, 0}) {
    const double n = periodic ? 10 : 9;
    std::vector<double> hann, hamming, blackman;
    for (int i = 0; i < 10; ++i) {
      hann.push_back(std::pow(std::sin(pi * i / n), 2));
      hamming.push_back(25.0 / 46 - 21.0 / 46 * std::cos(2 * pi * i / n));
      blackman.push_back(0.42 - 0.5 * std::cos(2 * pi * i / n) + 0.08 * std::cos(4 * pi * i / n));
    }
    const Attrs a = attrs({{"periodic", attr_int(periodic)}});
    expect_near_all<float>(run_ok("HannWindow", 17, {&ten}, 1, a)[0], hann, 1e-6, 1e-6);
    expect_near_all<float>(run_ok("HammingWindow", 17, {&ten}, 1, a)[0], hamming, 1e-6, 1e-6);
    expect_near_all<float>(run_ok("BlackmanWindow", 17, {&ten}, 1, a)[0], blackman, 1e-6, 1e-6);
  }
  const auto d = run_ok("HannWindow", 17, {&ten}, 1, attrs({{"output_datatype", attr_int(11)}}));
  EXPECT_EQ(d[0].dtype(), DType::kDouble);
  EXPECT_NEAR(d[0].data<double>()[5], 1.0, 1e-15);
  const HostTensor one = i64({}, {1}), zero = i64({}, {0}), neg = i64({}, {-3});
  EXPECT_EQ(
      values<float>(run_ok("HannWindow", 17, {&one}, 1, attrs({{"periodic", attr_int(0)}}))[0]),
      (std::vector<float>{1}));
  EXPECT_EQ(run_ok("HammingWindow", 17, {&zero})[0].shape(), (Shape{0}));
  EXPECT_EQ(run_status("BlackmanWindow", 17, {&neg}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      run_status("HannWindow", 17, {&ten}, 1, attrs({{"output_datatype", attr_int(8)}})).code(),
      StatusCode::kUnsupported);
}

TEST(MathMelWeightMatrix, OnnxExampleAndRangeErrors) {
  const HostTensor bins = i32({}, {8}), dft = i32({}, {16}), rate = i32({}, {8192});
  const HostTensor lo = f32({}, {0}), hi = f32({}, {4096});
  const auto y = run_ok("MelWeightMatrix", 17, {&bins, &dft, &rate, &lo, &hi});
  ASSERT_EQ(y[0].shape(), (Shape{9, 8}));
  std::vector<float> want(72, 0);
  for (auto [r, c] : {std::pair{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}})
    want[r * 8 + c] = 1;
  EXPECT_EQ(values<float>(y[0]), want);
  const HostTensor too_high = f32({}, {6000});
  EXPECT_EQ(run_status("MelWeightMatrix", 17, {&bins, &dft, &rate, &lo, &too_high}).code(),
            StatusCode::kInvalidArgument);
  const HostTensor no_bins = i32({}, {0});
  EXPECT_EQ(run_status("MelWeightMatrix", 17, {&no_bins, &dft, &rate, &lo, &hi}).code(),
            StatusCode::kInvalidArgument);
}

// ---- TfIdfVectorizer (the ONNX examples) ----

Attrs tfidf_attrs(int64_t min_n, int64_t max_n, int64_t skip, const char* mode,
                  std::vector<float> weights = {}) {
  Attrs a = attrs({{"min_gram_length", attr_int(min_n)},
                   {"max_gram_length", attr_int(max_n)},
                   {"max_skip_count", attr_int(skip)},
                   {"mode", attr_string(mode)},
                   {"ngram_counts", attr_ints({0, 4})},
                   {"ngram_indexes", attr_ints({0, 1, 2, 3, 4, 5, 6})},
                   {"pool_int64s", attr_ints({2, 3, 5, 4, 5, 6, 7, 8, 6, 7})}});
  if (!weights.empty()) a.set("weights", testing::attr_floats(std::move(weights)));
  return a;
}

TEST(MathTfIdf, OnnxExamples) {
  const HostTensor x = i32({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  EXPECT_EQ(values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(2, 2, 0, "TF"))[0]),
            (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}));
  EXPECT_EQ(values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(2, 2, 5, "TF"))[0]),
            (std::vector<float>{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(1, 2, 5, "TF"))[0]),
            (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
  const HostTensor flat = i64({12}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  const auto one = run_ok("TfIdfVectorizer", 9, {&flat}, 1, tfidf_attrs(2, 2, 0, "TF"));
  EXPECT_EQ(one[0].shape(), (Shape{7}));
  EXPECT_EQ(values<float>(one[0]), (std::vector<float>{0, 0, 0, 0, 1, 1, 1}));
  // IDF: the weight where counted; TFIDF: count * weight.
  const std::vector<float> w{1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(1, 2, 5, "IDF", w))[0]),
            (std::vector<float>{0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 5, 6, 7}));
  EXPECT_EQ(
      values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(1, 2, 5, "TFIDF", w))[0]),
      (std::vector<float>{0, 6, 0, 0, 0, 0, 0, 0, 0, 3, 0, 5, 6, 7}));
}

TEST(MathTfIdf, BadAttributesAndInputsAreErrors) {
  const HostTensor x = i32({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  Attrs odd = tfidf_attrs(2, 2, 0, "TF");
  odd.set("ngram_counts", attr_ints({0, 5}));  // 5 bigram items
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&x}, 1, odd).code(), StatusCode::kInvalidModel);
  Attrs outside = tfidf_attrs(2, 2, 0, "TF");
  outside.set("ngram_counts", attr_ints({0, 40}));
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&x}, 1, outside).code(), StatusCode::kInvalidModel);
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(2, 2, 0, "BM25")).code(),
            StatusCode::kInvalidModel);
  const HostTensor fx = f32({2}, {1, 2});
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&fx}, 1, tfidf_attrs(2, 2, 0, "TF")).code(),
            StatusCode::kUnsupported);
  const HostTensor cube = i32({1, 1, 2}, {1, 2});
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&cube}, 1, tfidf_attrs(2, 2, 0, "TF")).code(),
            StatusCode::kInvalidArgument);
}

// Gram lengths far beyond the pool's longest n-gram count nothing, and the kernel's
// skip * (n - 1) no longer overflows on them (undefined behaviour, seen by the sanitizer build).
TEST(MathTfIdf, HugeGramLengthsCountLikeThePoolsLongest) {
  const HostTensor x = i32({2, 6}, {1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8});
  const int64_t huge = INT64_MAX;
  EXPECT_EQ(
      values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(huge, huge, 5, "TF"))[0]),
      std::vector<float>(14, 0.0f));
  EXPECT_EQ(values<float>(run_ok("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(1, huge, 5, "TF"))[0]),
            (std::vector<float>{0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1}));
}

// A long row with a huge max_skip_count tries every start at every distance: 2^20 tokens x 2^20
// distances ran for hours; it is refused. Unigrams alone do not depend on the distance.
TEST(MathTfIdf, QuadraticWorkIsBounded) {
  HostTensor x(DType::kInt32, Shape{1, int64_t{1} << 20});  // zeros
  const int64_t skip = int64_t{1} << 20;
  EXPECT_EQ(run_status("TfIdfVectorizer", 9, {&x}, 1, tfidf_attrs(2, 2, skip, "TF")).code(),
            StatusCode::kResourceExhausted);
  Attrs unigrams = tfidf_attrs(1, 1, skip, "TF");
  EXPECT_TRUE(run_status("TfIdfVectorizer", 9, {&x}, 1, unigrams).ok());
}

}  // namespace
}  // namespace sod2::rt::math_test
