// The int8 depthwise convolution on x86-64 CPUs with AVX512-VNNI and AVX512-VBMI, exact in int32,
// one channel's plane at a time straight from its 8-bit input:
//
//   sum[oy][ox] = sum over taps of tap[ky][kx] * (x[iy][ix] - x_zero)      (modulo 2^32)
//
// Each vector holds 16 output positions of a row. Per kernel row, one masked 64-byte load holds
// every input they read (positions outside the input load as x_zero, so padding adds nothing), a
// byte permutation (vpermb) lays out four taps' inputs per position, and vpdpbusd multiplies
// them by four taps at once. No padded copy, no widening, no conversion to float: the input is
// read once, a byte per value. Used for output rows at least 28 wide: on narrower ones the float
// depthwise kernel with channels in vector lanes is as fast or faster (measured on MobileNetV3's
// 14- and 7-wide layers), as a row's vector goes partly unused there.
#pragma once

#include <cstdint>

#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/qdq_epilogue.h"

namespace sod2::rt::quant {

// The CPU has the instructions (and the VNNI paths are not turned off: set_vnni_enabled) and the
// window fits: 16 positions of a row and their taps within 64 input bytes, at most 16 taps a row
// and 16 rows, output rows at least 28 wide.
bool vnni_depthwise_applies(const Window2D& g);

// What every plane of one convolution shares: the geometry and the byte permutations.
struct VnniDepthwiseWindow {
  static constexpr int64_t kMaxQuads = 4;
  Window2D g{};
  int64_t quads = 0;  // taps per kernel row, rounded up to 4, over 4
  alignas(64) uint8_t perm[kMaxQuads][64] = {};
};
// Where vnni_depthwise_applies(g).
VnniDepthwiseWindow vnni_depthwise_window(const Window2D& g);

// A channel's kh * kw taps (row-major, each the weight minus its zero point, in [-128, 127]) as
// the kernel reads them: vnni_depthwise_tap_words(g) int32s, four taps to a word.
int64_t vnni_depthwise_tap_words(const Window2D& g);
void vnni_depthwise_pack_taps(const Window2D& g, const int8_t* taps, int32_t* out);

// One (image, channel) plane.
struct VnniDepthwisePlane {
  const void* x = nullptr;  // ih * iw values
  bool x_signed = false;    // int8, else uint8
  int32_t x_zero = 0;
  const int32_t* taps = nullptr;  // vnni_depthwise_pack_taps'
  int32_t tap_sum = 0;            // the sum of the channel's taps
  // The sums (oh * ow int32) where `sums` is set; else finished through e's store for output
  // channel `channel` (int8_vnni_simd.h's: the bytes quantize.h's row functions write) at
  // element `at` of `out`, with e's join over the residual at the same element.
  int32_t* sums = nullptr;
  const ChannelEpilogue* e = nullptr;
  int64_t channel = 0;
  void* out = nullptr;
  int64_t at = 0;
  const QuantizedAdd* join = nullptr;
  const void* residual = nullptr;
};
void vnni_depthwise_plane(const VnniDepthwiseWindow& w, const VnniDepthwisePlane& p);

}  // namespace sod2::rt::quant
