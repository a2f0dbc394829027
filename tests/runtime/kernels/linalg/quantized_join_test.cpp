// sod2:QFusedConv with a residual join (inputs 9-15: a QDQ Conv group and the quantized residual
// Add after it, core/package/kernel_fusion.h): it must write the bytes that QFusedConv and then
// QAdd write, on every path of qlinear_conv.cpp (the join in the VNNI GEMM's store, or over the
// output after the other paths), for both 8-bit types of each operand and a float join result, a
// requantizing and a float epilogue, a join clamp, and one or two threads.
#include <algorithm>
#include <limits>
#include <string>

#include "runtime/kernels/linalg/int8_vnni.h"
#include "tests/runtime/kernels/linalg/int_conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"
#include "tests/runtime/kernels/linalg/quantized_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

struct JoinShape {
  const char* name;
  IntConvGeometry g;
  bool weight_zero_points = false;  // nonzero: the reference path
};
const JoinShape kShapes[] = {
    {"1x1", {2, 16, 9, 7, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}},
    {"1x1 stride 2", {1, 16, 9, 8, 8, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1}},
    {"3x3 pad 1", {2, 8, 11, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"small output, 40 channels", {1, 16, 4, 4, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"large output", {1, 4, 70, 66, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"depthwise 5x5, 20 channels", {2, 20, 7, 7, 20, 5, 5, 20, 1, 1, 2, 2, 2, 2, 1}},
    {"depthwise 17x17", {1, 4, 20, 18, 4, 17, 17, 4, 1, 1, 8, 8, 8, 8, 1}},
    {"depthwise 3x3, 45 wide", {1, 6, 5, 45, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1}},
    // 1,152 taps over 80 channels in two blocks of 40: the VNNI GEMM with channels in lanes.
    {"deep, channels in lanes", {1, 128, 7, 7, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"weight zero points", {1, 6, 7, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}, true},
};

// An 8-bit scalar of type t.
HostTensor zero_point(DType t, int v) {
  return t == DType::kUint8 ? scalar<uint8_t>(t, static_cast<uint8_t>(v))
                            : scalar<int8_t>(t, static_cast<int8_t>(v));
}

struct Operands {
  HostTensor x, xs, xz, w, ws, wz, ys, yz, b;
};
Operands operands(const JoinShape& shape, DType y_type) {
  const IntConvGeometry& p = shape.g;
  std::vector<float> wsv;
  std::vector<int32_t> bv;
  std::vector<int8_t> wzv;
  for (int64_t i = 0; i < p.m; ++i) {
    wsv.push_back(0.0005f * static_cast<float>(1 + i % 7));
    bv.push_back(static_cast<int32_t>((i * 7919) % 4001) - 2000);
    wzv.push_back(shape.weight_zero_points ? static_cast<int8_t>(i % 5 - 2) : int8_t{0});
  }
  return {random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 41),
          floats({}, {0.021f}),
          scalar<uint8_t>(DType::kUint8, 119),
          random_q<int8_t>(DType::kInt8, {p.m, p.c / p.group, p.kh, p.kw}, 42, -127, 127),
          floats({p.m}, wsv),
          testing::make_tensor(DType::kInt8, {p.m}, wzv),
          floats({}, {0.037f}),
          zero_point(y_type, y_type == DType::kUint8 ? 131 : -6),
          testing::make_tensor(DType::kInt32, {p.m}, bv)};
}

struct Types {
  DType y, residual, z;
};

void check_join(const JoinShape& shape, Types t, const char* activation, float join_lo,
                float join_hi, int threads) {
  const IntConvGeometry& p = shape.g;
  SCOPED_TRACE(std::string(shape.name) + ": y " + dtype_name(t.y) + ", residual " +
               dtype_name(t.residual) + ", z " + dtype_name(t.z) + ", activation '" + activation +
               "', join clamp [" + std::to_string(join_lo) + ", " + std::to_string(join_hi) +
               "], threads " + std::to_string(threads) + (quant::vnni_available() ? ", VNNI" : ""));
  const Operands o = operands(shape, t.y);
  A conv = A().i("group", p.group)
               .is("strides", {p.sy, p.sx})
               .is("pads", {p.pt, p.pl, p.pb, p.pr})
               .is("dilations", {p.dil, p.dil})
               .s("activation", activation)
               .f("clip_min", 0.f)
               .f("clip_max", kInf);
  const std::vector<const HostTensor*> conv_in{&o.x,  &o.xs, &o.xz, &o.w, &o.ws,
                                               &o.wz, &o.ys, &o.yz, &o.b};
  auto q = run_sod2("QFusedConv", conv_in, conv, threads);
  ASSERT_TRUE(q.ok()) << q.status().to_string();
  const HostTensor& result = (*q)[0];
  const HostTensor r = t.residual == DType::kUint8
                           ? random_q<uint8_t>(t.residual, result.shape(), 43)
                           : random_q<int8_t>(t.residual, result.shape(), 43);
  // The join dequantizes the result with its own parameters (a DequantizeLinear of its own).
  const HostTensor rs = floats({}, {0.029f}), rz = zero_point(t.residual, 7);
  const HostTensor as = floats({}, {0.041f}), az = zero_point(t.y, t.y == DType::kUint8 ? 125 : -3);
  // A float z: the join without a QuantizeLinear after it (no z scale or zero point).
  const bool float_z = t.z == DType::kFloat;
  const HostTensor zs = floats({}, {0.053f}),
                   zz = zero_point(float_z ? DType::kUint8 : t.z, t.z == DType::kUint8 ? 4 : -9);
  const HostTensor* z_scale = float_z ? nullptr : &zs;
  const HostTensor* z_zero = float_z ? nullptr : &zz;
  auto want = run_sod2("QAdd", {&result, &as, &az, &r, &rs, &rz, z_scale, z_zero},
                       A().f("clip_min", join_lo).f("clip_max", join_hi), threads);
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  std::vector<const HostTensor*> joined_in = conv_in;
  for (const HostTensor* v : {&r, &rs, &rz, &as, &az, z_scale, z_zero}) joined_in.push_back(v);
  conv.f("join_clip_min", join_lo).f("join_clip_max", join_hi);
  auto got = run_sod2("QFusedConv", joined_in, conv, threads);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ((*want)[0].dtype(), t.z);
  expect_same_bytes((*got)[0], (*want)[0]);
}

TEST(QFusedConvJoin, EqualsTheConvolutionThenQAddOnEveryPath) {
  VnniRestore restore;
  const Types types[] = {{DType::kUint8, DType::kUint8, DType::kUint8},
                         {DType::kInt8, DType::kUint8, DType::kInt8},
                         {DType::kUint8, DType::kInt8, DType::kInt8},
                         {DType::kUint8, DType::kUint8, DType::kFloat}};
  for (bool vnni : {true, false}) {
    quant::set_vnni_enabled(vnni);
    for (const JoinShape& shape : kShapes)
      for (const Types& t : types)
        for (const char* activation : {"", "HardSwish"}) {
          check_join(shape, t, activation, 0.f, kInf, 2);
          check_join(shape, t, activation, -0.5f, 0.75f, 1);
        }
    check_join(kShapes[0], types[0], "", -kInf, kInf, 1);
  }
}

TEST(QFusedConvJoin, BadJoinOperandsAreErrorsNamingThem) {
  const JoinShape& shape = kShapes[0];
  const Operands o = operands(shape, DType::kUint8);
  const A attrs = A().i("group", 1).f("clip_min", 0.f).f("clip_max", kInf);
  const Shape out{shape.g.n, shape.g.m, shape.g.h, shape.g.w};
  const HostTensor r = random_q<uint8_t>(DType::kUint8, out, 1);
  const HostTensor r_wrong = random_q<uint8_t>(DType::kUint8, {1, shape.g.m, 2, 2}, 1);
  const HostTensor r_float = floats(out, std::vector<float>(static_cast<size_t>(out.numel()), 1));
  const HostTensor s = floats({}, {0.05f}), z = scalar<uint8_t>(DType::kUint8, 3);
  const HostTensor zero = floats({}, {0.f});
  const HostTensor z_int8 = scalar<int8_t>(DType::kInt8, 0);
  auto run = [&](const HostTensor* res, const HostTensor* a_zp, const HostTensor* z_scale,
                 const HostTensor* ys, const Attrs& a) {
    return run_sod2("QFusedConv",
                    {&o.x, &o.xs, &o.xz, &o.w, &o.ws, &o.wz, ys, ys ? &o.yz : nullptr, &o.b, res,
                     &s, &z, &s, a_zp, z_scale, &z},
                    a, 1);
  };
  auto expect_error = [](const Expected<std::vector<HostTensor>>& got, const char* names) {
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find(names), std::string::npos) << got.status().to_string();
  };
  ASSERT_TRUE(run(&r, &z, &s, &o.ys, attrs).ok());
  expect_error(run(&r_wrong, &z, &s, &o.ys, attrs), "residual");
  expect_error(run(&r_float, &z, &s, &o.ys, attrs), "residual");
  expect_error(run(&r, &z, &zero, &o.ys, attrs), "y_scale");
  // The join's zero point for the result must have the result's type.
  expect_error(run(&r, &z_int8, &s, &o.ys, attrs), "a_zero_point");
  // Without y_scale the result is float: nothing 8-bit to join.
  expect_error(run(&r, &z, &s, nullptr, attrs), "needs y_scale");
  A bad = attrs;
  bad.f("join_clip_min", 1.f).f("join_clip_max", 0.f);
  expect_error(run(&r, &z, &s, &o.ys, bad), "join_clip_min");
}

}  // namespace
}  // namespace sod2::rt::linalg_test
