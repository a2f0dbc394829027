// RNN against a naive double reference, and layout 1 (batch first) of RNN, GRU and LSTM against
// their layout-0 runs on transposed tensors.
#include <cmath>
#include <utility>

#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

// H_t = tanh(X_t W^T + H_{t-1} R^T + Wb + Rb) per direction; Y [seq, dirs, batch, hidden].
std::vector<double> ref_rnn(const HostTensor& x, const HostTensor& w, const HostTensor& r,
                            const HostTensor* b, const HostTensor* h0, int dirs,
                            const std::vector<int64_t>& lens, std::vector<double>* yh) {
  const int64_t S = x.shape()[0], B = x.shape()[1], I = x.shape()[2], H = r.shape()[2];
  std::vector<double> y(static_cast<size_t>(S * dirs * B * H), 0.0);
  yh->assign(static_cast<size_t>(dirs * B * H), 0.0);
  for (int d = 0; d < dirs; ++d) {
    for (int64_t bi = 0; bi < B; ++bi) {
      std::vector<double> h(static_cast<size_t>(H), 0.0);
      if (h0)
        for (int64_t j = 0; j < H; ++j) h[j] = h0->data<float>()[(d * B + bi) * H + j];
      const int64_t len = lens.empty() ? S : lens[static_cast<size_t>(bi)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = d == 1 ? len - 1 - step : step;
        std::vector<double> nh(static_cast<size_t>(H));
        for (int64_t j = 0; j < H; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < I; ++k)
            acc += static_cast<double>(x.data<float>()[(t * B + bi) * I + k]) *
                   w.data<float>()[(d * H + j) * I + k];
          for (int64_t k = 0; k < H; ++k)
            acc += h[static_cast<size_t>(k)] * r.data<float>()[(d * H + j) * H + k];
          if (b) acc += b->data<float>()[d * 2 * H + j] + b->data<float>()[d * 2 * H + H + j];
          nh[static_cast<size_t>(j)] = std::tanh(acc);
        }
        h = nh;
        for (int64_t j = 0; j < H; ++j)
          y[static_cast<size_t>(((t * dirs + d) * B + bi) * H + j)] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) (*yh)[static_cast<size_t>((d * B + bi) * H + j)] = h[j];
    }
  }
  return y;
}

TEST(Rnn, ForwardWithBiasAndInitialState) {
  const int64_t S = 4, B = 3, I = 5, H = 6;
  HostTensor x = rand_tensor({S, B, I}, 1);
  HostTensor w = rand_tensor({1, H, I}, 2, -0.5f, 0.5f);
  HostTensor r = rand_tensor({1, H, H}, 3, -0.5f, 0.5f);
  HostTensor b = rand_tensor({1, 2 * H}, 4);
  HostTensor h0 = rand_tensor({1, B, H}, 5);
  auto out = run_both("RNN", 14, {&x, &w, &r, &b, nullptr, &h0}, 2, A().i("hidden_size", H));
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> yh;
  const std::vector<double> y = ref_rnn(x, w, r, &b, &h0, 1, {}, &yh);
  expect_close(out[0], Shape{S, 1, B, H}, y);
  expect_close(out[1], Shape{1, B, H}, yh);
}

TEST(Rnn, BidirectionalWithSequenceLengths) {
  const int64_t S = 5, B = 3, I = 2, H = 4;
  HostTensor x = rand_tensor({S, B, I}, 7);
  HostTensor w = rand_tensor({2, H, I}, 8, -0.5f, 0.5f);
  HostTensor r = rand_tensor({2, H, H}, 9, -0.5f, 0.5f);
  HostTensor lens = testing::make_tensor<int32_t>(DType::kInt32, Shape{B}, {5, 2, 0});
  auto out = run_both("RNN", 7, {&x, &w, &r, nullptr, &lens}, 2,
                      A().i("hidden_size", H).s("direction", "bidirectional"));
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> yh;
  const std::vector<double> y = ref_rnn(x, w, r, nullptr, nullptr, 2, {5, 2, 0}, &yh);
  expect_close(out[0], Shape{S, 2, B, H}, y);
  expect_close(out[1], Shape{2, B, H}, yh);
}

TEST(Rnn, RejectsMismatchedWeights) {
  HostTensor x = rand_tensor({2, 1, 3}, 1);
  HostTensor w = rand_tensor({1, 4, 2}, 2);  // input size 2, X has 3
  HostTensor r = rand_tensor({1, 4, 4}, 3);
  Status st = run_status("RNN", 14, {&x, &w, &r}, 1, A().i("hidden_size", 4));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
  EXPECT_EQ(run_status("RNN", 14, {&x, &w, &r}, 1, A().i("hidden_size", 4).i("layout", 2)).code(),
            StatusCode::kInvalidArgument);
}

// dst[j, i, :] = src[i, j, :] for a float tensor [a, b, ...].
HostTensor swap01(const HostTensor& t) {
  const Shape& s = t.shape();
  Shape o = s;
  o[0] = s[1];
  o[1] = s[0];
  HostTensor r(DType::kFloat, o);
  const int64_t inner = s.numel() / (s[0] * s[1]);
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      for (int64_t k = 0; k < inner; ++k)
        r.data<float>()[(j * s[0] + i) * inner + k] = t.data<float>()[(i * s[1] + j) * inner + k];
  return r;
}

// Y [seq, dirs, batch, hidden] -> [batch, seq, dirs, hidden].
std::vector<double> y_batch_first(const HostTensor& y) {
  const Shape& s = y.shape();
  std::vector<double> out(static_cast<size_t>(s.numel()));
  for (int64_t t = 0; t < s[0]; ++t)
    for (int64_t d = 0; d < s[1]; ++d)
      for (int64_t b = 0; b < s[2]; ++b)
        for (int64_t h = 0; h < s[3]; ++h)
          out[static_cast<size_t>(((b * s[0] + t) * s[1] + d) * s[3] + h)] =
              y.data<float>()[((t * s[1] + d) * s[2] + b) * s[3] + h];
  return out;
}

void check_batch_first(const char* op, int gates, int states) {
  SCOPED_TRACE(op);
  const int64_t S = 3, B = 2, I = 4, H = 5;
  HostTensor x = rand_tensor({S, B, I}, 21);
  HostTensor w = rand_tensor({2, gates * H, I}, 22, -0.5f, 0.5f);
  HostTensor r = rand_tensor({2, gates * H, H}, 23, -0.5f, 0.5f);
  HostTensor b = rand_tensor({2, 2 * gates * H}, 24);
  HostTensor h0 = rand_tensor({2, B, H}, 25);
  HostTensor c0 = rand_tensor({2, B, H}, 26);
  HostTensor lens = testing::make_tensor<int32_t>(DType::kInt32, Shape{B}, {3, 1});
  const size_t outs = static_cast<size_t>(1 + states);
  std::vector<const HostTensor*> in0 = {&x, &w, &r, &b, &lens, &h0};
  if (states == 2) in0.push_back(&c0);
  const Attrs a0 = A().i("hidden_size", H).s("direction", "bidirectional");
  auto ref = run_both(op, 14, in0, outs, a0);
  HostTensor xb = swap01(x), h0b = swap01(h0), c0b = swap01(c0);
  std::vector<const HostTensor*> in1 = {&xb, &w, &r, &b, &lens, &h0b};
  if (states == 2) in1.push_back(&c0b);
  auto got = run_both(op, 14, in1, outs,
                      A().i("hidden_size", H).s("direction", "bidirectional").i("layout", 1));
  ASSERT_EQ(ref.size(), outs);
  ASSERT_EQ(got.size(), outs);
  expect_close(got[0], Shape{B, S, 2, H}, y_batch_first(ref[0]), 1e-6);
  for (size_t i = 1; i < outs; ++i)
    expect_close(got[i], Shape{B, 2, H}, values(swap01(ref[i])), 1e-6);
}

TEST(RecurrentLayout, BatchFirstMatchesTransposedLayoutZero) {
  check_batch_first("RNN", 1, 1);
  check_batch_first("GRU", 3, 1);
  check_batch_first("LSTM", 4, 2);
}

// X may be empty (input size 0) with any sequence length and batch: the scratch for the
// projections and states, sized as seq*B*H + 2*B*H + H in int64, overflowed and h was filled far
// past it. Y [0, 1, B, H] is empty, so nothing else checked those sizes.
TEST(Rnn, HugeBatchOfAnEmptyInputIsRefused) {
  const int64_t H = 4;
  HostTensor x(DType::kFloat, Shape{0, (int64_t{1} << 60) + 1, 0});
  HostTensor w(DType::kFloat, Shape{1, H, 0});
  HostTensor r = rand_tensor({1, H, H}, 3);
  Status st = run_status("RNN", 14, {&x, &w, &r}, 1, A().i("hidden_size", H));
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.to_string();
}

// The same for GRU (3 gates) and LSTM (4): the scratch count overflowed and h was filled past it.
TEST(Rnn, GruAndLstmRefuseAHugeBatchOfAnEmptyInput) {
  const int64_t H = 4;
  HostTensor x(DType::kFloat, Shape{0, (int64_t{1} << 60) + 1, 0});
  for (auto [op, gates] : {std::pair<const char*, int64_t>{"GRU", 3}, {"LSTM", 4}}) {
    HostTensor w(DType::kFloat, Shape{1, gates * H, 0});
    HostTensor r = rand_tensor({1, gates * H, H}, 3);
    Status st = run_status(op, 14, {&x, &w, &r}, 1, A().i("hidden_size", H));
    EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << op << ": " << st.to_string();
  }
}

}  // namespace
}  // namespace sod2::rt::linalg_test
