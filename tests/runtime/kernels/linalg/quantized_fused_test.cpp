// The fused int8 kernels of QDQ groups (core/package/kernel_fusion.h) and the fast paths of the
// integer convolutions: sod2:QFusedConv (QLinearConv plus a clamp) through every path of
// qlinear_conv.cpp (dense im2col, 1x1 direct, strided phases, depthwise, reference; channel
// splits for small outputs, several tiles for large ones) against an int64 reference, bit for
// bit; sod2:QAdd against DequantizeLinear, Add, Relu/Clip and QuantizeLinear run one by one.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "runtime/kernels/linalg/int8_vnni.h"
#include "runtime/kernels/linalg/qdq_epilogue.h"
#include "runtime/kernels/linalg/quantize.h"
#include "tests/runtime/kernels/linalg/int_conv_reference.h"
#include "tests/runtime/kernels/linalg/linalg_test_util.h"
#include "tests/runtime/kernels/linalg/quantized_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

using Geometry = NamedIntConvGeometry;

int32_t quantize_ref(float v, float scale, int32_t zp, int lo, int hi) {
  if (std::isinf(v)) return v < 0 ? lo : hi;
  return static_cast<int32_t>(
      std::clamp(std::nearbyint(v / scale) + static_cast<float>(zp), float(lo), float(hi)));
}

template <class TX, class TY>
void check_geometry(const Geometry& geometry, DType xt, DType yt, int xzp, int yzp, float clip_lo,
                    float clip_hi, int threads) {
  const IntConvGeometry& p = geometry.g;
  SCOPED_TRACE(std::string(geometry.name) + " x " + dtype_name(xt) + " y " + dtype_name(yt) +
               " threads " + std::to_string(threads) + " clip [" + std::to_string(clip_lo) + ", " +
               std::to_string(clip_hi) + "]");
  const HostTensor x = random_q<TX>(xt, {p.n, p.c, p.h, p.w}, 7 + static_cast<uint32_t>(p.c));
  const HostTensor w =
      random_q<int8_t>(DType::kInt8, {p.m, p.c / p.group, p.kh, p.kw}, 11, -127, 127);
  std::vector<float> wsv;
  std::vector<int32_t> bv;
  for (int64_t i = 0; i < p.m; ++i) {
    wsv.push_back(0.0005f * static_cast<float>(1 + i % 7));
    bv.push_back(static_cast<int32_t>((i * 7919) % 4001) - 2000);
  }
  const HostTensor xs = floats({}, {0.021f}), ws = floats({p.m}, wsv), ys = floats({}, {0.037f});
  const HostTensor xz = xt == DType::kUint8 ? scalar<uint8_t>(xt, static_cast<uint8_t>(xzp))
                                            : scalar<int8_t>(xt, static_cast<int8_t>(xzp));
  const HostTensor wz = testing::make_tensor(DType::kInt8, {p.m}, std::vector<int8_t>(p.m, 0));
  const HostTensor yz = yt == DType::kUint8 ? scalar<uint8_t>(yt, static_cast<uint8_t>(yzp))
                                            : scalar<int8_t>(yt, static_cast<int8_t>(yzp));
  const HostTensor b = testing::make_tensor(DType::kInt32, {p.m}, bv);
  const Attrs attrs = A().i("group", p.group)
                          .is("strides", {p.sy, p.sx})
                          .is("pads", {p.pt, p.pl, p.pb, p.pr})
                          .is("dilations", {p.dil, p.dil})
                          .f("clip_min", clip_lo)
                          .f("clip_max", clip_hi);
  auto got = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b}, attrs, threads);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  int64_t oh = 0, ow = 0;
  const auto sums = ref_int_conv(p, x.data<TX>(), w.data<int8_t>(), xzp, {0}, &oh, &ow);
  const HostTensor& y = (*got)[0];
  ASSERT_EQ(y.shape(), (Shape{p.n, p.m, oh, ow}));
  ASSERT_EQ(y.dtype(), yt);
  const int lo = std::numeric_limits<TY>::min(), hi = std::numeric_limits<TY>::max();
  const int qlo = quantize_ref(clip_lo, 0.037f, yzp, lo, hi);
  const int qhi = quantize_ref(clip_hi, 0.037f, yzp, lo, hi);
  const int64_t plane = oh * ow;
  int mismatches = 0;
  for (size_t i = 0; i < sums.size() && mismatches < 5; ++i) {
    const int64_t m = static_cast<int64_t>(i) / plane % p.m;
    const float mult = 0.021f * wsv[static_cast<size_t>(m)] / 0.037f;
    const float v =
        std::nearbyint(static_cast<float>(sums[i] + bv[static_cast<size_t>(m)]) * mult) +
        static_cast<float>(yzp);
    const int want = std::clamp(static_cast<int>(std::clamp(v, float(lo), float(hi))), qlo, qhi);
    if (int{y.data<TY>()[i]} != want) {
      ++mismatches;
      ADD_FAILURE() << "element " << i << ": " << int{y.data<TY>()[i]} << " != " << want;
    }
  }
}

const Geometry kGeometries[] = {
    {"1x1", {2, 16, 9, 7, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}},
    {"1x1 stride 2", {1, 16, 9, 8, 8, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1}},
    {"3x3 pad 1", {2, 8, 11, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"3x3 stride 2 pad 1", {1, 8, 12, 11, 16, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1}},
    {"7x7 stride 2 pad 3", {1, 3, 30, 28, 8, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1}},
    {"3x3 dilation 2", {1, 4, 10, 10, 6, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2}},
    {"asymmetric pads, stride 3x1", {1, 5, 9, 10, 7, 2, 3, 1, 3, 1, 0, 2, 1, 0, 1}},
    {"groups 2", {2, 8, 7, 9, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1}},
    {"depthwise stride 2", {2, 12, 9, 10, 12, 3, 3, 12, 2, 2, 1, 1, 1, 1, 1}},
    {"depthwise 5x5 dilation 2", {1, 6, 12, 11, 6, 5, 5, 6, 1, 1, 4, 4, 4, 4, 2}},
    // Channels in vector lanes over two images, the last lane group partial.
    {"depthwise 5x5, 20 channels", {2, 20, 7, 7, 20, 5, 5, 20, 1, 1, 2, 2, 2, 2, 1}},
    // Rows wider than a vector, 3x3 stride 1: the row path.
    {"depthwise 3x3, wide rows", {1, 3, 6, 40, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1}},
    // Output rows 28 wide or more: the VNNI depthwise kernel where the CPU has AVX512-VBMI.
    {"depthwise 3x3 stride 2, 30 wide", {2, 5, 9, 60, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1}},
    {"depthwise 5x5, 45 wide", {1, 4, 7, 45, 4, 5, 5, 4, 1, 1, 2, 2, 2, 2, 1}},
    // 289 taps: past what float sums hold exactly, so the int16 stencil runs.
    {"depthwise 17x17", {1, 4, 20, 18, 4, 17, 17, 4, 1, 1, 8, 8, 8, 8, 1}},
    // Small output, many channels: threads split the output channels.
    {"small output, 64 channels", {1, 64, 3, 3, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    // Split at channel 20: not a multiple of the VNNI GEMM's 8-channel blocks.
    {"small output, 40 channels", {1, 16, 4, 4, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    // 1x1 over 13 channels: K not a multiple of the 4 taps a VNNI dot product sums.
    {"1x1, 13 channels", {1, 13, 6, 5, 9, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}},
    // Large output: several tiles per thread.
    {"large output", {1, 4, 70, 66, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    // Work enough for two threads, each padding the input rows its output rows read (halos
    // included) into a copy of its own: stride 1 and 2, two images, a 1x1 whose int8 input is
    // flipped to the VNNI GEMM's uint8, asymmetric pads with dilation.
    {"two parts, 3x3", {1, 16, 40, 38, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"two parts, 3x3 stride 2, two images", {2, 32, 41, 39, 48, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1}},
    {"two parts, 1x1", {1, 52, 40, 40, 64, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}},
    {"two parts, asymmetric pads, dilation 2", {1, 24, 33, 31, 40, 3, 3, 1, 1, 1, 0, 2, 1, 0, 2}},
    // Dot products of 1,024 taps or more over 64 channels or more: the VNNI GEMM with the
    // channels in vector lanes; channel blocks split at 40 (not a block of 16), two parts, and
    // two images whose rows of 13 positions fill no whole vector.
    {"deep, channel blocks in lanes", {1, 128, 9, 9, 80, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"deep, two parts in lanes", {1, 128, 20, 18, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"deep, two images in lanes", {2, 120, 11, 13, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    // 49 and 44 positions: tiles of 6 positions, the last 7 as 4 + 3 and the last 8 as 4 + 4.
    {"deep 7x7 map in lanes", {1, 128, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
    {"deep 4x11 map in lanes", {1, 128, 4, 11, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1}},
};

TEST(QFusedConv, EveryPathMatchesTheInt64ReferenceBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  // Both GEMMs of the dense path where the CPU has VNNI; restored however the test ends.
  VnniRestore restore;
  for (bool vnni : {true, false}) {
    quant::set_vnni_enabled(vnni);
    SCOPED_TRACE(vnni && quant::vnni_available() ? "VNNI GEMM" : "igemm_serial");
    for (const Geometry& p : kGeometries) {
      for (int threads : {1, 2}) {
        check_geometry<uint8_t, uint8_t>(p, DType::kUint8, DType::kUint8, 131, 0, -inf, inf,
                                         threads);
        check_geometry<int8_t, int8_t>(p, DType::kInt8, DType::kInt8, -5, 3, -inf, inf, threads);
      }
      // Fused Relu (a clamp at the zero point) and a Clip, with either output type.
      check_geometry<uint8_t, uint8_t>(p, DType::kUint8, DType::kUint8, 7, 20, 0.0f, inf, 2);
      check_geometry<uint8_t, int8_t>(p, DType::kUint8, DType::kInt8, 200, -10, -0.5f, 1.25f, 2);
    }
  }
}

// Another activation than a clamp (a QDQ HardSwish or LeakyRelu group): the exact sums are
// dequantized, activated in float and quantized. The activation's float rounding may differ from
// the reference formula's by an ulp, so a value may land one step away, rarely.
TEST(QFusedConv, FloatActivationsBetweenDequantizeAndQuantize) {
  const IntConvGeometry p{1, 6, 9, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};  // 3x3, pads 1
  const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 5);
  const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, p.c, p.kh, p.kw}, 6, -127, 127);
  const HostTensor xs = floats({}, {0.02f}), xz = scalar<uint8_t>(DType::kUint8, 120);
  const HostTensor ws = floats({p.m}, {0.001f, 0.002f, 0.0015f, 0.003f, 0.0007f});
  const HostTensor wz = scalar<int8_t>(DType::kInt8, 0);
  const HostTensor ys = floats({}, {0.01f}), yz = scalar<int8_t>(DType::kInt8, -3);
  const float inf = std::numeric_limits<float>::infinity();
  struct Act {
    const char* name;
    float alpha;
    float (*f)(float, float);
  };
  const Act acts[] = {
      {"HardSwish", 0, [](float v, float) { return v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f); }},
      {"LeakyRelu", 0.1f, [](float v, float a) { return v < 0 ? v * a : v; }},
  };
  for (const Act& act : acts) {
    SCOPED_TRACE(act.name);
    const Attrs attrs = A().i("group", 1)
                            .is("pads", {1, 1, 1, 1})
                            .s("activation", act.name)
                            .f("alpha", act.alpha)
                            .f("clip_min", -inf)
                            .f("clip_max", inf);
    auto got = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz}, attrs, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    int64_t oh = 0, ow = 0;
    const auto sums = ref_int_conv(p, x.data<uint8_t>(), w.data<int8_t>(), 120, {0}, &oh, &ow);
    int off_by_one = 0;
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t m = static_cast<int64_t>(i) / (oh * ow);
      const float v = act.f(static_cast<float>(sums[i]) * (0.02f * ws.data<float>()[m]), act.alpha);
      const int want = quantize_ref(v, 0.01f, -3, -128, 127);
      const int gotv = (*got)[0].data<int8_t>()[i];
      ASSERT_LE(std::abs(gotv - want), 1) << "element " << i;
      off_by_one += gotv != want;
    }
    EXPECT_LE(off_by_one, static_cast<int>(sums.size()) / 50);
  }
  auto bad = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz},
                      A().s("activation", "Softmax"), 1);
  EXPECT_FALSE(bad.ok());
}

// A QDQ group's epilogue as QFusedConv's attributes: an activation (or none) with its alpha and
// beta, then a clamp to [lo, hi].
struct EpilogueCase {
  const char* activation;
  float alpha, beta, lo, hi;
};
constexpr float kInf = std::numeric_limits<float>::infinity();
const EpilogueCase kEpilogues[] = {{"HardSwish", 0, 0, -kInf, kInf},
                                   {"HardSigmoid", 0.2f, 0.5f, -kInf, kInf},
                                   {"LeakyRelu", 0.1f, 0, -kInf, kInf},
                                   {"Relu", 0, 0, -kInf, 1.5f},
                                   {"", 0, 0, 0.f, kInf},  // Relu as a clamp: the requantization
                                   {"", 0, 0, -0.75f, 0.5f}};
Attrs epilogue_attrs(const IntConvGeometry& p, const EpilogueCase& c) {
  return A()
      .i("group", p.group)
      .is("strides", {p.sy, p.sx})
      .is("pads", {p.pt, p.pl, p.pb, p.pr})
      .s("activation", c.activation)
      .f("alpha", c.alpha)
      .f("beta", c.beta)
      .f("clip_min", c.lo)
      .f("clip_max", c.hi);
}

// The VNNI GEMM's store computes a float epilogue (dequantize, add a float bias, activate, clamp,
// quantize or store floats) in registers; it must write what the unfused epilogue after
// igemm_serial writes, byte for byte, for every inlined activation, output type, bias type, tile
// edge and channel split.
TEST(QFusedConv, TheVnniStoresFloatEpilogueEqualsTheUnfusedOne) {
  if (!quant::vnni_available()) GTEST_SKIP() << "this CPU has no AVX512-VNNI";
  VnniRestore restore;
  const char* shapes[] = {"1x1", "3x3 stride 2 pad 1", "small output, 40 channels",
                          "1x1, 13 channels", "large output"};
  for (const char* shape : shapes) {
    const Geometry* geometry = nullptr;
    for (const Geometry& g : kGeometries)
      if (std::string(g.name) == shape) geometry = &g;
    ASSERT_NE(geometry, nullptr) << shape;
    const IntConvGeometry& p = geometry->g;
    const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 21);
    const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, p.c, p.kh, p.kw}, 22, -127, 127);
    std::vector<float> wsv, fbv;
    std::vector<int32_t> bv;
    for (int64_t i = 0; i < p.m; ++i) {
      wsv.push_back(0.0004f * static_cast<float>(1 + i % 5));
      bv.push_back(static_cast<int32_t>((i * 613) % 3001) - 1500);
      fbv.push_back(i % 4 == 3 ? 0.f : 0.01f * static_cast<float>(bv.back()) / 1500.f);
    }
    const HostTensor xs = floats({}, {0.019f}), xz = scalar<uint8_t>(DType::kUint8, 117);
    const HostTensor ws = floats({p.m}, wsv), b = testing::make_tensor(DType::kInt32, {p.m}, bv);
    const HostTensor fb = floats({p.m}, fbv);
    const HostTensor wz = scalar<int8_t>(DType::kInt8, 0);
    const HostTensor ys = floats({}, {0.013f});
    const HostTensor yz_u8 = scalar<uint8_t>(DType::kUint8, 9);
    const HostTensor yz_s8 = scalar<int8_t>(DType::kInt8, -4);
    for (const EpilogueCase& act : kEpilogues) {
      const Attrs attrs = epilogue_attrs(p, act);
      for (const HostTensor* yz : {&yz_u8, &yz_s8, static_cast<const HostTensor*>(nullptr)})
        for (const HostTensor* bias : {&b, &fb}) {
          SCOPED_TRACE(std::string(shape) + ", activation '" + act.activation + "', y " +
                       (yz ? dtype_name(yz->dtype()) : "float") + ", bias " +
                       dtype_name(bias->dtype()));
          std::vector<const HostTensor*> in{&x, &xs, &xz, &w, &ws, &wz, yz ? &ys : nullptr,
                                            yz, bias};
          quant::set_vnni_enabled(true);
          auto fused = run_sod2("QFusedConv", in, attrs, 2);
          quant::set_vnni_enabled(false);
          auto unfused = run_sod2("QFusedConv", in, attrs, 2);
          ASSERT_TRUE(fused.ok() && unfused.ok());
          expect_same_bytes((*fused)[0], (*unfused)[0]);
        }
    }
  }
}

// The depthwise path runs its epilogue over ranges of planes straight from its float sums
// (epilogue_float_sums: the VNNI GEMM's store where the CPU has AVX512-VNNI, else its own
// loops); both must write what the per-plane functions write from the exact sums:
// requantize_row, or dequantize_activate_row then quantize_row (or the floats).
TEST(QFusedConv, TheDepthwiseEpilogueEqualsThePerPlaneFunctions) {
  VnniRestore restore;
  for (bool vnni : {true, false}) {
    quant::set_vnni_enabled(vnni);
    SCOPED_TRACE(vnni && quant::vnni_available() ? "VNNI store" : "epilogue loops");
    const IntConvGeometry shapes[] = {
        {2, 20, 7, 7, 20, 5, 5, 20, 1, 1, 2, 2, 2, 2, 1},    // channels in lanes
        {1, 3, 6, 40, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},      // wide rows
        {1, 24, 14, 14, 24, 3, 3, 24, 2, 2, 1, 1, 1, 1, 1},  // stride 2
        {1, 4, 9, 60, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1},      // 30 wide: the VNNI kernel
    };
    for (const IntConvGeometry& p : shapes) {
      const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 31);
      const HostTensor w = random_q<int8_t>(DType::kInt8, {p.m, 1, p.kh, p.kw}, 32, -127, 127);
      std::vector<float> wsv, fbv;
      std::vector<int32_t> bv;
      for (int64_t i = 0; i < p.m; ++i) {
        wsv.push_back(0.003f * static_cast<float>(1 + i % 3));
        bv.push_back(static_cast<int32_t>((i * 211) % 801) - 400);
        fbv.push_back(i % 3 == 1 ? 0.f : 0.002f * static_cast<float>(bv.back()));
      }
      const float x_scale = 0.017f, y_scale = 0.021f;
      const HostTensor xs = floats({}, {x_scale}), xz = scalar<uint8_t>(DType::kUint8, 121);
      const HostTensor ws = floats({p.m}, wsv), wz = scalar<int8_t>(DType::kInt8, 0);
      const HostTensor b = testing::make_tensor(DType::kInt32, {p.m}, bv), fb = floats({p.m}, fbv);
      const HostTensor ys = floats({}, {y_scale});
      const HostTensor yz_u8 = scalar<uint8_t>(DType::kUint8, 7);
      const HostTensor yz_s8 = scalar<int8_t>(DType::kInt8, -9);
      int64_t oh = 0, ow = 0;
      const auto sums = ref_int_conv(p, x.data<uint8_t>(), w.data<int8_t>(), 121, {0}, &oh, &ow);
      const int64_t plane = oh * ow;
      std::vector<int32_t> acc(sums.begin(), sums.end());
      for (const EpilogueCase& act : kEpilogues) {
        Activation a = Activation::kNone;
        if (*act.activation) {
          ASSERT_TRUE(activation_from_name(act.activation, &a));
        }
        const Attrs attrs = epilogue_attrs(p, act);
        for (const HostTensor* yz : {&yz_u8, &yz_s8, static_cast<const HostTensor*>(nullptr)})
          for (const HostTensor* bias : {&b, &fb}) {
            SCOPED_TRACE(std::to_string(p.kh) + "x" + std::to_string(p.kw) + " stride " +
                         std::to_string(p.sx) + ", activation '" + act.activation + "', y " +
                         (yz ? dtype_name(yz->dtype()) : "float") + ", bias " +
                         dtype_name(bias->dtype()));
            auto got = run_sod2(
                "QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, yz ? &ys : nullptr, yz, bias}, attrs, 2);
            ASSERT_TRUE(got.ok()) << got.status().to_string();
            const HostTensor& y = (*got)[0];
            const bool float_bias = bias == &fb;
            const bool requantize = yz && !float_bias && a == Activation::kNone;
            const int32_t zp = yz ? (yz == &yz_u8 ? 7 : -9) : 0;
            std::vector<float> v(static_cast<size_t>(plane));
            for (int64_t pl = 0; pl < p.n * p.m; ++pl) {
              const int64_t ch = pl % p.m;
              const size_t at = static_cast<size_t>(pl * plane);
              const int32_t ib = float_bias ? 0 : bv[static_cast<size_t>(ch)];
              if (requantize) {
                const float mult = x_scale * wsv[static_cast<size_t>(ch)] / y_scale;
                const auto q = [&](float f) {
                  return yz == &yz_u8 ? int{quant::quantize_value<uint8_t>(f, y_scale, zp)}
                                      : int{quant::quantize_value<int8_t>(f, y_scale, zp)};
                };
                std::vector<uint8_t> want(static_cast<size_t>(plane));
                if (yz == &yz_u8)
                  quant::requantize_row(acc.data() + at, plane, ib, mult, zp, q(act.lo), q(act.hi),
                                        want.data());
                else
                  quant::requantize_row(acc.data() + at, plane, ib, mult, zp, q(act.lo), q(act.hi),
                                        reinterpret_cast<int8_t*>(want.data()));
                ASSERT_EQ(0, std::memcmp(want.data(), y.bytes().data() + at, want.size()))
                    << "plane " << pl;
                continue;
              }
              quant::dequantize_activate_row(a, acc.data() + at, plane, ib,
                                             x_scale * wsv[static_cast<size_t>(ch)],
                                             float_bias ? fbv[static_cast<size_t>(ch)] : 0.f,
                                             act.alpha, act.beta, act.lo, act.hi, v.data());
              if (!yz) {
                ASSERT_EQ(0, std::memcmp(v.data(), y.data<float>() + at, v.size() * sizeof(float)))
                    << "plane " << pl;
                continue;
              }
              std::vector<uint8_t> want(static_cast<size_t>(plane));
              if (yz == &yz_u8)
                quant::quantize_row(v.data(), plane, y_scale, zp, want.data());
              else
                quant::quantize_row(v.data(), plane, y_scale, zp,
                                    reinterpret_cast<int8_t*>(want.data()));
              ASSERT_EQ(0, std::memcmp(want.data(), y.bytes().data() + at, want.size()))
                  << "plane " << pl;
            }
          }
      }
    }
  }
}

// A QDQ group that ends in float (no QuantizeLinear: a squeeze-excite's HardSigmoid, a head):
// QFusedConv without y_scale writes act((sums + bias) * x_scale * w_scale) clamped, as float,
// through the dense and the depthwise paths.
TEST(QFusedConv, WithoutYScaleTheOutputIsTheDequantizedActivatedSums) {
  const IntConvGeometry dense{1, 6, 9, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const IntConvGeometry depthwise{2, 5, 9, 8, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1};
  for (const IntConvGeometry& p : {dense, depthwise}) {
    SCOPED_TRACE(p.group == 1 ? "dense" : "depthwise");
    const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 5);
    const HostTensor w =
        random_q<int8_t>(DType::kInt8, {p.m, p.c / p.group, p.kh, p.kw}, 6, -127, 127);
    const HostTensor xs = floats({}, {0.02f}), xz = scalar<uint8_t>(DType::kUint8, 120);
    const HostTensor ws = floats({p.m}, {0.001f, 0.002f, 0.0015f, 0.003f, 0.0007f});
    const HostTensor wz = scalar<int8_t>(DType::kInt8, 0);
    const std::vector<int32_t> bv{-300, 0, 7000, 12, -5};
    const HostTensor b = testing::make_tensor(DType::kInt32, {p.m}, bv);
    const Attrs attrs = A().i("group", p.group)
                            .is("strides", {p.sy, p.sx})
                            .is("pads", {1, 1, 1, 1})
                            .s("activation", "HardSigmoid")
                            .f("alpha", 0.2f)
                            .f("beta", 0.5f)
                            .f("clip_min", 0.1f)
                            .f("clip_max", 0.9f);
    auto got = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, nullptr, nullptr, &b}, attrs, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const HostTensor& y = (*got)[0];
    ASSERT_EQ(y.dtype(), DType::kFloat);
    int64_t oh = 0, ow = 0;
    const auto sums = ref_int_conv(p, x.data<uint8_t>(), w.data<int8_t>(), 120, {0}, &oh, &ow);
    ASSERT_EQ(y.shape(), (Shape{p.n, p.m, oh, ow}));
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t m = static_cast<int64_t>(i) / (oh * ow) % p.m;
      const float v =
          static_cast<float>(sums[i] + bv[static_cast<size_t>(m)]) * (0.02f * ws.data<float>()[m]);
      const float want = std::clamp(std::clamp(0.2f * v + 0.5f, 0.0f, 1.0f), 0.1f, 0.9f);
      ASSERT_NEAR(y.data<float>()[i], want, 1e-6f) << "element " << i;
    }
  }
}

// A QDQ Conv whose bias stayed float (quantisers leave some so): QFusedConv takes the float B and
// adds it after the dequantization, act(sums * x_scale * w_scale + B); QLinearConv's B stays
// int32 only.
TEST(QFusedConv, AFloatBiasIsAddedAfterTheDequantization) {
  const IntConvGeometry dense{1, 6, 9, 8, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  const IntConvGeometry depthwise{2, 5, 9, 8, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1};
  const float inf = std::numeric_limits<float>::infinity();
  for (const IntConvGeometry& p : {dense, depthwise}) {
    SCOPED_TRACE(p.group == 1 ? "dense" : "depthwise");
    const HostTensor x = random_q<uint8_t>(DType::kUint8, {p.n, p.c, p.h, p.w}, 8);
    const HostTensor w =
        random_q<int8_t>(DType::kInt8, {p.m, p.c / p.group, p.kh, p.kw}, 9, -127, 127);
    const HostTensor xs = floats({}, {0.02f}), xz = scalar<uint8_t>(DType::kUint8, 120);
    const HostTensor ws = floats({p.m}, {0.001f, 0.002f, 0.0015f, 0.003f, 0.0007f});
    const HostTensor wz = scalar<int8_t>(DType::kInt8, 0);
    const std::vector<float> bv{-0.3f, 0.f, 1.75f, 0.012f, -5.f};
    const HostTensor b = floats({p.m}, bv);
    const Attrs attrs = A().i("group", p.group)
                            .is("strides", {p.sy, p.sx})
                            .is("pads", {1, 1, 1, 1})
                            .f("clip_min", -inf)
                            .f("clip_max", inf);
    auto got = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, nullptr, nullptr, &b}, attrs, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const HostTensor& y = (*got)[0];
    int64_t oh = 0, ow = 0;
    const auto sums = ref_int_conv(p, x.data<uint8_t>(), w.data<int8_t>(), 120, {0}, &oh, &ow);
    ASSERT_EQ(y.shape(), (Shape{p.n, p.m, oh, ow}));
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t m = static_cast<int64_t>(i) / (oh * ow) % p.m;
      const double want =
          static_cast<double>(sums[i]) * 0.02 * ws.data<float>()[m] + bv[static_cast<size_t>(m)];
      ASSERT_NEAR(y.data<float>()[i], want, 1e-5 * (1 + std::fabs(want))) << "element " << i;
    }
    // Quantized: the same floats, quantized with y_scale.
    const HostTensor ys = floats({}, {0.05f}), yz = scalar<uint8_t>(DType::kUint8, 128);
    auto q = run_sod2("QFusedConv", {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b}, attrs, 2);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    for (size_t i = 0; i < sums.size(); ++i) {
      const int want = quantize_ref(y.data<float>()[i], 0.05f, 128, 0, 255);
      ASSERT_EQ(int{(*q)[0].data<uint8_t>()[i]}, want) << "element " << i;
    }
    auto ql = testing::run_kernel(
        registry(), "QLinearConv", 10, {&x, &xs, &xz, &w, &ws, &wz, &ys, &yz, &b}, 1,
        A().i("group", p.group).is("strides", {p.sy, p.sx}).is("pads", {1, 1, 1, 1}), 1);
    ASSERT_FALSE(ql.ok());
    EXPECT_NE(ql.status().message().find("B must be int32 with"), std::string::npos)
        << ql.status().message();
  }
}

TEST(QFusedConv, ZeroNegativeOrNanScalesAreErrorsNamingTheScale) {
  const HostTensor x = random_q<uint8_t>(DType::kUint8, {1, 2, 4, 4}, 1);
  const HostTensor w = random_q<int8_t>(DType::kInt8, {3, 2, 1, 1}, 2);
  const HostTensor s = floats({}, {0.1f}), z = scalar<uint8_t>(DType::kUint8, 0);
  const HostTensor wz = scalar<int8_t>(DType::kInt8, 0);
  const HostTensor ws_zero = floats({3}, {0.1f, 0.0f, 0.1f});
  auto r = run_sod2("QFusedConv", {&x, &s, &z, &w, &ws_zero, &wz, &s, &z}, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("w_scale[1]"), std::string::npos) << r.status().to_string();
  // Per channel, an infinity or NaN past the first value is found too.
  const HostTensor ws_inf = floats({3}, {0.1f, 0.1f, std::numeric_limits<float>::infinity()});
  const HostTensor ws_nan = floats({3}, {0.1f, std::nanf(""), 0.1f});
  for (auto [bad, name] : {std::pair{&ws_inf, "w_scale[2]"}, std::pair{&ws_nan, "w_scale[1]"}}) {
    auto e = run_sod2("QFusedConv", {&x, &s, &z, &w, bad, &wz, &s, &z}, {}, 1);
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.status().message().find(name), std::string::npos) << e.status().to_string();
  }
  const HostTensor nan = floats({}, {std::nanf("")}), neg = floats({}, {-1.0f});
  const HostTensor ws = floats({3}, {0.1f, 0.1f, 0.1f});
  for (const HostTensor* bad : {&nan, &neg}) {
    auto y = run_sod2("QFusedConv", {&x, &s, &z, &w, &ws, &wz, bad, &z}, {}, 1);
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.status().message().find("y_scale"), std::string::npos) << y.status().to_string();
    auto q = testing::run_kernel(registry(), "QLinearConv", 10, {&x, bad, &z, &w, &ws, &wz, &s, &z},
                                 1, {}, 1);
    ASSERT_FALSE(q.ok());
    EXPECT_NE(q.status().message().find("x_scale"), std::string::npos) << q.status().to_string();
  }
  // A clamp that is not a range.
  auto c = run_sod2("QFusedConv", {&x, &s, &z, &w, &ws, &wz, &s, &z},
                    A().f("clip_min", 2.0f).f("clip_max", 1.0f), 1);
  EXPECT_FALSE(c.ok());
}

template <class TA, class TB, class TY>
void check_qadd(DType at, DType bt, DType yt, int64_t n, float clip_lo, float clip_hi,
                int threads) {
  SCOPED_TRACE(std::string(dtype_name(at)) + "+" + dtype_name(bt) + "->" + dtype_name(yt) + " n " +
               std::to_string(n) + " threads " + std::to_string(threads));
  const HostTensor a = random_q<TA>(at, {n}, 3), b = random_q<TB>(bt, {n}, 4);
  const HostTensor as = floats({}, {0.0173f}), bs = floats({}, {0.0291f}),
                   ys = floats({}, {0.0419f});
  const HostTensor az = at == DType::kUint8 ? scalar<uint8_t>(at, 121) : scalar<int8_t>(at, -7);
  const HostTensor bz = bt == DType::kUint8 ? scalar<uint8_t>(bt, 3) : scalar<int8_t>(bt, 11);
  const HostTensor yz = yt == DType::kUint8 ? scalar<uint8_t>(yt, 9) : scalar<int8_t>(yt, -20);
  auto got = run_sod2("QAdd", {&a, &as, &az, &b, &bs, &bz, &ys, &yz},
                      A().f("clip_min", clip_lo).f("clip_max", clip_hi), threads);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  // The nodes it replaces, one by one.
  auto da = testing::run_kernel(registry(), "DequantizeLinear", 13, {&a, &as, &az}, 1);
  auto db = testing::run_kernel(registry(), "DequantizeLinear", 13, {&b, &bs, &bz}, 1);
  ASSERT_TRUE(da.ok() && db.ok());
  HostTensor sum(DType::kFloat, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    const float v = (*da)[0].data<float>()[i] + (*db)[0].data<float>()[i];
    sum.data<float>()[i] = std::min(std::max(v, clip_lo), clip_hi);
  }
  auto want = testing::run_kernel(registry(), "QuantizeLinear", 13, {&sum, &ys, &yz}, 1);
  ASSERT_TRUE(want.ok());
  ASSERT_EQ((*got)[0].dtype(), yt);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(int{(*got)[0].data<TY>()[i]}, int{(*want)[0].data<TY>()[i]}) << "element " << i;
}

TEST(QAdd, SameBitsAsDequantizeAddClipQuantizeOneByOne) {
  const float inf = std::numeric_limits<float>::infinity();
  // Past the parallel grain (65,536) so that two threads split it.
  for (int threads : {1, 2}) {
    check_qadd<uint8_t, uint8_t, uint8_t>(DType::kUint8, DType::kUint8, DType::kUint8, 140001, 0,
                                          inf, threads);
    check_qadd<int8_t, uint8_t, int8_t>(DType::kInt8, DType::kUint8, DType::kInt8, 1003, -inf, inf,
                                        threads);
    check_qadd<uint8_t, int8_t, uint8_t>(DType::kUint8, DType::kInt8, DType::kUint8, 77, -1.5f,
                                         2.0f, threads);
  }
}

// An infinite scale times a zero difference is NaN, which QuantizeLinear maps to the zero point:
// so must QAdd (before, it wrote whatever the float-to-int conversion of NaN gave, 0).
TEST(QAdd, ANanSumQuantizesToTheZeroPointAsQuantizeLinearDoes) {
  const HostTensor a = testing::make_tensor(DType::kUint8, {3}, std::vector<uint8_t>{5, 5, 6});
  const HostTensor b = testing::make_tensor(DType::kUint8, {3}, std::vector<uint8_t>{1, 2, 3});
  const HostTensor inf = floats({}, {std::numeric_limits<float>::infinity()});
  const HostTensor s = floats({}, {0.5f}), az = scalar<uint8_t>(DType::kUint8, 5);
  const HostTensor z = scalar<uint8_t>(DType::kUint8, 0), yz = scalar<uint8_t>(DType::kUint8, 77);
  auto got = run_sod2("QAdd", {&a, &inf, &az, &b, &s, &z, &s, &yz}, {}, 1);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(int{(*got)[0].data<uint8_t>()[0]}, 77);
  EXPECT_EQ(int{(*got)[0].data<uint8_t>()[1]}, 77);
  EXPECT_EQ(int{(*got)[0].data<uint8_t>()[2]}, 255);  // +inf saturates
}

// Without y_scale and y_zero_point (a join no QuantizeLinear follows: the last block before a
// float head) the result is the clamped float sum, as DequantizeLinear ×2, Add and Relu give it.
TEST(QAdd, WithoutYScaleTheResultIsTheClampedFloatSum) {
  const HostTensor a = random_q<uint8_t>(DType::kUint8, {1000}, 7);
  const HostTensor b = random_q<int8_t>(DType::kInt8, {1000}, 8);
  const HostTensor as = floats({}, {0.0173f}), bs = floats({}, {0.0291f});
  const HostTensor az = scalar<uint8_t>(DType::kUint8, 121), bz = scalar<int8_t>(DType::kInt8, 3);
  auto got =
      run_sod2("QAdd", {&a, &as, &az, &b, &bs, &bz, nullptr, nullptr},
               A().f("clip_min", 0.f).f("clip_max", std::numeric_limits<float>::infinity()), 2);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ((*got)[0].dtype(), DType::kFloat);
  auto da = testing::run_kernel(registry(), "DequantizeLinear", 13, {&a, &as, &az}, 1);
  auto db = testing::run_kernel(registry(), "DequantizeLinear", 13, {&b, &bs, &bz}, 1);
  ASSERT_TRUE(da.ok() && db.ok());
  for (int64_t i = 0; i < 1000; ++i) {
    const float v = (*da)[0].data<float>()[i] + (*db)[0].data<float>()[i];
    ASSERT_EQ((*got)[0].data<float>()[i], std::max(v, 0.f)) << "element " << i;
  }
  // A zero point without its scale is an error.
  const HostTensor yz = scalar<uint8_t>(DType::kUint8, 0);
  auto bad = run_sod2("QAdd", {&a, &as, &az, &b, &bs, &bz, nullptr, &yz}, {}, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("y_zero_point"), std::string::npos);
}

TEST(QAdd, MismatchedShapesAndBadScalesAreErrors) {
  const HostTensor a = random_q<uint8_t>(DType::kUint8, {4, 3}, 1);
  const HostTensor b = random_q<uint8_t>(DType::kUint8, {3, 4}, 2);
  const HostTensor s = floats({}, {0.1f}), z = scalar<uint8_t>(DType::kUint8, 0);
  auto r = run_sod2("QAdd", {&a, &s, &z, &b, &s, &z, &s, &z}, {}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("differ in shape"), std::string::npos);
  const HostTensor zero = floats({}, {0.0f});
  auto y = run_sod2("QAdd", {&a, &s, &z, &a, &s, &z, &zero, &z}, {}, 1);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("y_scale"), std::string::npos);
  const HostTensor z_wrong = floats({}, {0.0f});  // a float zero point
  EXPECT_FALSE(run_sod2("QAdd", {&a, &s, &z_wrong, &a, &s, &z, &s, &z}, {}, 1).ok());
  const HostTensor f = floats({4, 3}, std::vector<float>(12, 1.0f));
  EXPECT_FALSE(run_sod2("QAdd", {&f, &s, &z, &f, &s, &z, &s, &z}, {}, 1).ok());
}

}  // namespace
}  // namespace sod2::rt::linalg_test

namespace sod2::rt::linalg_test {
namespace {

// sod2:QFusedMatMul (a QDQ MatMul/Gemm group): exact int32 sums plus the int32 bias,
// requantized per column, against a plain loop, with B as [K, N] or transposed; and with no
// y_scale, the dequantized, activated float result.
TEST(QFusedMatMul, MatchesTheIntegerReferenceWithBiasPerColumnScalesAndTransposedB) {
  const int64_t batch = 3, m = 5, k = 37, n = 19;
  const HostTensor a = random_q<uint8_t>(DType::kUint8, {batch, m, k}, 21);
  const HostTensor b = random_q<int8_t>(DType::kInt8, {k, n}, 22, -127, 127);
  std::vector<int8_t> bt(static_cast<size_t>(k * n));
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j)
      bt[static_cast<size_t>(j * k + kk)] = b.data<int8_t>()[kk * n + j];
  const HostTensor b_t = testing::make_tensor(DType::kInt8, {n, k}, bt);
  std::vector<float> bsv;
  std::vector<int32_t> biasv;
  for (int64_t j = 0; j < n; ++j) {
    bsv.push_back(0.0004f * static_cast<float>(1 + j % 5));
    biasv.push_back(static_cast<int32_t>(j * 311 % 2001) - 1000);
  }
  const HostTensor as = floats({}, {0.03f}), az = scalar<uint8_t>(DType::kUint8, 117);
  const HostTensor bs = floats({n}, bsv), bz = scalar<int8_t>(DType::kInt8, 0);
  const HostTensor ys = floats({}, {0.05f}), yz = scalar<uint8_t>(DType::kUint8, 9);
  const HostTensor bias = testing::make_tensor(DType::kInt32, {n}, biasv);
  auto sum_at = [&](int64_t row, int64_t j) {
    int64_t s = biasv[static_cast<size_t>(j)];
    for (int64_t kk = 0; kk < k; ++kk)
      s += (int64_t{a.data<uint8_t>()[row * k + kk]} - 117) * b.data<int8_t>()[kk * n + j];
    return s;
  };
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "B transposed" : "B natural");
    const HostTensor& bb = transposed ? b_t : b;
    const Attrs relu = A().i("trans_b", transposed).f("clip_min", 0.0f);
    auto got = run_sod2("QFusedMatMul", {&a, &as, &az, &bb, &bs, &bz, &ys, &yz, &bias}, relu, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    const HostTensor& y = (*got)[0];
    ASSERT_EQ(y.shape(), (Shape{batch, m, n}));
    ASSERT_EQ(y.dtype(), DType::kUint8);
    for (int64_t row = 0; row < batch * m; ++row)
      for (int64_t j = 0; j < n; ++j) {
        const float v = std::nearbyint(static_cast<float>(sum_at(row, j)) *
                                       (0.03f * bsv[static_cast<size_t>(j)] / 0.05f)) +
                        9.0f;
        const int want = std::clamp(static_cast<int>(v), 9, 255);  // Relu: at the zero point
        ASSERT_EQ(int{y.data<uint8_t>()[row * n + j]}, want) << "row " << row << " column " << j;
      }
    // Without y_scale and y_zero_point: float, here through HardSwish.
    const Attrs hs = A().i("trans_b", transposed).s("activation", "HardSwish");
    auto f =
        run_sod2("QFusedMatMul", {&a, &as, &az, &bb, &bs, &bz, nullptr, nullptr, &bias}, hs, 1);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    ASSERT_EQ((*f)[0].dtype(), DType::kFloat);
    for (int64_t row = 0; row < batch * m; ++row)
      for (int64_t j = 0; j < n; ++j) {
        const float v = static_cast<float>(sum_at(row, j)) * (0.03f * bsv[static_cast<size_t>(j)]);
        const float want = v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
        ASSERT_NEAR((*f)[0].data<float>()[row * n + j], want, 1e-5f * (1 + std::fabs(want)));
      }
  }
  // K = 0: every sum is 0, so each output is its requantized bias.
  {
    const HostTensor a0(DType::kUint8, Shape{2, 0});
    const HostTensor b0(DType::kInt8, Shape{0, n});
    auto got = run_sod2("QFusedMatMul", {&a0, &as, &az, &b0, &bs, &bz, &ys, &yz, &bias}, {}, 2);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ((*got)[0].shape(), (Shape{2, n}));
    for (int64_t j = 0; j < n; ++j) {
      const float v = std::nearbyint(static_cast<float>(biasv[static_cast<size_t>(j)]) *
                                     (0.03f * bsv[static_cast<size_t>(j)] / 0.05f)) +
                      9.0f;
      EXPECT_EQ(int{(*got)[0].data<uint8_t>()[n + j]}, std::clamp(static_cast<int>(v), 0, 255));
    }
  }
  // B's zero point must be 0, and A must fit B.
  const HostTensor bz1 = scalar<int8_t>(DType::kInt8, 1);
  EXPECT_FALSE(run_sod2("QFusedMatMul", {&a, &as, &az, &b, &bs, &bz1, &ys, &yz}, {}, 1).ok());
  EXPECT_FALSE(run_sod2("QFusedMatMul", {&a, &as, &az, &b_t, &bs, &bz, &ys, &yz}, {}, 1).ok());
}

}  // namespace
}  // namespace sod2::rt::linalg_test
