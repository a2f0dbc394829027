#include "runtime/kernels/linalg/int8_depthwise_vnni.h"

#include <algorithm>

#include "runtime/kernels/linalg/int8_conv_layout.h"
#include "runtime/kernels/linalg/int8_vnni.h"

#if defined(__x86_64__)
#include "runtime/kernels/linalg/int8_vnni_simd.h"
#define SOD2_VNNI 1
#define SOD2_TARGET_VBMI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi")))
#else
#define SOD2_VNNI 0
#endif

namespace sod2::rt::quant {

namespace {

constexpr int64_t kLanes = 16;    // output positions per vector
constexpr int64_t kMaxRows = 16;  // kernel rows

// Input bytes that n positions of a row read.
int64_t span(const Window2D& g, int64_t n) { return (n - 1) * g.sw + (g.kw - 1) * g.dw + 1; }

#if SOD2_VNNI
using namespace vnni_store;

// A channel's epilogue with its parameters copied into the object: the plane's stores go
// through a void*, after which the compiler would read every parameter again from the shared
// arrays; from a local it need not.
struct LocalEpilogue {
  ChannelEpilogue e;  // its arrays point at the copies below (channel 0)
  int32_t bias = 0;
  float scale = 0, mult = 0, float_bias = 0;
  QuantizedAdd join;
  bool has_join = false;
  LocalEpilogue(const ChannelEpilogue& from, int64_t ch, const QuantizedAdd* j) : e(from) {
    auto copy = [ch](const auto* array, auto* local) {
      if (!array) return decltype(local){nullptr};
      *local = array[ch];
      return local;
    };
    e.bias = copy(from.bias, &bias);
    e.scale = copy(from.scale, &scale);
    e.mult = copy(from.mult, &mult);
    e.float_bias = copy(from.float_bias, &float_bias);
    if (j) join = *j;
    has_join = j != nullptr;
  }
  LocalEpilogue(const LocalEpilogue&) = delete;
  LocalEpilogue& operator=(const LocalEpilogue&) = delete;
};

// kFlip: int8 input, moved up by 128 (vpdpbusd multiplies unsigned bytes), its zero point
// with it.
template <int kQuads, bool kFlip>
SOD2_TARGET_VBMI void plane_vbmi(const VnniDepthwiseWindow& w, const VnniDepthwisePlane& p) {
  const Window2D& g = w.g;
  const int64_t quads = kQuads > 0 ? kQuads : w.quads;
  __m512i perm[VnniDepthwiseWindow::kMaxQuads];
  for (int64_t q = 0; q < quads; ++q) perm[q] = _mm512_load_si512(w.perm[q]);
  const int32_t zero = kFlip ? p.x_zero + 128 : p.x_zero;
  const uint8_t flip = kFlip ? 0x80 : 0;
  const __m512i flip_v = _mm512_set1_epi8(static_cast<char>(flip));
  // Input outside a row loads as the zero point's stored byte (`zero` once flipped); a kernel
  // row outside the input is `zero` throughout.
  const __m512i stored_zero =
      _mm512_set1_epi8(static_cast<char>(static_cast<uint8_t>(zero) ^ flip));
  const __m512i zero_row = _mm512_set1_epi8(static_cast<char>(static_cast<uint8_t>(zero)));
  // Every position reads kh * kw values, padding as `zero`: its sum less zero * tap_sum.
  const __m512i correction = _mm512_set1_epi32(
      static_cast<int32_t>(static_cast<uint32_t>(zero) * static_cast<uint32_t>(p.tap_sum)));
  static const ChannelEpilogue kNone;
  const LocalEpilogue local(p.e ? *p.e : kNone, p.e ? p.channel : 0, p.join);
  const __m512i bias = _mm512_set1_epi32(local.bias);
  // 16 sums of the plane, `count` of them, for its positions [at, at + count): as int32, or
  // through the store.
  auto emit = [&](__m512i acc, int64_t at, int64_t count) SOD2_TARGET_VBMI {
    const __mmask16 mask = static_cast<__mmask16>((1u << count) - 1);
    const __m512i sum = _mm512_sub_epi32(acc, correction);
    if (p.sums)
      _mm512_mask_storeu_epi32(p.sums + at, mask, sum);
    else
      store_row(_mm512_add_epi32(sum, bias), local.e, 0, p.out, p.at + at, mask,
                local.has_join ? &local.join : nullptr, p.residual);
  };
  const auto* x = static_cast<const uint8_t*>(p.x);
  const int64_t row_span = span(g, kLanes);
  const uint8_t* rows[kMaxRows];  // the input row of each kernel row, or null outside
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
      rows[ky] = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
    }
    for (int64_t ox = 0; ox < g.ow; ox += kLanes) {
      // The row's bytes [ix, ix + row_span) inside the input; ix may be negative. Masked-off
      // bytes are not read, nor can they fault.
      const int64_t ix = ox * g.sw - g.pl;
      const __mmask64 inside =
          bit_range(std::max<int64_t>(0, -ix), std::min<int64_t>(row_span, g.iw - ix));
      __m512i acc = _mm512_setzero_si512();
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        __m512i row = zero_row;
        if (rows[ky]) {
          const auto* from = reinterpret_cast<const uint8_t*>(
              reinterpret_cast<uintptr_t>(rows[ky]) + static_cast<uintptr_t>(ix));
          row = _mm512_mask_loadu_epi8(stored_zero, inside, from);
          if constexpr (kFlip) row = _mm512_xor_si512(row, flip_v);
        }
        for (int64_t q = 0; q < quads; ++q)
          acc = dpbusd(acc, _mm512_permutexvar_epi8(perm[q], row),
                       _mm512_set1_epi32(p.taps[ky * quads + q]));
      }
      emit(acc, oy * g.ow + ox, std::min(kLanes, g.ow - ox));
    }
  }
}
#endif

}  // namespace

bool vnni_depthwise_applies(const Window2D& g) {
  // Strides and dilations bounded before span() multiplies them (a crafted model's may be huge).
  return vnni_available() && vbmi_available() && g.kw <= 4 * VnniDepthwiseWindow::kMaxQuads &&
         g.kh <= kMaxRows && g.sw >= 1 && g.sw <= 64 && g.dw >= 1 && g.dw <= 64 &&
         span(g, kLanes) <= 64 && g.oh > 0 && g.ow >= 28;
}

VnniDepthwiseWindow vnni_depthwise_window(const Window2D& g) {
  VnniDepthwiseWindow w;
  w.g = g;
  w.quads = (g.kw + 3) / 4;
  // Quad q: lane i's four bytes are the inputs of taps 4q..4q+3 for position i (a tap past the
  // row's last reads byte 0, times a zero tap).
  for (int64_t q = 0; q < w.quads; ++q)
    for (int64_t i = 0; i < kLanes; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t kx = 4 * q + j;
        w.perm[q][4 * i + j] = static_cast<uint8_t>(kx < g.kw ? i * g.sw + kx * g.dw : 0);
      }
  return w;
}

int64_t vnni_depthwise_tap_words(const Window2D& g) { return g.kh * ((g.kw + 3) / 4); }

void vnni_depthwise_pack_taps(const Window2D& g, const int8_t* taps, int32_t* out) {
  const int64_t quads = (g.kw + 3) / 4;
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t q = 0; q < quads; ++q) {
      uint32_t word = 0;
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t kx = 4 * q + j;
        const uint8_t t = kx < g.kw ? static_cast<uint8_t>(taps[ky * g.kw + kx]) : 0;
        word |= uint32_t{t} << (8 * j);
      }
      out[ky * quads + q] = static_cast<int32_t>(word);
    }
}

void vnni_depthwise_plane(const VnniDepthwiseWindow& w, const VnniDepthwisePlane& p) {
#if SOD2_VNNI
  const bool flip = p.x_signed;
  switch (w.quads) {
    case 1: flip ? plane_vbmi<1, true>(w, p) : plane_vbmi<1, false>(w, p); break;
    case 2: flip ? plane_vbmi<2, true>(w, p) : plane_vbmi<2, false>(w, p); break;
    default: flip ? plane_vbmi<0, true>(w, p) : plane_vbmi<0, false>(w, p); break;
  }
#else
  (void)w, (void)p;
#endif
}

}  // namespace sod2::rt::quant
