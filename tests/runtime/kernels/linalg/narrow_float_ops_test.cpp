// float16 / bfloat16 nodes of the float32 kernels (runtime/kernels/narrow_float_kernel.h): each
// output is exactly the float32 kernel's output on the widened inputs, rounded once to nearest
// even; non-float outputs (MaxPool's indices) pass through; a node mixing precisions is refused.
#include <cstring>

#include "linalg_test_util.h"
#include "runtime/kernels/narrow_float_kernel.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::rt::linalg_test {
namespace {

// `t` rounded to `narrow`, as that type's tensor.
HostTensor narrowed(const HostTensor& t, DType narrow) {
  HostTensor out(narrow, t.shape());
  auto* dst = reinterpret_cast<uint16_t*>(out.bytes().data());
  for (int64_t i = 0; i < t.shape().numel(); ++i) {
    const double v = t.data<float>()[i];
    dst[i] = narrow == DType::kFloat16 ? double_to_half(v) : double_to_bfloat16(v);
  }
  return out;
}

// A half-precision tensor widened back: the float32 tensor the adapter feeds the kernel.
HostTensor widened(const HostTensor& t) {
  HostTensor out(DType::kFloat, t.shape());
  const auto* src = reinterpret_cast<const uint16_t*>(t.bytes().data());
  for (int64_t i = 0; i < t.shape().numel(); ++i) {
    out.data<float>()[i] =
        t.dtype() == DType::kFloat16 ? half_to_float(src[i]) : bfloat16_to_float(src[i]);
  }
  return out;
}

// Runs `op` on half-precision copies of the float inputs and checks each output against the
// float32 kernel on the same (widened) values, rounded once.
void expect_rounded_float32(const std::string& op, int opset, std::vector<HostTensor> inputs,
                            size_t outs, const Attrs& attrs, DType narrow) {
  std::vector<HostTensor> narrow_in, wide_in;
  for (const HostTensor& t : inputs) {
    if (t.dtype() != DType::kFloat) {
      narrow_in.push_back(t);
      wide_in.push_back(t);
      continue;
    }
    narrow_in.push_back(narrowed(t, narrow));
    wide_in.push_back(widened(narrow_in.back()));
  }
  std::vector<const HostTensor*> np, wp;
  for (size_t i = 0; i < inputs.size(); ++i) {
    np.push_back(&narrow_in[i]);
    wp.push_back(&wide_in[i]);
  }
  auto want = testing::run_kernel(registry(), op, opset, wp, outs, attrs, 1);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (int threads : {1, 2}) {
    auto got = testing::run_kernel(registry(), op, opset, np, outs, attrs, threads);
    ASSERT_TRUE(got.ok()) << op << ": " << got.status().to_string();
    for (size_t o = 0; o < outs; ++o) {
      const HostTensor& w = (*want)[o];
      const HostTensor& g = (*got)[o];
      ASSERT_EQ(g.shape().to_string(), w.shape().to_string()) << op << " output " << o;
      if (w.dtype() != DType::kFloat) {
        EXPECT_EQ(g.dtype(), w.dtype()) << op << " output " << o;
        EXPECT_EQ(std::memcmp(g.bytes().data(), w.bytes().data(), w.bytes().size()), 0)
            << op << " output " << o;
        continue;
      }
      ASSERT_EQ(g.dtype(), narrow) << op << " output " << o;
      const HostTensor rounded = narrowed(w, narrow);
      EXPECT_EQ(std::memcmp(g.bytes().data(), rounded.bytes().data(), rounded.bytes().size()), 0)
          << op << " output " << o << " (" << dtype_name(narrow) << ", " << threads << " threads)";
    }
  }
}

TEST(NarrowFloatOps, ContractionsArePreciseFloat32RoundedOnce) {
  for (DType narrow : {DType::kFloat16, DType::kBFloat16}) {
    expect_rounded_float32(
        "Conv", 11,
        {rand_tensor({1, 3, 9, 7}, 1), rand_tensor({4, 3, 3, 3}, 2), rand_tensor({4}, 3)}, 1,
        A().is("pads", {1, 1, 1, 1}), narrow);
    expect_rounded_float32("MatMul", 13, {rand_tensor({2, 5, 6}, 4), rand_tensor({6, 3}, 5)}, 1, {},
                           narrow);
    expect_rounded_float32("Gemm", 13,
                           {rand_tensor({4, 6}, 6), rand_tensor({3, 6}, 7), rand_tensor({3}, 8)}, 1,
                           A().i("transB", 1).f("alpha", 0.5f), narrow);
    expect_rounded_float32(
        "DeformConv", 19,
        {rand_tensor({1, 2, 5, 4}, 9), rand_tensor({3, 2, 2, 2}, 10), rand_tensor({1, 8, 4, 3}, 11),
         rand_tensor({3}, 12), rand_tensor({1, 4, 4, 3}, 13)},
        1, {}, narrow);
  }
}

TEST(NarrowFloatOps, MaxPoolIndicesStayInt64) {
  expect_rounded_float32("MaxPool", 12, {rand_tensor({1, 2, 6, 6}, 9)}, 2,
                         A().is("kernel_shape", {2, 2}).is("strides", {2, 2}), DType::kFloat16);
  expect_rounded_float32("AveragePool", 11, {rand_tensor({1, 2, 6, 6}, 10)}, 1,
                         A().is("kernel_shape", {3, 3}), DType::kBFloat16);
}

TEST(NarrowFloatOps, ParametersTheSpecTypesApartMayStayFloat32) {
  // BatchNormalization-15: X float16, scale/bias/mean/var float32 (T1, T2). Resize: X float16,
  // scales always float. Both run; the parameters are read as they are.
  const HostTensor x = narrowed(rand_tensor({1, 3, 4, 4}, 14), DType::kFloat16);
  const HostTensor scale = rand_tensor({3}, 15), bias = rand_tensor({3}, 16),
                   mean = rand_tensor({3}, 17), var = rand_tensor({3}, 18, 0.5f, 1.5f);
  const NodeInfo bn =
      testing::node_info("BatchNormalization", 15, {&x, &scale, &bias, &mean, &var}, 1);
  EXPECT_TRUE(computes_through_float32(bn));
  // BatchNormalization is a math-family kernel.
  KernelRegistry with_math;
  register_math_kernels(with_math);
  const HostTensor wide_x = widened(x);
  auto want = testing::run_kernel(with_math, "BatchNormalization", 15,
                                  {&wide_x, &scale, &bias, &mean, &var}, 1, {}, 1);
  auto got = testing::run_kernel(with_math, "BatchNormalization", 15,
                                 {&x, &scale, &bias, &mean, &var}, 1, {}, 1);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  const HostTensor rounded = narrowed((*want)[0], DType::kFloat16);
  ASSERT_EQ((*got)[0].dtype(), DType::kFloat16);
  EXPECT_EQ(std::memcmp((*got)[0].bytes().data(), rounded.bytes().data(), rounded.bytes().size()),
            0);

  const HostTensor scales = floats({4}, {1, 1, 2, 2});
  const NodeInfo resize = testing::node_info("Resize", 13, {&x, nullptr, &scales}, 1);
  EXPECT_TRUE(computes_through_float32(resize));
  auto up = testing::run_kernel(registry(), "Resize", 13, {&x, nullptr, &scales}, 1, {}, 1);
  ASSERT_TRUE(up.ok()) << up.status().to_string();
  EXPECT_EQ((*up)[0].dtype(), DType::kFloat16);
  EXPECT_EQ((*up)[0].shape(), (Shape{1, 3, 8, 8}));
}

TEST(NarrowFloatOps, MixedPrecisionIsLeftToTheKernel) {
  const HostTensor a = narrowed(rand_tensor({2, 3}, 11), DType::kFloat16);
  const HostTensor b = rand_tensor({3, 2}, 12);
  const NodeInfo mixed = testing::node_info("MatMul", 13, {&a, &b}, 1);
  EXPECT_FALSE(computes_through_float32(mixed));
  const Status st = run_status("MatMul", 13, {&a, &b}, 1, {});
  EXPECT_FALSE(st.ok());
  // float16 with bfloat16: not one precision either.
  const HostTensor c = narrowed(rand_tensor({3, 2}, 13), DType::kBFloat16);
  EXPECT_FALSE(computes_through_float32(testing::node_info("MatMul", 13, {&a, &c}, 1)));
  // An op with its own half-precision path is not in the list.
  EXPECT_FALSE(computes_through_float32(testing::node_info("Relu", 14, {&a}, 1)));
}

}  // namespace
}  // namespace sod2::rt::linalg_test

namespace sod2::rt::linalg_test {
namespace {

// A constant input (NodeInfo::input_constant, as a session marks weights) is widened once and
// reused while it stays at the same address; new data at another address is widened again.
TEST(NarrowFloatOps, ConstantInputsAreWidenedOnceAndFollowTheirData) {
  const HostTensor a = narrowed(floats({2, 3}, {1, 2, 3, 4, 5, 6}), DType::kFloat16);
  const HostTensor b1 = narrowed(floats({3, 2}, {1, 0, 0, 1, 1, 1}), DType::kFloat16);
  const HostTensor b2 = narrowed(floats({3, 2}, {2, 0, 0, 2, 2, 2}), DType::kFloat16);
  NodeInfo info = testing::node_info("MatMul", 13, {&a, &b1}, 1);
  info.input_constant = {false, true};
  auto kernel = registry().create(info);
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  auto run_with = [&](const HostTensor& b) {
    const Tensor views[] = {a.view(), b.view()};
    const Tensor* in[] = {&views[0], &views[1]};
    testing::HeapAllocator alloc(1);
    ThreadPool pool(1);
    KernelContext ctx(in, &alloc, &pool);
    EXPECT_TRUE((*kernel)->run(ctx).ok());
    return widened(alloc.outputs[0]);
  };
  const std::vector<float> want1 = {1 + 3, 2 + 3, 4 + 6, 5 + 6};
  for (int run = 0; run < 2; ++run) {
    const HostTensor y = run_with(b1);
    for (size_t i = 0; i < want1.size(); ++i) EXPECT_EQ(y.data<float>()[i], want1[i]) << run;
  }
  const HostTensor y2 = run_with(b2);
  for (size_t i = 0; i < want1.size(); ++i) EXPECT_EQ(y2.data<float>()[i], 2 * want1[i]);
}

}  // namespace
}  // namespace sod2::rt::linalg_test
