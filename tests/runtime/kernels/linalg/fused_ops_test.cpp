// The fused ops (fused_ops.h) against the same chain run as separate ONNX ops: Conv / MatMul /
// Gemm from the linalg family, Add and the activations from the math family.
#include <cfloat>
#include <cmath>
#include <functional>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/fused_ops.h"
#include "runtime/kernels/linalg/simd.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

const KernelRegistry& full_registry() {
  static const KernelRegistry r = [] {
    KernelRegistry k;
    register_linalg_kernels(k);
    register_math_kernels(k);
    return k;
  }();
  return r;
}

HostTensor run1(const std::string& op, int opset, const std::vector<const HostTensor*>& in,
                const Attrs& attrs, int threads) {
  auto r = testing::run_kernel(full_registry(), op, opset, in, 1, attrs, threads);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  if (!r.ok()) return HostTensor();
  return std::move(r.value()[0]);
}

struct Act {
  std::string name;  // "" for none
  float alpha = 0.f, beta = 0.f;
  bool set_params = true;  // false: leave alpha/beta off the fused node (ONNX defaults)
};

// The chain op -> [Add bias] -> [Add residual] -> act -> [Add residual], op by op.
HostTensor run_separately(const std::string& op, const std::vector<const HostTensor*>& op_in,
                          const Attrs& op_attrs, const HostTensor* bias, const HostTensor* res,
                          bool res_first, const Act& act, int threads) {
  HostTensor y = run1(op, 17, op_in, op_attrs, threads);
  if (bias) y = run1("Add", 14, {&y, bias}, {}, threads);
  if (res && res_first) y = run1("Add", 14, {&y, res}, {}, threads);
  if (!act.name.empty()) {
    A a;
    std::vector<const HostTensor*> in = {&y};
    HostTensor lo = floats({}, {act.alpha}), hi = floats({}, {act.beta});
    if (act.name == "LeakyRelu" && act.set_params) a.f("alpha", act.alpha);
    if (act.name == "HardSigmoid" && act.set_params) a.f("alpha", act.alpha).f("beta", act.beta);
    if (act.name == "Clip" && act.set_params) in = {&y, &lo, &hi};
    if (act.name == "Silu") {
      // torch's export of SiLU: Sigmoid, then Mul by the Sigmoid's own input.
      const HostTensor sig = run1("Sigmoid", 17, {&y}, {}, threads);
      y = run1("Mul", 14, {&y, &sig}, {}, threads);
    } else if (act.name == "GeluErf") {
      // torch's export of GELU: Div(y, sqrt 2) (beta 1) or Mul(y, 1 / sqrt 2), Erf, Add 1,
      // Mul y, Mul 0.5.
      const HostTensor k = floats({}, {act.alpha}), one = floats({}, {1.f}),
                       half = floats({}, {0.5f});
      const HostTensor t = run1(act.beta != 0.f ? "Div" : "Mul", 14, {&y, &k}, {}, threads);
      const HostTensor e = run1("Erf", 13, {&t}, {}, threads);
      const HostTensor p = run1("Add", 14, {&e, &one}, {}, threads);
      const HostTensor q = run1("Mul", 14, {&p, &y}, {}, threads);
      y = run1("Mul", 14, {&q, &half}, {}, threads);
    } else {
      y = run1(act.name, 17, in, a, threads);
    }
  }
  if (res && !res_first) y = run1("Add", 14, {&y, res}, {}, threads);
  return y;
}

HostTensor run_fused(const std::string& op, std::vector<const HostTensor*> in, Attrs attrs,
                     int bias_slot, int res_slot, bool res_first, const Act& act, int threads) {
  A a;
  for (const auto& [name, v] : attrs.all()) {
    // Gemm's own alpha / beta travel as gemm_alpha / gemm_beta.
    const bool renamed = op == "Gemm" && (name == "alpha" || name == "beta");
    a.a.set(renamed ? "gemm_" + name : name, v);
  }
  a.s("activation", act.name).i("bias_input", bias_slot).i("residual_input", res_slot);
  a.i("residual_before_activation", res_first);
  if (act.set_params) a.f("alpha", act.alpha).f("beta", act.beta);
  NodeInfo node = testing::node_info("Fused" + op, 17, in, 1, a);
  node.domain = "sod2";
  auto made = full_registry().create(node);
  EXPECT_TRUE(made.ok()) << made.status().to_string();
  auto got = run_made(std::move(made), in, 1, threads);
  EXPECT_TRUE(got.ok()) << got.status().to_string();
  if (!got.ok()) return HostTensor();
  return std::move(got.value()[0]);
}

const std::vector<Act>& activations() {
  static const std::vector<Act> acts = {{""},
                                        {"Relu"},
                                        {"LeakyRelu", 0.2f},
                                        {"LeakyRelu", 0.01f, 0.f, false},  // ONNX default slope
                                        {"Clip", -0.5f, 0.75f},
                                        {"Clip", -FLT_MAX, FLT_MAX, false},
                                        {"Sigmoid"},
                                        {"HardSigmoid", 0.3f, 0.4f},
                                        {"HardSigmoid", 0.2f, 0.5f, false},
                                        {"HardSwish"},
                                        {"Tanh"},
                                        {"Silu"},
                                        {"GeluErf", 1.41421354f, 1.f},
                                        {"GeluErf", 0.707106769f, 0.f},
                                        {"GeluErf", 1.41421354f, 1.f, false}};
  return acts;
}

// Every activation x {no bias, bias} x {no residual, residual before, residual after}.
void check_all(const std::string& op, const std::vector<const HostTensor*>& op_in,
               const Attrs& op_attrs, const HostTensor& bias, const HostTensor& res) {
  for (const Act& act : activations())
    for (int with_bias : {0, 1})
      for (int res_mode : {0, 1, 2}) {
        SCOPED_TRACE(op + " act '" + act.name + "' bias " + std::to_string(with_bias) +
                     " residual mode " + std::to_string(res_mode));
        std::vector<const HostTensor*> in = op_in;
        int bias_slot = -1, res_slot = -1;
        // Residual first when both are present, to check slots are free to order.
        if (res_mode) {
          res_slot = static_cast<int>(in.size());
          in.push_back(&res);
        }
        if (with_bias) {
          bias_slot = static_cast<int>(in.size());
          in.push_back(&bias);
        }
        for (int threads : {1, 2}) {
          const HostTensor want =
              run_separately(op, op_in, op_attrs, with_bias ? &bias : nullptr,
                             res_mode ? &res : nullptr, res_mode == 1, act, threads);
          const HostTensor got =
              run_fused(op, in, op_attrs, bias_slot, res_slot, res_mode != 2, act, threads);
          expect_close(got, want.shape(), values(want), 1e-5);
        }
      }
}

void conv_cases() {
  const HostTensor x = rand_tensor({2, 6, 9, 11}, 1), w = rand_tensor({8, 6, 3, 3}, 2),
                   b = rand_tensor({8}, 3);
  const HostTensor bias = rand_tensor({1, 8, 1, 1}, 4), res = rand_tensor({2, 8, 5, 6}, 5);
  const Attrs a = A().is("pads", {1, 1, 1, 1}).is("strides", {2, 2});
  check_all("Conv", {&x, &w, &b}, a, bias, res);
  // Narrow rows with 16 output channels (the direct path vectorised over channels).
  const HostTensor w16 = rand_tensor({16, 6, 3, 3}, 17), b16 = rand_tensor({16}, 18);
  const HostTensor bias16 = rand_tensor({1, 16, 1, 1}, 19), r16 = rand_tensor({2, 16, 5, 6}, 20);
  check_all("Conv", {&x, &w16, &b16}, a, bias16, r16);
  // The direct path (rows wide enough for it), with B.
  const HostTensor xw = rand_tensor({2, 6, 7, 29}, 15), rw = rand_tensor({2, 8, 7, 29}, 16);
  check_all("Conv", {&xw, &w, &b}, A().is("pads", {1, 1, 1, 1}), bias, rw);
  // Depthwise and pointwise paths, and a Conv without B (the fused bias lands in slot 2).
  const HostTensor wd = rand_tensor({6, 1, 5, 5}, 6), resd = rand_tensor({2, 6, 9, 11}, 7),
                   biasd = rand_tensor({6, 1, 1}, 8);
  check_all("Conv", {&x, &wd}, A().i("group", 6).is("pads", {2, 2, 2, 2}), biasd, resd);
  const HostTensor wp = rand_tensor({8, 6, 1, 1}, 9), resp = rand_tensor({2, 8, 9, 11}, 10);
  check_all("Conv", {&x, &wp}, {}, bias, resp);
  // 1-D depthwise with a channel multiplier.
  const HostTensor x1 = rand_tensor({2, 3, 40}, 11), w1 = rand_tensor({6, 1, 15}, 12),
                   r1 = rand_tensor({2, 6, 40}, 13), b1 = rand_tensor({6, 1}, 14);
  check_all("Conv", {&x1, &w1}, A().i("group", 3).is("pads", {7, 7}), b1, r1);
}

// At each SIMD level: the direct loops apply bias and plain activations to their vectors.
TEST(FusedOps, ConvMatchesSeparateOps) {
  for (int level : {2, 1, 0}) {
    SCOPED_TRACE("simd level " + std::to_string(level));
    simd::force_simd_level(level);
    conv_cases();
  }
  simd::force_simd_level(-1);
}

TEST(FusedOps, MatMulMatchesSeparateOps) {
  const HostTensor a = rand_tensor({2, 5, 7, 16}, 1), b = rand_tensor({16, 24}, 2);
  const HostTensor bias = rand_tensor({24}, 3), res = rand_tensor({2, 5, 7, 24}, 4);
  check_all("MatMul", {&a, &b}, {}, bias, res);
  // Batched B (attention-like) and a large single GEMM (tiled epilogue).
  const HostTensor c = rand_tensor({3, 4, 20, 8}, 5), d = rand_tensor({3, 4, 8, 20}, 6);
  const HostTensor bias2 = rand_tensor({1, 20}, 7), res2 = rand_tensor({3, 4, 20, 20}, 8);
  check_all("MatMul", {&c, &d}, {}, bias2, res2);
  const HostTensor e = rand_tensor({300, 96}, 9), f = rand_tensor({96, 260}, 10);
  const HostTensor bias3 = rand_tensor({260}, 11), res3 = rand_tensor({300, 260}, 12);
  check_all("MatMul", {&e, &f}, {}, bias3, res3);
}

// x transposed by perm, from the definition (the data kernels are not in this registry).
HostTensor permuted(const HostTensor& x, const std::vector<int64_t>& perm) {
  const Shape& in = x.shape();
  const int r = in.rank();
  Shape out;
  for (int i = 0; i < r; ++i) out.push_back(in[perm[static_cast<size_t>(i)]]);
  std::vector<int64_t> stride(static_cast<size_t>(r), 1);
  for (int i = r - 2; i >= 0; --i)
    stride[static_cast<size_t>(i)] = stride[static_cast<size_t>(i + 1)] * in[i + 1];
  HostTensor y(DType::kFloat, out);
  std::vector<int64_t> idx(static_cast<size_t>(r), 0);
  for (int64_t o = 0; o < y.shape().numel(); ++o) {
    int64_t rem = o, src = 0;
    for (int i = r - 1; i >= 0; --i) {
      const int64_t d = rem % out[i];
      rem /= out[i];
      src += d * stride[static_cast<size_t>(perm[static_cast<size_t>(i)])];
    }
    y.data<float>()[o] = x.data<float>()[src];
  }
  return y;
}

// a_perm / b_perm: the operand is the Transpose of its slot's tensor, read in place. Against
// Transpose then MatMul run separately: attention's K^T (the last two dims swapped: the GEMM
// reads B transposed) and head splits (batch dims from the middle: strided batches), A
// transposed, both operands at once, a broadcast batch, a 1-D other operand, a bias and a
// residual epilogue, at 1 and 2 threads (one GEMM per batch on all threads, or batches in
// parallel).
TEST(FusedOps, MatMulReadsPermutedOperandsInPlace) {
  struct Case {
    std::vector<int64_t> a_shape, a_perm, b_shape, b_perm;
  };
  const std::vector<Case> cases = {
      {{4, 7, 6}, {}, {4, 9, 6}, {0, 2, 1}},  // Q K^T
      {{7, 4, 6}, {1, 0, 2}, {4, 6, 9}, {}},  // heads split from [seq, heads, dim]
      {{6, 4, 7}, {1, 2, 0}, {6, 3}, {}},     // A transposed, batch from the middle
      {{2, 7, 3, 5}, {0, 2, 1, 3}, {2, 3, 9, 5}, {0, 1, 3, 2}},  // both, 4-D
      {{1, 5, 8}, {0, 2, 1}, {3, 5, 6}, {}},                     // A's batch broadcasts
      {{40, 3, 64}, {1, 0, 2}, {3, 64, 48}, {}},                 // big enough for a parallel GEMM
      {{6, 5}, {1, 0}, {6}, {}},                                 // a 1-D B
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("A " + dims_string(c.a_shape) + " perm " + dims_string(c.a_perm) + ", B " +
                 dims_string(c.b_shape) + " perm " + dims_string(c.b_perm));
    const HostTensor a = rand_tensor(Shape(std::span<const int64_t>(c.a_shape)), 1),
                     b = rand_tensor(Shape(std::span<const int64_t>(c.b_shape)), 2);
    for (int threads : {1, 2}) {
      const HostTensor at = c.a_perm.empty() ? a : permuted(a, c.a_perm);
      const HostTensor bt = c.b_perm.empty() ? b : permuted(b, c.b_perm);
      const HostTensor want = run1("MatMul", 13, {&at, &bt}, {}, threads);
      A attrs;
      if (!c.a_perm.empty()) attrs.is("a_perm", c.a_perm);
      if (!c.b_perm.empty()) attrs.is("b_perm", c.b_perm);
      NodeInfo node = testing::node_info("FusedMatMul", 17, {&a, &b}, 1, attrs);
      node.domain = "sod2";
      auto got = run_made(full_registry().create(node), {&a, &b}, 1, threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(got.value()[0], want.shape(), values(want), 1e-5);
      // With a residual: the epilogue addresses the (contiguous) output as before.
      const HostTensor res = rand_tensor(want.shape(), 3);
      const HostTensor want_res = run1("Add", 14, {&want, &res}, {}, threads);
      A with_res = attrs;
      with_res.i("residual_input", 2);
      NodeInfo rnode = testing::node_info("FusedMatMul", 17, {&a, &b, &res}, 1, with_res);
      rnode.domain = "sod2";
      auto got_res = run_made(full_registry().create(rnode), {&a, &b, &res}, 1, threads);
      ASSERT_TRUE(got_res.ok()) << got_res.status().to_string();
      expect_close(got_res.value()[0], want_res.shape(), values(want_res), 1e-5);
    }
  }
  // Permutations a GEMM cannot read, or that are not permutations: errors naming them.
  const HostTensor a = rand_tensor({3, 4, 5}, 4), b = rand_tensor({3, 5, 2}, 5);
  for (const std::vector<int64_t>& perm :
       std::vector<std::vector<int64_t>>{{2, 0, 1}, {0, 1}, {0, 0, 1}, {0, 1, 3}}) {
    NodeInfo node = testing::node_info("FusedMatMul", 17, {&a, &b}, 1, A().is("a_perm", perm));
    node.domain = "sod2";
    auto got = run_made(full_registry().create(node), {&a, &b}, 1, 1);
    ASSERT_FALSE(got.ok()) << dims_string(perm);
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("a_perm"), std::string::npos) << got.status().message();
  }
}

TEST(FusedOps, GemmMatchesSeparateOps) {
  const HostTensor a = rand_tensor({12, 9}, 1), b = rand_tensor({10, 9}, 2),
                   c = rand_tensor({10}, 3);
  const HostTensor bias = rand_tensor({10}, 4), res = rand_tensor({12, 10}, 5);
  check_all("Gemm", {&a, &b, &c}, A().i("transB", 1).f("alpha", 0.5f).f("beta", 2.f), bias, res);
  // Without C: the fused bias or residual takes slot 2.
  check_all("Gemm", {&a, &b}, A().i("transB", 1), bias, res);
  const HostTensor c2 = rand_tensor({12, 1}, 6);
  check_all("Gemm", {&a, &b, &c2}, A().i("transB", 1), bias, res);
}

// Silu where its sigmoid saturates (|x| up to 1e4, both sides of e^x's float range near +-88)
// against x / (1 + e^-x) in double on the separately run op's output: finite throughout, x or
// -0 at the ends. `channel_of(i)` is output element i's channel (the bias index).
void check_silu_large(const std::string& op, const std::vector<const HostTensor*>& op_in,
                      const Attrs& op_attrs, const HostTensor& bias, const HostTensor& res,
                      const std::function<int64_t(int64_t)>& channel_of) {
  const Act silu{"Silu"};
  for (int res_mode : {0, 1, 2})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(op + " residual mode " + std::to_string(res_mode) + " threads " +
                   std::to_string(threads));
      const HostTensor plain = run1(op, 17, op_in, op_attrs, threads);
      std::vector<const HostTensor*> in = op_in;
      const int bias_slot = static_cast<int>(in.size());
      in.push_back(&bias);
      const int res_slot = res_mode ? static_cast<int>(in.size()) : -1;
      if (res_mode) in.push_back(&res);
      const HostTensor got =
          run_fused(op, in, op_attrs, bias_slot, res_slot, res_mode != 2, silu, threads);
      ASSERT_EQ(got.shape().to_string(), plain.shape().to_string());
      std::vector<double> want = values(plain);
      const float* b = bias.data<float>();
      const float* r = res.data<float>();
      for (size_t i = 0; i < want.size(); ++i) {
        double v = want[i] + b[channel_of(static_cast<int64_t>(i))];
        if (res_mode == 1) v += r[i];
        v = v / (1.0 + std::exp(-v));
        if (res_mode == 2) v += r[i];
        want[i] = v;
      }
      size_t nonfinite = 0;
      for (int64_t i = 0; i < got.shape().numel(); ++i)
        nonfinite += !std::isfinite(got.data<float>()[i]);
      EXPECT_EQ(nonfinite, 0u);
      // Float sums of terms up to ~400 round at ~3e-5 where the result is near 0.
      expect_close(got, plain.shape(), want, 1e-4);
      // The same as Sigmoid -> Mul run separately.
      const HostTensor sep = run_separately(op, op_in, op_attrs, &bias, res_mode ? &res : nullptr,
                                            res_mode == 1, silu, threads);
      expect_close(got, sep.shape(), values(sep), 1e-5);
    }
}

TEST(FusedOps, SiluLargeMagnitudes) {
  // MatMul with K = 1: the product is exactly A's column times B's row, so the epilogue sees
  // chosen values, with the channel's bias of 0 (columns 0 and 1) or a small one.
  const std::vector<float> col = {-1e4f, -200.f, -100.f, -88.8f, -88.f, -87.5f, -50.f,
                                  -17.f, -1.f,   -1e-3f, 0.f,    1e-3f, 1.f,    17.f,
                                  50.f,  87.5f,  88.f,   88.8f,  100.f, 200.f,  1e4f};
  const int64_t m = static_cast<int64_t>(col.size());
  const HostTensor a = floats({m, 1}, col), b = floats({1, 4}, {1.f, -1.f, 0.5f, 1.f});
  const HostTensor bias = floats({4}, {0.f, 0.f, -0.25f, 1.5f});
  const HostTensor res = rand_tensor({m, 4}, 1, -100.f, 100.f);
  auto last4 = [](int64_t i) { return i % 4; };
  check_silu_large("MatMul", {&a, &b}, {}, bias, res, last4);
  // Exact values at the ends: silu(1e4) = 1e4, silu(-1e4) = -0, no residual.
  {
    const HostTensor zero_bias = floats({4}, {0.f, 0.f, 0.f, 0.f});
    const HostTensor y = run_fused("MatMul", {&a, &b, &zero_bias}, {}, 2, -1, true, {"Silu"}, 1);
    ASSERT_EQ(y.shape().numel(), m * 4);
    EXPECT_EQ(y.data<float>()[0], -0.f);
    EXPECT_EQ(y.data<float>()[1], 1e4f);
    EXPECT_EQ(y.data<float>()[(m - 1) * 4], 1e4f);
    EXPECT_EQ(y.data<float>()[(m - 1) * 4 + 1], -0.f);
  }
  // Gemm and a large tiled MatMul with inputs scaled so outputs spread over about +-200.
  const HostTensor ga = rand_tensor({12, 9}, 2, -20.f, 20.f), gb = rand_tensor({10, 9}, 3),
                   gc = rand_tensor({10}, 4, -50.f, 50.f);
  const HostTensor gbias = rand_tensor({10}, 5, -50.f, 50.f),
                   gres = rand_tensor({12, 10}, 6, -100.f, 100.f);
  auto last10 = [](int64_t i) { return i % 10; };
  check_silu_large("Gemm", {&ga, &gb, &gc}, A().i("transB", 1).f("alpha", 2.f), gbias, gres,
                   last10);
  check_silu_large("Gemm", {&ga, &gb}, A().i("transB", 1), gbias, gres, last10);
  const HostTensor ma = rand_tensor({300, 96}, 7, -10.f, 10.f), mb = rand_tensor({96, 260}, 8);
  const HostTensor mbias = rand_tensor({260}, 9, -50.f, 50.f),
                   mres = rand_tensor({300, 260}, 10, -100.f, 100.f);
  check_silu_large("MatMul", {&ma, &mb}, {}, mbias, mres, [](int64_t i) { return i % 260; });
  // Conv on each of its paths (GEMM, direct, depthwise), at each SIMD level.
  for (int level : {2, 1, 0}) {
    SCOPED_TRACE("simd level " + std::to_string(level));
    simd::force_simd_level(level);
    const HostTensor x = rand_tensor({2, 6, 9, 11}, 11, -20.f, 20.f),
                     w = rand_tensor({8, 6, 3, 3}, 12), b8 = rand_tensor({8}, 13, -50.f, 50.f);
    const HostTensor cbias = rand_tensor({8, 1, 1}, 14, -50.f, 50.f),
                     cres = rand_tensor({2, 8, 5, 6}, 15, -100.f, 100.f);
    check_silu_large("Conv", {&x, &w, &b8}, A().is("pads", {1, 1, 1, 1}).is("strides", {2, 2}),
                     cbias, cres, [](int64_t i) { return (i / 30) % 8; });
    const HostTensor xw = rand_tensor({2, 6, 7, 29}, 16, -20.f, 20.f),
                     rw = rand_tensor({2, 8, 7, 29}, 17, -100.f, 100.f);
    check_silu_large("Conv", {&xw, &w}, A().is("pads", {1, 1, 1, 1}), cbias, rw,
                     [](int64_t i) { return (i / (7 * 29)) % 8; });
    const HostTensor wd = rand_tensor({6, 1, 5, 5}, 18),
                     resd = rand_tensor({2, 6, 9, 11}, 19, -100.f, 100.f),
                     biasd = rand_tensor({6, 1, 1}, 20, -50.f, 50.f);
    check_silu_large("Conv", {&x, &wd}, A().i("group", 6).is("pads", {2, 2, 2, 2}), biasd, resd,
                     [](int64_t i) { return (i / 99) % 6; });
  }
  simd::force_simd_level(-1);
}

// Inference BatchNormalization with every epilogue (bias, residual on either side of the
// activation, every activation), against BatchNormalization then the ops one by one.
TEST(FusedOps, BatchNormalizationMatchesSeparateOps) {
  const HostTensor x = rand_tensor({2, 5, 7, 9}, 31), scale = rand_tensor({5}, 32),
                   b = rand_tensor({5}, 33), mean = rand_tensor({5}, 34),
                   var = rand_tensor({5}, 35, 0.1f, 2.f);
  const HostTensor bias = rand_tensor({1, 5, 1, 1}, 36), res = rand_tensor({2, 5, 7, 9}, 37);
  check_all("BatchNormalization", {&x, &scale, &b, &mean, &var}, A().f("epsilon", 1e-3f), bias,
            res);
  // Its epilogue slots follow the five statistics; only the inference form fuses.
  const std::vector<const HostTensor*> in = {&x, &scale, &b, &mean, &var, &bias};
  auto create = [&](const Attrs& a) {
    NodeInfo node = testing::node_info("FusedBatchNormalization", 17, in, 1, a);
    node.domain = "sod2";
    return full_registry().create(node);
  };
  EXPECT_TRUE(create(A().i("bias_input", 5)).ok());
  auto slot = create(A().i("bias_input", 2));
  ASSERT_FALSE(slot.ok());
  EXPECT_NE(slot.status().message().find("five BatchNormalization inputs"), std::string::npos)
      << slot.status().message();
  EXPECT_EQ(create(A().i("training_mode", 1)).status().code(), StatusCode::kInvalidArgument);
}

TEST(FusedOps, ContractErrors) {
  const HostTensor x = rand_tensor({1, 2, 5, 5}, 1), w = rand_tensor({3, 2, 3, 3}, 2);
  const HostTensor bias = rand_tensor({3}, 3);
  auto create = [&](const std::string& op, std::vector<const HostTensor*> in, const Attrs& a) {
    NodeInfo node = testing::node_info(op, 17, in, 1, a);
    node.domain = "sod2";
    return full_registry().create(node);
  };
  const std::vector<const HostTensor*> in = {&x, &w, &bias};
  EXPECT_TRUE(create("FusedConv", in, A().i("bias_input", 2)).ok());
  EXPECT_TRUE(create("FusedConv", in, {}).ok());  // all defaults: a plain Conv
  auto s = create("FusedConv", in, A().s("activation", "Gelu"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("Gelu"), std::string::npos);
  // Names are ONNX-cased: "silu" is not "Silu".
  s = create("FusedConv", in, A().s("activation", "silu"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("'silu'"), std::string::npos);
  EXPECT_TRUE(create("FusedConv", in, A().s("activation", "Silu")).ok());
  EXPECT_EQ(create("FusedConv", in, A().i("bias_input", 1)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(create("FusedConv", in, A().i("bias_input", 3)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(create("FusedConv", in, A().i("bias_input", 2).i("residual_input", 2)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(create("FusedConv", in, A().i("residual_before_activation", 2)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(create("FusedConv", {&x, &w, nullptr}, A().i("bias_input", 2)).status().code(),
            StatusCode::kInvalidArgument);
  // Run-time checks: a bias of the wrong size, a residual of the wrong shape.
  const HostTensor bad_bias = rand_tensor({4}, 4), bad_res = rand_tensor({1, 3, 3, 2}, 5);
  auto k = create("FusedConv", {&x, &w, &bad_bias}, A().i("bias_input", 2));
  auto got = run_made(std::move(k), {&x, &w, &bad_bias}, 1, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("fused bias"), std::string::npos);
  k = create("FusedConv", {&x, &w, &bad_res}, A().i("residual_input", 2));
  got = run_made(std::move(k), {&x, &w, &bad_res}, 1, 1);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("residual"), std::string::npos);
  const HostTensor ai = testing::make_tensor<int32_t>(DType::kInt32, {2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(create("FusedMatMul", {&ai, &ai}, {}).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
