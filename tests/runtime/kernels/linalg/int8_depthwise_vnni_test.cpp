// The int8 depthwise convolution on AVX512-VNNI/VBMI (int8_depthwise_vnni.h): its int32 sums,
// through ConvInteger, against the definition on every edge it handles (row borders within and
// outside a vector, strides, dilations, asymmetric pads, more than one quad of taps a row, int8
// and uint8 input, weight zero points), with the VNNI paths on and off, on one and two threads.
// Its store (the requantization, the float epilogue, the join) runs in quantized_fused_test.cpp's
// and quantized_join_test.cpp's wide depthwise cases. On a CPU without the instructions both
// runs take the other paths, and the test still checks them.
#include <string>
#include <vector>

#include "runtime/kernels/linalg/int8_vnni.h"
#include "tests/runtime/kernels/linalg/int_conv_reference.h"
#include "tests/runtime/kernels/linalg/quantized_test_util.h"

namespace sod2::rt::linalg_test {
namespace {

using Case = NamedIntConvGeometry;

// Depthwise (group = channels), output rows 28 wide or more (the kernel's range).
const Case kCases[] = {
    {"3x3 stride 2, 30 wide", {2, 5, 9, 60, 5, 3, 3, 5, 2, 2, 1, 1, 1, 1, 1}},
    {"5x5, 45 wide: a partial last vector", {1, 4, 7, 45, 4, 5, 5, 4, 1, 1, 2, 2, 2, 2, 1}},
    {"7x7 dilation 2: two quads a row", {1, 3, 16, 40, 3, 7, 7, 3, 1, 1, 6, 6, 6, 6, 2}},
    {"3x9, asymmetric pads: three quads", {1, 3, 6, 33, 3, 3, 9, 3, 1, 1, 0, 4, 2, 3, 1}},
    {"1x5 stride 2 over one row", {1, 4, 1, 70, 4, 1, 5, 4, 1, 2, 0, 2, 0, 2, 1}},
    {"3x3 without padding, 112 wide", {1, 2, 5, 114, 2, 3, 3, 2, 1, 1, 0, 0, 0, 0, 1}},
    // Pads wider than the kernel and the input: output rows and whole vectors in padding.
    {"pads past the input", {1, 2, 3, 30, 2, 3, 3, 2, 1, 1, 5, 40, 5, 40, 1}},
};

template <class TX, class TW>
void check_sums(const Case& c, DType xt, int xzp, DType wt, const std::vector<int>& wzp,
                int threads) {
  const IntConvGeometry& p = c.g;
  SCOPED_TRACE(std::string(c.name) + ", x " + dtype_name(xt) + ", w " + dtype_name(wt) +
               ", threads " + std::to_string(threads));
  const HostTensor x = random_q<TX>(xt, {p.n, p.c, p.h, p.w}, 41 + static_cast<uint32_t>(p.w));
  const HostTensor w = random_q<TW>(wt, {p.m, 1, p.kh, p.kw}, 43, -128, 255);
  const HostTensor xz = testing::make_tensor(xt, Shape{}, std::vector<TX>{static_cast<TX>(xzp)});
  std::vector<TW> wz_values;
  for (int v : wzp) wz_values.push_back(static_cast<TW>(v));
  const HostTensor wz = testing::make_tensor(wt, Shape{p.m}, wz_values);
  const Attrs attrs = A().i("group", p.group)
                          .is("strides", {p.sy, p.sx})
                          .is("pads", {p.pt, p.pl, p.pb, p.pr})
                          .is("dilations", {p.dil, p.dil});
  auto got =
      testing::run_kernel(registry(), "ConvInteger", 10, {&x, &w, &xz, &wz}, 1, attrs, threads);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  int64_t oh = 0, ow = 0;
  const auto want = ref_int_conv(p, x.data<TX>(), w.data<TW>(), xzp, wzp, &oh, &ow);
  const HostTensor& y = (*got)[0];
  ASSERT_EQ(y.shape(), (Shape{p.n, p.m, oh, ow}));
  int mismatches = 0;
  for (size_t i = 0; i < want.size() && mismatches < 5; ++i) {
    if (y.data<int32_t>()[i] == static_cast<int32_t>(want[i])) continue;
    ++mismatches;
    ADD_FAILURE() << "element " << i << ": " << y.data<int32_t>()[i] << " != " << want[i];
  }
}

TEST(VnniDepthwise, SumsMatchTheDefinitionOnEveryEdge) {
  VnniRestore restore;
  for (bool vnni : {true, false}) {
    quant::set_vnni_enabled(vnni);
    SCOPED_TRACE(vnni && quant::vnni_available() ? "VNNI paths" : "other paths");
    for (const Case& c : kCases) {
      const std::vector<int> zero(static_cast<size_t>(c.g.m), 0);
      for (int threads : {1, 2}) {
        check_sums<uint8_t, int8_t>(c, DType::kUint8, 131, DType::kInt8, zero, threads);
        check_sums<int8_t, int8_t>(c, DType::kInt8, -5, DType::kInt8, zero, threads);
      }
      // Input at its extremes' zero points: 0 and 255 (uint8), -128 and 127 (int8).
      check_sums<uint8_t, int8_t>(c, DType::kUint8, 255, DType::kInt8, zero, 2);
      check_sums<int8_t, int8_t>(c, DType::kInt8, -128, DType::kInt8, zero, 2);
      // uint8 weights around per-channel zero points: each centred tap fits in int8 where the
      // zero point is 128 (the kernel's taps); with 0 some do not, and the other paths run.
      std::vector<int> centred, uncentred;
      for (int64_t m = 0; m < c.g.m; ++m) {
        centred.push_back(128 - static_cast<int>(m % 2));
        uncentred.push_back(m == 0 ? 0 : 128);
      }
      check_sums<uint8_t, uint8_t>(c, DType::kUint8, 7, DType::kUint8, centred, 2);
      check_sums<uint8_t, uint8_t>(c, DType::kUint8, 7, DType::kUint8, uncentred, 2);
    }
  }
}

}  // namespace
}  // namespace sod2::rt::linalg_test
