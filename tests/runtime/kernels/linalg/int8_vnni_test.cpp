// int8_vnni.h's GEMM against a plain loop: every shape's edges (rows not a multiple of the 8-row
// blocks, K not a multiple of 4, positions not a multiple of 16, a row range starting mid-block),
// operands packed both ways, and sums that wrap modulo 2^32.
#include "runtime/kernels/linalg/int8_vnni.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sod2::rt::quant {
namespace {

std::vector<int32_t> reference(const std::vector<int8_t>& w, const std::vector<uint8_t>& x,
                               int64_t m, int64_t k, int64_t n, int32_t zero) {
  std::vector<int32_t> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint32_t s = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        s += static_cast<uint32_t>(int32_t{w[static_cast<size_t>(i * k + kk)]} *
                                   (int32_t{x[static_cast<size_t>(kk * n + j)]} - zero));
      c[static_cast<size_t>(i * n + j)] = static_cast<int32_t>(s);
    }
  return c;
}

// An m x k times k x n product whose rows [m0, m1) are computed.
struct Case {
  int64_t m, k, n, m0, m1;
  std::string label() const {
    return "m " + std::to_string(m) + " k " + std::to_string(k) + " n " + std::to_string(n) +
           " rows [" + std::to_string(m0) + ", " + std::to_string(m1) + ")";
  }
};

// Random int8 weights W [m, k] and uint8 activations X [k, n] for the case.
void random_operands(const Case& cs, std::mt19937& gen, std::vector<int8_t>* w,
                     std::vector<uint8_t>* x) {
  std::uniform_int_distribution<int> byte(0, 255);
  w->resize(static_cast<size_t>(cs.m * cs.k));
  x->resize(static_cast<size_t>(cs.k * cs.n));
  for (auto& v : *w) v = static_cast<int8_t>(byte(gen) - 128);
  for (auto& v : *x) v = static_cast<uint8_t>(byte(gen));
}

TEST(VnniGemm, MatchesAPlainLoopOnEveryEdge) {
  if (!vnni_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI: the path is not used here";
  std::mt19937 gen(5);
  // Runs of 7 positions (a 7-wide map's rows) and of up to 57 (a 56-wide map's rows: 64 at a
  // time, then 16); 200 columns: 64 at a time from rows.
  const Case cases[] = {{8, 4, 16, 0, 8},      {1, 1, 1, 0, 1},       {13, 27, 45, 0, 13},
                        {24, 576, 100, 5, 19}, {64, 147, 33, 40, 64}, {9, 3, 70, 8, 9},
                        {16, 12, 200, 0, 16}};
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.label());
    std::vector<int8_t> w;
    std::vector<uint8_t> x;
    random_operands(cs, gen, &w, &x);
    const int32_t zero = 117;
    const auto want = reference(w, x, cs.m, cs.k, cs.n, zero);
    VnniWeights packed_w;
    vnni_pack_weights(w.data(), cs.m, cs.k, cs.k, &packed_w);
    // Packed from rows, and from runs (one run per 7 positions: rows of an output).
    std::vector<uint8_t> from_rows(static_cast<size_t>(vnni_packed_bytes(cs.k, cs.n)) + 128);
    vnni_pack_activations(x.data(), cs.n, cs.k, cs.n, from_rows.data());
    std::vector<uint8_t> padded_x(x.size() + 32);  // the slack vnni_pack_runs reads
    std::copy(x.begin(), x.end(), padded_x.begin());
    std::vector<const uint8_t*> bases;
    for (int64_t r = 0; r < cs.k; ++r) bases.push_back(padded_x.data() + r * cs.n);
    std::vector<uint8_t> from_runs(from_rows.size()), from_long_runs(from_rows.size());
    for (int64_t run_length : {7, 57}) {
      std::vector<VnniRun> runs;
      for (int64_t t = 0; t < cs.n; t += run_length)
        runs.push_back({t, t, std::min<int64_t>(run_length, cs.n - t)});
      vnni_pack_runs(bases.data(), cs.k, runs.data(), static_cast<int64_t>(runs.size()), cs.n,
                     (run_length == 7 ? from_runs : from_long_runs).data());
    }
    for (const auto* packed : {&from_rows, &from_runs, &from_long_runs}) {
      std::vector<int32_t> c(static_cast<size_t>((cs.m1 - cs.m0) * cs.n), -1);
      vnni_gemm(packed_w, cs.m0, cs.m1, packed->data(), cs.n, zero, c.data(), cs.n);
      for (int64_t i = cs.m0; i < cs.m1; ++i)
        for (int64_t j = 0; j < cs.n; ++j)
          ASSERT_EQ(c[static_cast<size_t>((i - cs.m0) * cs.n + j)],
                    want[static_cast<size_t>(i * cs.n + j)])
              << "row " << i << " column " << j;
    }
  }
}

// The GEMM with the output channels in vector lanes writes the bytes (or floats) the
// position-lane GEMM writes: channel counts not a multiple of 16, row ranges starting mid-block,
// 1 to 6 positions left over after tiles of 6, a requantization and a float epilogue.
TEST(VnniGemm, ChannelsInLanesStoreTheSameValues) {
  if (!vnni_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI: the path is not used here";
  std::mt19937 gen(9);
  const Case cases[] = {{64, 1152, 49, 0, 64},
                        {80, 1030, 13, 40, 80},
                        {200, 36, 1, 3, 197},
                        {16, 4, 7, 0, 16},
                        {96, 300, 98, 17, 96}};
  for (const Case& cs : cases) {
    for (bool float_out : {false, true}) {
      SCOPED_TRACE(cs.label() + (float_out ? ", float epilogue" : ""));
      std::vector<int8_t> w;
      std::vector<uint8_t> x;
      random_operands(cs, gen, &w, &x);
      VnniWeights packed_w;
      vnni_pack_weights(w.data(), cs.m, cs.k, cs.k, &packed_w);
      vnni_pack_lanes(&packed_w);
      std::vector<uint8_t> packed(static_cast<size_t>(vnni_packed_bytes(cs.k, cs.n)) + 128);
      vnni_pack_activations(x.data(), cs.n, cs.k, cs.n, packed.data());
      std::vector<int32_t> bias(static_cast<size_t>(cs.m));
      std::vector<float> mult(static_cast<size_t>(cs.m)), scale(static_cast<size_t>(cs.m));
      for (int64_t i = 0; i < cs.m; ++i) {
        bias[static_cast<size_t>(i)] = static_cast<int32_t>(i * 37 % 2001) - 1000;
        mult[static_cast<size_t>(i)] = 0.0003f * static_cast<float>(1 + i % 5);
        scale[static_cast<size_t>(i)] = 0.0001f * static_cast<float>(1 + i % 3);
      }
      VnniRequant q;
      q.e.bias = bias.data();
      q.e.mult = mult.data();
      q.e.zp = 120;
      if (float_out) {
        q.e.float_epilogue = true;
        q.e.out_type = DType::kFloat;
        q.e.scale = scale.data();
        q.e.activation = Activation::kHardSwish;
        q.e.clip_lo = -std::numeric_limits<float>::infinity();
        q.e.clip_hi = std::numeric_limits<float>::infinity();
      }
      q.ldo = cs.n;
      const size_t bytes = static_cast<size_t>((cs.m1 - cs.m0) * cs.n) * (float_out ? 4 : 1);
      std::vector<uint8_t> want(bytes, 0xAB), got(bytes, 0xCD);
      q.out = want.data();
      vnni_gemm_requant(packed_w, cs.m0, cs.m1, packed.data(), cs.n, 117, q);
      q.out = got.data();
      std::vector<int32_t> stage(static_cast<size_t>(vnni_lanes_stage_ints(cs.m0, cs.m1, cs.n)));
      vnni_gemm_lanes_requant(packed_w, cs.m0, cs.m1, packed.data(), cs.n, 117, q, stage.data());
      for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], want[i]) << "byte " << i;
    }
  }
}

// Sums past int32's range wrap as ONNX's int32 arithmetic does (a crafted K can get there).
TEST(VnniGemm, SumsWrapModulo2To32) {
  if (!vnni_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI: the path is not used here";
  const int64_t m = 1, k = 140000, n = 16;
  std::vector<int8_t> w(static_cast<size_t>(k), -128);
  std::vector<uint8_t> x(static_cast<size_t>(k * n), 255);
  const auto want = reference(w, x, m, k, n, 0);
  VnniWeights packed_w;
  vnni_pack_weights(w.data(), m, k, k, &packed_w);
  std::vector<uint8_t> packed(static_cast<size_t>(vnni_packed_bytes(k, n)));
  vnni_pack_activations(x.data(), n, k, n, packed.data());
  std::vector<int32_t> c(static_cast<size_t>(n));
  vnni_gemm(packed_w, 0, m, packed.data(), n, 0, c.data(), n);
  EXPECT_EQ(c, want);
  // -128 * 255 * 140000 = -4,569,600,000, wrapped once: not saturated at INT32_MIN.
  EXPECT_EQ(c[0], static_cast<int32_t>(-4569600000LL + (1LL << 32)));
}

}  // namespace
}  // namespace sod2::rt::quant
