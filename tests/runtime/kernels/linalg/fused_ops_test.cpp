// The fused ops (fused_ops.h) against the same chain run as separate ONNX ops: Conv / MatMul /
// Gemm from the linalg family, Add and the activations from the math family.
#include <cfloat>

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
    y = run1(act.name, 17, in, a, threads);
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
                                        {"Tanh"}};
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
