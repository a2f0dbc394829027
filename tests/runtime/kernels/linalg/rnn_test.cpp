#include <cmath>

#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

double sig(double v) { return 1 / (1 + std::exp(-v)); }

struct RnnIn {
  int64_t seq, batch, input, hidden;
  int dirs;
  HostTensor x, w, r, b, h0, c0, p;
  std::vector<int32_t> lens;
};

RnnIn make_inputs(int64_t seq, int64_t batch, int64_t input, int64_t hidden, int dirs, int gates,
                  std::vector<int32_t> lens, uint32_t seed) {
  RnnIn in{seq,
           batch,
           input,
           hidden,
           dirs,
           rand_tensor({seq, batch, input}, seed),
           rand_tensor({dirs, gates * hidden, input}, seed + 1, -0.5f, 0.5f),
           rand_tensor({dirs, gates * hidden, hidden}, seed + 2, -0.5f, 0.5f),
           rand_tensor({dirs, 2 * gates * hidden}, seed + 3, -0.5f, 0.5f),
           rand_tensor({dirs, batch, hidden}, seed + 4),
           rand_tensor({dirs, batch, hidden}, seed + 5),
           rand_tensor({dirs, 3 * hidden}, seed + 6, -0.5f, 0.5f),
           std::move(lens)};
  return in;
}

// Y [seq, dirs, batch, hidden], then Y_h, Y_c.
struct RnnOut {
  std::vector<double> y, yh, yc;
};

RnnOut ref_lstm(const RnnIn& in, bool reverse_only, bool use_p) {
  const int64_t H = in.hidden, B = in.batch, I = in.input;
  RnnOut out;
  out.y.assign(static_cast<size_t>(in.seq * in.dirs * B * H), 0.0);
  out.yh.assign(static_cast<size_t>(in.dirs * B * H), 0.0);
  out.yc = out.yh;
  auto W = [&](int d, int64_t row, int64_t col) {
    return double(in.w.data<float>()[(d * 4 * H + row) * I + col]);
  };
  auto R = [&](int d, int64_t row, int64_t col) {
    return double(in.r.data<float>()[(d * 4 * H + row) * H + col]);
  };
  for (int d = 0; d < in.dirs; ++d) {
    const bool rev = reverse_only || d == 1;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H), c(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = in.h0.data<float>()[(d * B + b) * H + j];
        c[j] = in.c0.data<float>()[(d * B + b) * H + j];
      }
      const int64_t len = in.lens.empty() ? in.seq : in.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = rev ? len - 1 - s : s;
        std::vector<double> g(4 * H);
        for (int64_t row = 0; row < 4 * H; ++row) {
          double v =
              in.b.data<float>()[d * 8 * H + row] + in.b.data<float>()[d * 8 * H + 4 * H + row];
          for (int64_t q = 0; q < I; ++q)
            v += W(d, row, q) * in.x.data<float>()[(t * B + b) * I + q];
          for (int64_t q = 0; q < H; ++q) v += R(d, row, q) * h[q];
          g[row] = v;
        }
        const float* P = in.p.data<float>() + d * 3 * H;
        for (int64_t j = 0; j < H; ++j) {
          const double i = sig(g[j] + (use_p ? P[j] * c[j] : 0));
          const double f = sig(g[2 * H + j] + (use_p ? P[2 * H + j] * c[j] : 0));
          const double cc = std::tanh(g[3 * H + j]);
          c[j] = f * c[j] + i * cc;
          const double o = sig(g[H + j] + (use_p ? P[H + j] * c[j] : 0));
          h[j] = o * std::tanh(c[j]);
          out.y[static_cast<size_t>(((t * in.dirs + d) * B + b) * H + j)] = h[j];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        out.yh[static_cast<size_t>((d * B + b) * H + j)] = h[j];
        out.yc[static_cast<size_t>((d * B + b) * H + j)] = c[j];
      }
    }
  }
  return out;
}

RnnOut ref_gru(const RnnIn& in, bool lbr) {
  const int64_t H = in.hidden, B = in.batch, I = in.input;
  RnnOut out;
  out.y.assign(static_cast<size_t>(in.seq * in.dirs * B * H), 0.0);
  out.yh.assign(static_cast<size_t>(in.dirs * B * H), 0.0);
  for (int d = 0; d < in.dirs; ++d) {
    const float* Wd = in.w.data<float>() + d * 3 * H * I;
    const float* Rd = in.r.data<float>() + d * 3 * H * H;
    const float* Bd = in.b.data<float>() + d * 6 * H;
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H);
      for (int64_t j = 0; j < H; ++j) h[j] = in.h0.data<float>()[(d * B + b) * H + j];
      const int64_t len = in.lens.empty() ? in.seq : in.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = d == 1 ? len - 1 - s : s;
        const float* x = in.x.data<float>() + (t * B + b) * I;
        auto xw = [&](int64_t row) {
          double v = Bd[row];
          for (int64_t q = 0; q < I; ++q) v += Wd[row * I + q] * x[q];
          return v;
        };
        auto hr = [&](int64_t row, const std::vector<double>& hv) {
          double v = 0;
          for (int64_t q = 0; q < H; ++q) v += Rd[row * H + q] * hv[q];
          return v;
        };
        std::vector<double> z(H), r(H), rh(H), nh(H);
        for (int64_t j = 0; j < H; ++j) {
          z[j] = sig(xw(j) + hr(j, h) + Bd[3 * H + j]);
          r[j] = sig(xw(H + j) + hr(H + j, h) + Bd[4 * H + j]);
          rh[j] = r[j] * h[j];
        }
        for (int64_t j = 0; j < H; ++j) {
          const double hh =
              lbr ? std::tanh(xw(2 * H + j) + r[j] * (hr(2 * H + j, h) + Bd[5 * H + j]))
                  : std::tanh(xw(2 * H + j) + hr(2 * H + j, rh) + Bd[5 * H + j]);
          nh[j] = (1 - z[j]) * hh + z[j] * h[j];
          out.y[static_cast<size_t>(((t * in.dirs + d) * B + b) * H + j)] = nh[j];
        }
        h = nh;
      }
      for (int64_t j = 0; j < H; ++j) out.yh[static_cast<size_t>((d * B + b) * H + j)] = h[j];
    }
  }
  return out;
}

TEST(LSTM, BidirectionalWithLengthsAndPeepholes) {
  for (bool use_p : {false, true}) {
    SCOPED_TRACE(use_p ? "peepholes" : "no peepholes");
    RnnIn in = make_inputs(5, 3, 4, 6, 2, 4, {5, 2, 0}, 11);
    const HostTensor lens = testing::make_tensor<int32_t>(DType::kInt32, {3}, in.lens);
    const RnnOut want = ref_lstm(in, false, use_p);
    auto got = run_both(
        "LSTM", 14, {&in.x, &in.w, &in.r, &in.b, &lens, &in.h0, &in.c0, use_p ? &in.p : nullptr}, 3,
        A().s("direction", "bidirectional").i("hidden_size", 6));
    ASSERT_EQ(got.size(), 3u);
    // Entries with no steps keep their initial state.
    RnnOut w = want;
    for (int d = 0; d < 2; ++d)
      for (int64_t j = 0; j < 6; ++j) {
        w.yh[static_cast<size_t>((d * 3 + 2) * 6 + j)] = in.h0.data<float>()[(d * 3 + 2) * 6 + j];
        w.yc[static_cast<size_t>((d * 3 + 2) * 6 + j)] = in.c0.data<float>()[(d * 3 + 2) * 6 + j];
      }
    expect_close(got[0], Shape{5, 2, 3, 6}, w.y, 1e-5);
    expect_close(got[1], Shape{2, 3, 6}, w.yh, 1e-5);
    expect_close(got[2], Shape{2, 3, 6}, w.yc, 1e-5);
  }
}

TEST(LSTM, ReverseDefaultsAndErrors) {
  RnnIn in = make_inputs(4, 2, 3, 5, 1, 4, {}, 21);
  // No B, h0 or c0 given: zeros.
  std::fill(in.b.data<float>(), in.b.data<float>() + 40, 0.f);
  std::fill(in.h0.data<float>(), in.h0.data<float>() + 10, 0.f);
  std::fill(in.c0.data<float>(), in.c0.data<float>() + 10, 0.f);
  const RnnOut want = ref_lstm(in, true, false);
  auto got = run_both("LSTM", 7, {&in.x, &in.w, &in.r}, 2,
                      A().s("direction", "reverse").i("hidden_size", 5));
  ASSERT_EQ(got.size(), 2u);
  expect_close(got[0], Shape{4, 1, 2, 5}, want.y, 1e-5);
  expect_close(got[1], Shape{1, 2, 5}, want.yh, 1e-5);
  EXPECT_EQ(run_status("LSTM", 7, {&in.x, &in.w, &in.r}, 1, A().i("hidden_size", 4)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_status("LSTM", 14, {&in.x, &in.w, &in.r}, 1, A().i("hidden_size", 5).i("layout", 2))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(GRU, BidirectionalBothResetModes) {
  for (int lbr : {0, 1}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    RnnIn in = make_inputs(6, 3, 5, 4, 2, 3, {6, 3, 1}, 31);
    const HostTensor lens = testing::make_tensor<int32_t>(DType::kInt32, {3}, in.lens);
    const RnnOut want = ref_gru(in, lbr);
    auto got = run_both(
        "GRU", 14, {&in.x, &in.w, &in.r, &in.b, &lens, &in.h0}, 2,
        A().s("direction", "bidirectional").i("hidden_size", 4).i("linear_before_reset", lbr));
    ASSERT_EQ(got.size(), 2u);
    expect_close(got[0], Shape{6, 2, 3, 4}, want.y, 1e-5);
    expect_close(got[1], Shape{2, 3, 4}, want.yh, 1e-5);
  }
  RnnIn z = make_inputs(3, 0, 2, 4, 1, 3, {}, 41);
  auto got = run_both("GRU", 14, {&z.x, &z.w, &z.r}, 2, A().i("hidden_size", 4));
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].shape().to_string(), "[3,1,0,4]");
}

// The default cells (Sigmoid, Tanh, Tanh; no clip or peepholes) run vectorised, and a recurrent
// matrix of 256 KiB or more is split over the threads by rows: hidden sizes off the vector
// widths and large enough for the split, against the double-precision reference, at 1 and 2
// threads (run_both); a huge clip takes the scalar cell and must agree.
TEST(LSTM, TheDefaultCellAndTheSplitRecurrentGemmMatchTheReference) {
  RnnIn in = make_inputs(3, 2, 7, 130, 1, 4, {}, 51);
  const RnnOut want = ref_lstm(in, false, false);
  for (float clip : {0.f, 1e9f}) {
    SCOPED_TRACE(clip > 0 ? "scalar cell (clip)" : "default cell");
    A attrs;
    attrs.i("hidden_size", 130);
    if (clip > 0) attrs.f("clip", clip);
    auto got =
        run_both("LSTM", 14, {&in.x, &in.w, &in.r, &in.b, nullptr, &in.h0, &in.c0}, 3, attrs);
    ASSERT_EQ(got.size(), 3u);
    expect_close(got[0], Shape{3, 1, 2, 130}, want.y, 1e-5);
    expect_close(got[1], Shape{1, 2, 130}, want.yh, 1e-5);
    expect_close(got[2], Shape{1, 2, 130}, want.yc, 1e-5);
  }
}

TEST(GRU, TheDefaultCellAndTheSplitRecurrentGemmMatchTheReference) {
  for (int lbr : {0, 1}) {
    SCOPED_TRACE("linear_before_reset " + std::to_string(lbr));
    RnnIn in = make_inputs(3, 2, 7, 150, 1, 3, {}, 61);
    const RnnOut want = ref_gru(in, lbr);
    auto got = run_both("GRU", 14, {&in.x, &in.w, &in.r, &in.b, nullptr, &in.h0}, 2,
                        A().i("hidden_size", 150).i("linear_before_reset", lbr));
    ASSERT_EQ(got.size(), 2u);
    expect_close(got[0], Shape{3, 1, 2, 150}, want.y, 1e-5);
    expect_close(got[1], Shape{1, 2, 150}, want.yh, 1e-5);
  }
}

// R as a session constant (NodeInfo::input_constant): the kernel packs it at load
// (Kernel::prepare) when `prepare`, else on its first run, and reuses the packing on the second
// run, whose outputs are returned.
std::vector<HostTensor> run_twice_with_constant_r(const std::string& op,
                                                  const std::vector<const HostTensor*>& in,
                                                  size_t outs, const Attrs& attrs, int threads,
                                                  bool prepare) {
  NodeInfo info = testing::node_info(op, 14, in, outs, attrs);
  info.input_constant.assign(in.size(), false);
  info.input_constant[2] = true;
  auto kernel = registry().create(info);
  EXPECT_TRUE(kernel.ok()) << kernel.status().to_string();
  if (!kernel.ok()) return {};
  std::vector<Tensor> views;
  std::vector<const Tensor*> ptrs;
  views.reserve(in.size());
  for (const HostTensor* t : in) views.push_back(t ? t->view() : Tensor{});
  for (size_t i = 0; i < in.size(); ++i) ptrs.push_back(in[i] ? &views[i] : nullptr);
  if (prepare) {
    std::vector<const Tensor*> constants(ptrs.size(), nullptr);
    constants[2] = ptrs[2];
    const Status st = kernel.value()->prepare(constants);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  ThreadPool pool(threads);
  for (int run = 0; run < 2; ++run) {
    testing::HeapAllocator alloc(outs);
    KernelContext ctx(ptrs, &alloc, &pool);
    const Status st = kernel.value()->run(ctx);
    EXPECT_TRUE(st.ok()) << st.to_string();
    if (run == 1) return std::move(alloc.outputs);
  }
  return {};
}

// Bidirectional, with sequence lengths (one entry with none), batches that fill the product's
// row groups and leave tails, hidden sizes off the 16-unit blocks (130: large enough to split
// over 2 threads), against the double-precision reference.
TEST(LSTM, PackedConstantRecurrenceAcrossBatchesHiddenSizesAndThreads) {
  for (const int64_t hidden : {5, 130}) {
    for (const int64_t batch : {1, 4, 7, 13}) {
      SCOPED_TRACE("hidden " + std::to_string(hidden) + ", batch " + std::to_string(batch));
      std::vector<int32_t> lens(static_cast<size_t>(batch), 4);
      lens[0] = 3;
      if (batch > 1) lens[1] = 0;
      RnnIn in = make_inputs(4, batch, 6, hidden, 2, 4, lens, 71);
      const HostTensor lt = testing::make_tensor<int32_t>(DType::kInt32, {batch}, lens);
      RnnOut want = ref_lstm(in, false, false);
      if (batch > 1)  // the entry with no steps keeps its initial state
        for (int d = 0; d < 2; ++d)
          for (int64_t j = 0; j < hidden; ++j) {
            const size_t i = static_cast<size_t>((d * batch + 1) * hidden + j);
            want.yh[i] = in.h0.data<float>()[i];
            want.yc[i] = in.c0.data<float>()[i];
          }
      // Every instruction set's product (AVX-512: 16 units a vector; AVX2: 8; baseline: 4).
      for (int level : {0, 1, 2})
        for (int threads : {1, 2}) {
          SCOPED_TRACE("SIMD level " + std::to_string(level) + ", threads " +
                       std::to_string(threads));
          simd::force_simd_level(level);
          auto got = run_twice_with_constant_r(
              "LSTM", {&in.x, &in.w, &in.r, &in.b, &lt, &in.h0, &in.c0}, 3,
              A().s("direction", "bidirectional").i("hidden_size", hidden), threads, threads == 2);
          ASSERT_EQ(got.size(), 3u);
          expect_close(got[0], Shape{4, 2, batch, hidden}, want.y, 1e-5);
          expect_close(got[1], Shape{2, batch, hidden}, want.yh, 1e-5);
          expect_close(got[2], Shape{2, batch, hidden}, want.yc, 1e-5);
        }
      simd::force_simd_level(-1);
    }
  }
}

TEST(GRU, PackedConstantRecurrenceWithLinearBeforeReset) {
  for (const int64_t batch : {1, 9}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    RnnIn in = make_inputs(3, batch, 5, 150, 2, 3, {}, 81);
    const RnnOut want = ref_gru(in, true);
    for (int threads : {1, 2}) {
      auto got = run_twice_with_constant_r(
          "GRU", {&in.x, &in.w, &in.r, &in.b, nullptr, &in.h0}, 2,
          A().s("direction", "bidirectional").i("hidden_size", 150).i("linear_before_reset", 1),
          threads, threads == 2);
      ASSERT_EQ(got.size(), 2u);
      expect_close(got[0], Shape{3, 2, batch, 150}, want.y, 1e-5);
      expect_close(got[1], Shape{2, batch, 150}, want.yh, 1e-5);
    }
  }
}

}  // namespace
}  // namespace sod2::rt::linalg_test
