// Dropout (inference and seeded training mode) and the ai.onnx.preview.training optimizers
// (Adagrad, Adam, Momentum) against the ONNX spec's formulas.
#include <cmath>

#include "math_test_util.h"

namespace sod2::rt::math_test {
namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

// Runs a kernel of the training domain (the harness's node_info has no domain).
Expected<std::vector<HostTensor>> run_training(const std::string& op,
                                               const std::vector<const HostTensor*>& inputs,
                                               size_t num_outputs, Attrs a) {
  NodeInfo info = testing::node_info(op, 1, inputs, num_outputs, std::move(a));
  info.domain = kTraining;
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, registry().create(info));
  std::vector<Tensor> views;
  for (const HostTensor* t : inputs) views.push_back(t ? t->view() : Tensor{});
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) ptrs.push_back(inputs[i] ? &views[i] : nullptr);
  testing::HeapAllocator alloc(num_outputs);
  ThreadPool pool(2);
  KernelContext ctx(ptrs, &alloc, &pool);
  SOD2_RETURN_IF_ERROR(kernel->run(ctx));
  return std::move(alloc.outputs);
}

std::vector<HostTensor> training_ok(const std::string& op,
                                    const std::vector<const HostTensor*>& inputs,
                                    size_t num_outputs, Attrs a) {
  auto r = run_training(op, inputs, num_outputs, std::move(a));
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
  if (!r.ok()) return std::vector<HostTensor>(num_outputs);
  return std::move(r).value();
}

TEST(MathDropout, InferenceCopiesAndMasksOnes) {
  const HostTensor x = random_f32({3, 4}, -2, 2, 1);
  const auto xv = values<float>(x);
  const std::vector<double> same(xv.begin(), xv.end());
  // Opset 12+: no training_mode input, or false; the ratio input is then irrelevant.
  const HostTensor r = f32({}, {0.9f});
  const HostTensor off = b8({}, {0});
  for (const auto& in : std::vector<std::vector<const HostTensor*>>{
           {&x}, {&x, &r}, {&x, &r, &off}, {&x, nullptr, &off}}) {
    const auto out = run_ok("Dropout", 13, in, 2);
    expect_near_all<float>(out[0], same, 0);
    EXPECT_EQ(out[1].dtype(), DType::kBool);
    EXPECT_EQ(values<uint8_t>(out[1]), std::vector<uint8_t>(12, 1));
  }
  // Opset 7-11: always inference (ratio attribute ignored); the mask is of the input's type
  // before opset 10.
  expect_near_all<float>(run_ok("Dropout", 11, {&x}, 1, attrs({{"ratio", attr_float(0.2f)}}))[0],
                         same, 0);
  const auto old = run_ok("Dropout", 7, {&x}, 2);
  EXPECT_EQ(old[1].dtype(), DType::kFloat);
  expect_near_all<float>(old[1], std::vector<double>(12, 1.0), 0);
  // Any element type passes through in inference.
  const HostTensor xi = i64({2}, {5, -7});
  EXPECT_EQ(values<int64_t>(run_ok("Dropout", 13, {&xi})[0]), (std::vector<int64_t>{5, -7}));
}

TEST(MathDropout, TrainingModeFollowsNumpysGenerator) {
  // np.random.seed(0); np.random.uniform(0, 1, 5) = [0.5488, 0.7152, 0.6028, 0.5449, 0.4237]:
  // with ratio 0.5 the last element is dropped and the others scaled by 2.
  const HostTensor x = f32({5}, {1, 2, 3, 4, 5});
  const HostTensor r = f32({}, {0.5f});
  const HostTensor on = b8({}, {1});
  const Attrs seed0 = attrs({{"seed", attr_int(0)}});
  const auto out = run_ok("Dropout", 13, {&x, &r, &on}, 2, seed0);
  expect_near_all<float>(out[0], {2, 4, 6, 8, 0}, 0);
  EXPECT_EQ(values<uint8_t>(out[1]), (std::vector<uint8_t>{1, 1, 1, 1, 0}));
  // ratio 0.6 drops the elements whose draw is below it: 0.5488 and 0.5449 and 0.4237.
  const HostTensor r6 = f32({}, {0.6f});
  expect_near_all<float>(run_ok("Dropout", 13, {&x, &r6, &on}, 1, seed0)[0],
                         {0, 2 / 0.4, 3 / 0.4, 0, 0}, 1e-6);
  // Ratio 0 keeps everything; the default ratio is 0.5.
  const HostTensor r0 = f32({}, {0});
  const auto kept = run_ok("Dropout", 13, {&x, &r0, &on}, 2);
  expect_near_all<float>(kept[0], {1, 2, 3, 4, 5}, 0);
  EXPECT_EQ(values<uint8_t>(kept[1]), std::vector<uint8_t>(5, 1));
  expect_near_all<float>(run_ok("Dropout", 13, {&x, nullptr, &on}, 1, seed0)[0], {2, 4, 6, 8, 0},
                         0);
  // Without a seed: every element is either dropped or scaled, and the mask says which.
  const HostTensor big = random_f32({1000}, 1, 2, 3);
  const auto rnd = run_ok("Dropout", 13, {&big, &r, &on}, 2);
  const auto bv = values<float>(big), yv = values<float>(rnd[0]);
  const auto mv = values<uint8_t>(rnd[1]);
  int kept_count = 0;
  for (size_t i = 0; i < bv.size(); ++i) {
    EXPECT_EQ(yv[i], mv[i] ? bv[i] * 2 : 0.0f) << i;
    kept_count += mv[i];
  }
  EXPECT_GT(kept_count, 400);
  EXPECT_LT(kept_count, 600);
  // Opset < 7: inference whatever is_test says (its default, 0, would mean training: models of
  // that era meant for inference often left it unset).
  expect_near_all<float>(run_ok("Dropout", 6, {&x}, 1, seed0)[0], {1, 2, 3, 4, 5}, 0);
  expect_near_all<float>(run_ok("Dropout", 6, {&x}, 1, attrs({{"is_test", attr_int(1)}}))[0],
                         {1, 2, 3, 4, 5}, 0);
}

TEST(MathDropout, BadInputsAreErrors) {
  const HostTensor x = f32({2}, {1, 2});
  const HostTensor on = b8({}, {1});
  for (float bad : {1.0f, -0.1f, NAN}) {
    const HostTensor r = f32({}, {bad});
    EXPECT_EQ(run_status("Dropout", 13, {&x, &r, &on}).code(), StatusCode::kInvalidArgument) << bad;
  }
  const HostTensor r2 = f32({2}, {0.5f, 0.5f});
  EXPECT_EQ(run_status("Dropout", 13, {&x, &r2, &on}).code(), StatusCode::kInvalidArgument);
  const HostTensor t_int = i64({}, {1});
  const HostTensor r = f32({}, {0.5f});
  EXPECT_EQ(run_status("Dropout", 13, {&x, &r, &t_int}).code(), StatusCode::kInvalidArgument);
  const HostTensor xi = i32({2}, {1, 2});
  EXPECT_EQ(run_status("Dropout", 13, {&xi, &r, &on}).code(), StatusCode::kUnsupported);
}

TEST(MathOptimizers, AdagradMatchesSpec) {
  const HostTensor r = f32({}, {0.1f});
  const HostTensor t = i64({}, {3});
  const HostTensor x1 = f32({2}, {1.0f, -2.0f}), g1 = f32({2}, {-0.5f, 0.25f}),
                   h1 = f32({2}, {2.0f, 0.0f});
  const HostTensor x2 = f32({1}, {4.0f}), g2 = f32({1}, {1.5f}), h2 = f32({1}, {0.5f});
  const Attrs a = attrs({{"decay_factor", attr_float(0.1f)},
                         {"epsilon", attr_float(1e-5f)},
                         {"norm_coefficient", attr_float(0.01f)}});
  const auto out = training_ok("Adagrad", {&r, &t, &x1, &x2, &g1, &g2, &h1, &h2}, 4, a);
  auto ref = [&](double x, double g, double h, double* h_new) {
    const double rate = 0.1f / (1 + 3 * double(0.1f));
    const double gr = double(0.01f) * x + g;
    *h_new = h + gr * gr;
    return x - rate * gr / (std::sqrt(*h_new) + double(1e-5f));
  };
  double hn[3];
  const double xa = ref(1.0, -0.5, 2.0, &hn[0]), xb = ref(-2.0, 0.25, 0.0, &hn[1]),
               xc = ref(4.0, 1.5, 0.5, &hn[2]);
  expect_near_all<float>(out[0], {xa, xb}, 1e-6, 1e-6, "X1_new");
  expect_near_all<float>(out[1], {xc}, 1e-6, 1e-6, "X2_new");
  expect_near_all<float>(out[2], {hn[0], hn[1]}, 1e-6, 1e-6, "H1_new");
  expect_near_all<float>(out[3], {hn[2]}, 1e-6, 1e-6, "H2_new");
}

TEST(MathOptimizers, AdamWithAndWithoutBiasCorrection) {
  const HostTensor r = f64({}, {0.1});
  const HostTensor x = f64({3}, {1.0, -2.0, 0.5}), g = f64({3}, {-0.5, 0.25, 3.0}),
                   v = f64({3}, {0.1, 0.2, -0.3}), h = f64({3}, {1.0, 0.5, 0.0});
  const Attrs a = attrs({{"alpha", attr_float(0.95f)},
                         {"beta", attr_float(0.1f)},
                         {"epsilon", attr_float(1e-7f)},
                         {"norm_coefficient", attr_float(0.001f)},
                         {"norm_coefficient_post", attr_float(0.02f)}});
  for (int64_t step : {0, 4}) {
    const HostTensor t = i64({}, {step});
    const auto out = training_ok("Adam", {&r, &t, &x, &g, &v, &h}, 3, a);
    const double alpha = 0.95f, beta = 0.1f, eps = 1e-7f, norm = 0.001f, post = 0.02f;
    std::vector<double> xr, vr, hr;
    for (int i = 0; i < 3; ++i) {
      const double xi = values<double>(x)[i], gi = values<double>(g)[i];
      const double gr = norm * xi + gi;
      const double vn = alpha * values<double>(v)[i] + (1 - alpha) * gr;
      const double hn = beta * values<double>(h)[i] + (1 - beta) * gr * gr;
      const double rate =
          step > 0 ? 0.1 * std::sqrt(1 - std::pow(beta, step)) / (1 - std::pow(alpha, step)) : 0.1;
      xr.push_back((1 - post) * (xi - rate * vn / (std::sqrt(hn) + eps)));
      vr.push_back(vn);
      hr.push_back(hn);
    }
    expect_near_all<double>(out[0], xr, 1e-12, 1e-12, "X_new");
    expect_near_all<double>(out[1], vr, 1e-12, 1e-12, "V_new");
    expect_near_all<double>(out[2], hr, 1e-12, 1e-12, "H_new");
  }
  // Defaults (alpha 0.9, beta 0.999, epsilon 1e-6), and only X_new asked for.
  const HostTensor t1 = i64({}, {1});
  const auto only_x = training_ok("Adam", {&r, &t1, &x, &g, &v, &h}, 1, {});
  const double gr = -0.5, vn = 0.9 * 0.1 + 0.1 * gr, hn = 0.999 * 1.0 + 0.001 * gr * gr;
  const double rate = 0.1 * std::sqrt(1 - 0.999) / (1 - 0.9);
  EXPECT_NEAR(values<double>(only_x[0])[0], 1.0 - rate * vn / (std::sqrt(hn) + 1e-6), 1e-12);
}

TEST(MathOptimizers, MomentumStandardAndNesterov) {
  const HostTensor r = f32({}, {0.1f});
  const HostTensor x = f32({2}, {1.2f, 2.8f}), g = f32({2}, {-0.94f, -2.5f}),
                   v = f32({2}, {1.7f, 3.6f});
  for (const char* mode : {"standard", "nesterov"}) {
    for (int64_t step : {0, 1}) {
      const HostTensor t = i64({}, {step});
      const Attrs a = attrs({{"alpha", attr_float(0.95f)},
                             {"beta", attr_float(0.1f)},
                             {"norm_coefficient", attr_float(0.001f)},
                             {"mode", attr_string(mode)}});
      const auto out = training_ok("Momentum", {&r, &t, &x, &g, &v}, 2, a);
      std::vector<double> xr, vr;
      for (int i = 0; i < 2; ++i) {
        const double xi = values<float>(x)[i];
        const double gr = double(0.001f) * xi + values<float>(g)[i];
        const double vn = double(0.95f) * values<float>(v)[i] + (step > 0 ? 0.1f : 1.0) * gr;
        const double rate = 0.1f;
        xr.push_back(std::string(mode) == "standard" ? xi - rate * vn
                                                     : xi - rate * (gr + double(0.95f) * vn));
        vr.push_back(vn);
      }
      expect_near_all<float>(out[0], xr, 1e-6, 1e-6, mode);
      expect_near_all<float>(out[1], vr, 1e-6, 1e-6, mode);
    }
  }
}

TEST(MathOptimizers, BadInputsAreErrors) {
  const HostTensor r = f32({}, {0.1f});
  const HostTensor t = i64({}, {1});
  const HostTensor x = f32({2}, {1, 2}), g = f32({2}, {1, 2}), h = f32({2}, {1, 2});
  const HostTensor g3 = f32({3}, {1, 2, 3}), gd = f64({2}, {1, 2});
  // Inputs not in groups of X, G, H.
  EXPECT_EQ(run_training("Adagrad", {&r, &t, &x, &g}, 1, {}).status().code(),
            StatusCode::kInvalidModel);
  // G of another shape or type than X.
  EXPECT_EQ(run_training("Adagrad", {&r, &t, &x, &g3, &h}, 2, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(run_training("Adagrad", {&r, &t, &x, &gd, &h}, 2, {}).status().code(),
            StatusCode::kInvalidArgument);
  // R must be a float scalar, T an integer scalar.
  const HostTensor r2 = f32({2}, {0.1f, 0.2f});
  EXPECT_EQ(run_training("Adagrad", {&r2, &t, &x, &g, &h}, 2, {}).status().code(),
            StatusCode::kInvalidArgument);
  const HostTensor tf = f32({}, {1});
  EXPECT_EQ(run_training("Adagrad", {&r, &tf, &x, &g, &h}, 2, {}).status().code(),
            StatusCode::kInvalidArgument);
  // Too many outputs; Momentum without its required attributes or with an unknown mode.
  EXPECT_EQ(run_training("Adagrad", {&r, &t, &x, &g, &h}, 3, {}).status().code(),
            StatusCode::kInvalidModel);
  EXPECT_EQ(run_training("Momentum", {&r, &t, &x, &g, &h}, 2, {}).status().code(),
            StatusCode::kInvalidModel);
  const Attrs bad_mode = attrs({{"alpha", attr_float(0.9f)},
                                {"beta", attr_float(0.1f)},
                                {"norm_coefficient", attr_float(0)},
                                {"mode", attr_string("heavy")}});
  EXPECT_EQ(run_training("Momentum", {&r, &t, &x, &g, &h}, 2, bad_mode).status().code(),
            StatusCode::kInvalidModel);
  // Integer tensors are not optimised.
  const HostTensor xi = i32({2}, {1, 2}), gi = i32({2}, {1, 2}), hi = i32({2}, {1, 2});
  EXPECT_EQ(run_training("Adagrad", {&r, &t, &xi, &gi, &hi}, 2, {}).status().code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace sod2::rt::math_test
