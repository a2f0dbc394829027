// The quantized convolutions' own int8 GEMM for x86-64 CPUs with AVX512-VNNI, exact in int32:
//
//   c[i * ldc + j] = sum over kk < k of w[i][kk] * (x[kk][j] - x_zero)      (modulo 2^32)
//
// W (int8, a row per output channel) is packed once (constant weights stay packed for the
// session), X (uint8 activations: an im2col tile or a 1x1 convolution's input, a row per tap) is
// packed per tile into the layout vpdpbusd reads: four taps of one position side by side. The
// zero point comes out through each row's weight sum, so padding holding x_zero adds nothing.
// Unlike a library GEMM, nothing is repacked per call: oneDNN's s8s8s32 GEMM packs both operands
// on every call, which cost as much as the multiply-adds on a ResNet's 3x3 convolutions.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/linalg/qdq_epilogue.h"

namespace sod2::rt::quant {

// AVX512-VNNI (with AVX512-BW) on this CPU and not turned off: the convolutions use vnni_gemm.
bool vnni_available();
// AVX512-VBMI (vpermb) with AVX512-BW on this CPU, whatever set_vnni_enabled says.
bool vbmi_available();
// Turns the VNNI path off (or back on, where the CPU has it), for every kernel of the process:
// lets tests and benchmarks run the other path on a machine with VNNI.
void set_vnni_enabled(bool enabled);

constexpr int64_t kVnniRows = 8;   // output channels per micro-tile
constexpr int64_t kVnniCols = 16;  // positions per vector

struct VnniWeights {
  int64_t m = 0, k = 0;
  int64_t quads = 0;              // k rounded up to a multiple of 4, over 4
  std::vector<int8_t> data;       // [m / 8 blocks][quads][8 rows][4], zero past m and k
  std::vector<int32_t> row_sums;  // sum of each row's weights
  const void* source = nullptr;   // the weights it was packed from (a cache's key)
  // For vnni_gemm_lanes_requant, where vnni_pack_lanes filled it: [quads][mp][4], mp = m
  // rounded up to 16, zero past m.
  int64_t mp = 0;
  std::vector<int8_t> lanes;
};
// W rows of k int8 weights at stride ldw.
void vnni_pack_weights(const int8_t* w, int64_t m, int64_t k, int64_t ldw, VnniWeights* out);
// Fills w->lanes from w->data.
void vnni_pack_lanes(VnniWeights* w);

// Bytes vnni_pack_activations writes for k rows of n positions.
int64_t vnni_packed_columns(int64_t n);  // n rounded up to a multiple of kVnniCols
int64_t vnni_packed_bytes(int64_t k, int64_t n);
// X's k rows of n uint8 values (row r at x + r * ldx) into out, zero-filled past k and n.
void vnni_pack_activations(const uint8_t* x, int64_t ldx, int64_t k, int64_t n, uint8_t* out);

// An im2col tile packed straight from the input, without the tile itself: row r's positions
// [t, t + count) of each run are row_base[r] + offset + [0, count). Reads up to 31 bytes past each
// run and writes up to 128 bytes past vnni_packed_bytes(k, n): callers leave that slack.
struct VnniRun {
  int64_t t = 0, offset = 0, count = 0;
};
void vnni_pack_runs(const uint8_t* const* row_base, int64_t k, const VnniRun* runs, int64_t nruns,
                    int64_t n, uint8_t* out);

// Rows [m0, m1) of C (row i at c + (i - m0) * ldc), n columns, from packed operands.
void vnni_gemm(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x, int64_t n,
               int32_t x_zero, int32_t* c, int64_t ldc);

// vnni_gemm whose store finishes each row's sums as e says (qdq_epilogue.h's ChannelEpilogue, its
// arrays indexed by the GEMM's row i), row i at out + (i - m0) * ldo, without the sums leaving the
// registers:
//   - the requantization (QLinearConv's arithmetic, quantize.h),
//     clamp(round_half_even(float(sum + bias[i]) * mult[i]) + zp, lo, hi) as 8 bits;
//   - or, where e.float_epilogue, a QDQ group's float epilogue: dequantize_activate_row and then
//     quantize_row's operations, (sum + bias[i]) * scale[i] (+ float_bias[i]), the activation (one
//     of inline_activation's), a clamp to [clip_lo, clip_hi], quantized with y_scale and zp, or
//     stored as floats for a kFloat out_type. The same operations in the same order (with the
//     fused multiply-adds the AVX-512 build of dequantize_activate_row has), so the bytes equal
//     the unfused path's: a row of a few dozen sums no longer pays two calls per row.
// With a join, each 8-bit result then goes through QuantizedAdd (qdq_epilogue.h) with the
// residual's byte at the same element offset, as sod2:QAdd would after the store: a residual
// block's sum without its convolution's result ever reaching memory.
struct VnniRequant {
  ChannelEpilogue e;
  void* out = nullptr;  // 8-bit values (the bytes are the same once clamped), or floats
  int64_t ldo = 0;      // in elements
  const QuantizedAdd* join = nullptr;  // 8-bit results only
  const void* residual = nullptr;      // its b, laid out as out
};
void vnni_gemm_requant(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x,
                       int64_t n, int32_t x_zero, const VnniRequant& q);

// vnni_gemm_requant's product and store with the output channels in vector lanes (w.lanes): per
// tile, 4 vectors of 16 channels times 6 positions' quads, each broadcast. Where k is deep this
// loads less per multiply-add, and no lanes are wasted on an n that 16 does not divide (a 7x7
// map's 49 positions take 64 lanes the other way). The sums pass through `stage`
// (vnni_lanes_stage_ints of them), then each channel's 16 positions at a time through the same
// store, so the bytes are vnni_gemm_requant's.
int64_t vnni_lanes_stage_ints(int64_t m0, int64_t m1, int64_t n);
void vnni_gemm_lanes_requant(const VnniWeights& w, int64_t m0, int64_t m1, const uint8_t* packed_x,
                             int64_t n, int32_t x_zero, const VnniRequant& q, int32_t* stage);

// The same store for n sums of channel `row` held as exact integer floats (below 2^24: the
// depthwise path's), written from out on (elements of e.out_type).
void vnni_finish_float_sums(const ChannelEpilogue& e, int64_t row, const float* sums, int64_t n,
                            void* out);
// The same for `count` positions of `channels` (<= 16) channels held in vector lanes:
// lanes[p * 16 + l] the sum of channel row0 + l at position p, whose output is at element
// at + l * plane + p of out.
void vnni_finish_float_lanes(const ChannelEpilogue& e, int64_t row0, int channels,
                             const float* lanes, int64_t count, int64_t plane, int64_t at,
                             void* out);

}  // namespace sod2::rt::quant
