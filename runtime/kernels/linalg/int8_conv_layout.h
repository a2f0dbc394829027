// The input layouts of the integer convolutions (qlinear_conv.cpp): for the dense path, the
// padded, stride-phase-split copy of an image's input and the runs an im2col tile (or the VNNI
// GEMM's packing) reads from it; for the depthwise int16 stencil, each channel's centred, padded,
// phase-split planes and the stencil over them.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt::quant {

constexpr int64_t kCopyChunk = 16;  // im2col copies runs in chunks of this many bytes

// Bits [lo, hi) of a 64-bit mask (0 <= lo, hi <= 64): the bytes of a 64-byte vector that fall
// inside a row, for the masked loads and stores of the AVX-512 kernels.
inline uint64_t bit_range(int64_t lo, int64_t hi) {
  if (hi <= lo) return 0;
  const uint64_t below_hi = hi >= 64 ? ~uint64_t{0} : (uint64_t{1} << hi) - 1;
  return below_hi & ~((uint64_t{1} << lo) - 1);
}

// Where each stride phase of an input row lands: input column j0 + i * s goes to phase index
// first + i, for i < count. The same for every row: computed once per call (divisions are slow
// in a per-row loop).
struct PhaseRun {
  int64_t j0 = 0, first = 0, count = 0;
};
inline PhaseRun phase_run(int64_t phase, int64_t x0, int64_t w, int64_t s) {
  PhaseRun r;
  r.j0 = ((phase - x0) % s + s) % s;
  r.first = (x0 + r.j0) / s;
  r.count = r.j0 < w ? (w - r.j0 + s - 1) / s : 0;
  return r;
}
constexpr int64_t kMaxCachedPhases = 16;  // wider strides compute their runs per row

// A run of output positions within one output row: where it starts in the tile and in the
// output, and how long it is.
struct Segment {
  int64_t t, ox, oy, oz, run;
};
inline int64_t max_segments(const Window3& g, int64_t tile) { return tile / g.out[2] + 2; }
// The tile [p0, p0 + width) cut at output-row boundaries; returns how many segments.
inline int64_t segments(const Window3& g, int64_t p0, int64_t width, Segment* out) {
  int64_t count = 0;
  for (int64_t t = 0, pos = p0; t < width;) {
    const int64_t ox = pos % g.out[2], oy = (pos / g.out[2]) % g.out[1],
                  oz = pos / (g.out[2] * g.out[1]);
    const int64_t run = std::min(g.out[2] - ox, width - t);
    out[count++] = {t, ox, oy, oz, run};
    t += run;
    pos += run;
  }
  return count;
}

// One image and group's input as int8 (uint8 flipped, int8_gemm.h), padded with the (flipped)
// zero point on every side the window reaches, and each padded row split into its `s` stride
// phases: padded column px lands in phase px % s at index px / s. A tap's slice of an output
// row is then one contiguous run, with no bounds to check.
struct Padded {
  int64_t pz = 1, py = 1, px = 1;  // padded extents
  int64_t s = 1, wp = 1;           // stride along x and the length of a phase row
  int64_t row_bytes() const { return s * wp; }
  int64_t channel_bytes() const { return pz * py * row_bytes(); }
  const int8_t* at(const int8_t* base, int64_t ch, int64_t z, int64_t y, int64_t phase) const {
    return base + ((ch * pz + z) * py + y) * row_bytes() + phase * wp;
  }
};
inline Padded padded_layout(const Window3& g) {
  Padded p;
  // Extents cover the last window reached: (out - 1) * stride + (k - 1) * dil + 1.
  int64_t ext[3];
  for (int i = 0; i < 3; ++i)
    ext[i] = std::max(g.pad_begin[i] + g.in[i],
                      (g.out[i] - 1) * g.stride[i] + (g.k[i] - 1) * g.dil[i] + 1);
  p.pz = ext[0];
  p.py = ext[1];
  p.px = ext[2];
  p.s = g.stride[2];
  // Each phase holds a chunked copy's overrun too (kCopyChunk).
  p.wp = (p.px + p.s - 1) / p.s + kCopyChunk;
  return p;
}
// The padded rows from r0 on (a row: one (channel, z, y)), each next() the element offset in the
// input of the next one's input row, or -1 for a row of padding: (ch, z, y) of row r0, then
// stepped, with no divisions per row. The extents are copied in, so stores through int8_t* (which
// may alias anything) do not make the compiler read them again.
class PaddedRowWalk {
 public:
  PaddedRowWalk(const Window3& g, const Padded& p, int64_t r0)
      : py_(p.py),
        pz_(p.pz),
        top_(g.pad_begin[1]),
        front_(g.pad_begin[0]),
        ih_(g.in[1]),
        id_(g.in[0]),
        iw_(g.in[2]),
        y_(r0 % p.py),
        z_(r0 / p.py % p.pz),
        ch_(r0 / (p.py * p.pz)) {}
  int64_t next() {
    if (y_ == py_) {
      y_ = 0;
      if (++z_ == pz_) {
        z_ = 0;
        ++ch_;
      }
    }
    const int64_t iy = y_++ - top_, iz = z_ - front_;
    if (iy < 0 || iy >= ih_ || iz < 0 || iz >= id_) return -1;
    return ((ch_ * id_ + iz) * ih_ + iy) * iw_;
  }

 private:
  int64_t py_, pz_, top_, front_, ih_, id_, iw_;
  int64_t y_, z_, ch_;
};

// Rows [r0, r1) of the padded input (a row: one (channel, z, y)).
// Values are stored xor kFlip: 0x80 turns uint8 into int8 or back (v ^ 0x80 = v -/+ 128).
template <class T, uint8_t kFlip>
inline void pad_rows(const Window3& g, const Padded& p, const T* x, int8_t pad, int64_t r0,
                     int64_t r1, int8_t* out) {
  PhaseRun runs[kMaxCachedPhases];
  for (int64_t ph = 0; ph < p.s && ph < kMaxCachedPhases; ++ph)
    runs[ph] = phase_run(ph, g.pad_begin[2], g.in[2], p.s);
  PaddedRowWalk walk(g, p, r0);
  for (int64_t r = r0; r < r1; ++r) {
    int8_t* dst = out + r * p.row_bytes();
    const int64_t at = walk.next();
    std::memset(dst, pad, static_cast<size_t>(p.row_bytes()));
    if (at < 0) continue;
    const T* __restrict src = x + at;
    const int64_t x0 = g.pad_begin[2];
    // Locals: stores through int8_t* may alias anything, g included.
    const int64_t w = g.in[2], s = p.s, wp = p.wp;
    if (s == 1) {
      int8_t* __restrict d = dst + x0;
      for (int64_t j = 0; j < w; ++j)
        d[j] = static_cast<int8_t>(static_cast<uint8_t>(src[j]) ^ kFlip);
      continue;
    }
    // Phase by phase: padded column px = x0 + j lands at dst[(px % s) * wp + px / s].
    if (s == 2) {  // the common stride as a constant, which the compiler vectorises
      for (int64_t phase = 0; phase < 2; ++phase) {
        const PhaseRun run = runs[phase];
        int8_t* __restrict d = dst + phase * wp + run.first;
        const T* __restrict from = src + run.j0;
        for (int64_t i = 0; i < run.count; ++i)
          d[i] = static_cast<int8_t>(static_cast<uint8_t>(from[2 * i]) ^ kFlip);
      }
      continue;
    }
    for (int64_t phase = 0; phase < s; ++phase) {
      const PhaseRun run = phase < kMaxCachedPhases ? runs[phase] : phase_run(phase, x0, w, s);
      int8_t* __restrict d = dst + phase * wp + run.first;
      const T* __restrict from = src + run.j0;
      for (int64_t i = 0; i < run.count; ++i)
        d[i] = static_cast<int8_t>(static_cast<uint8_t>(from[i * s]) ^ kFlip);
    }
  }
}

// pad_rows on AVX-512 vectors (int8_pad_rows.cpp), for stride 1: the same bytes, 8-bit input
// x of either type stored xor `flip`. Where may_overrun, a row's last store may write up to 63
// bytes past it (the rows after are the caller's to rewrite or ignore, and the buffer has that
// slack). Returns false, having written nothing, where it does not apply.
bool pad_rows_vector(const Window3& g, const Padded& p, const void* x, uint8_t flip, int8_t pad,
                     int64_t r0, int64_t r1, int8_t* out, bool may_overrun);

// im2col of a tile's segments into col[rows][width] from the padded input: per tap and
// segment, one run copied in 8-byte chunks (inlined moves; the overrun lands where the next
// segment or row writes, or in the buffers' slack).
inline void im2col(const Window3& g, const Padded& p, const int8_t* xp, int64_t cg,
                   const Segment* segs, int64_t nsegs, int64_t width, int8_t* col) {
  int64_t row = 0;
  for (int64_t ch = 0; ch < cg; ++ch)
    for (int64_t kz = 0; kz < g.k[0]; ++kz)
      for (int64_t ky = 0; ky < g.k[1]; ++ky)
        for (int64_t kx = 0; kx < g.k[2]; ++kx, ++row) {
          int8_t* dst = col + row * width;
          const int64_t off = kx * g.dil[2];  // padded column = ox * s + off
          const int64_t phase = off % p.s, q = off / p.s;
          for (int64_t i = 0; i < nsegs; ++i) {
            const Segment& sg = segs[i];
            const int8_t* src = p.at(xp, ch, sg.oz * g.stride[0] + kz * g.dil[0],
                                     sg.oy * g.stride[1] + ky * g.dil[1], phase) +
                                sg.ox + q;
            int8_t* d = dst + sg.t;
            for (int64_t j = 0; j < sg.run; j += kCopyChunk)
              std::memcpy(d + j, src + j, kCopyChunk);
          }
        }
}

// Where each im2col row (channel, tap) reads output position 0 from, in the padded input.
inline void tap_bases(const Window3& g, const Padded& p, const int8_t* xp, int64_t cg,
                      const uint8_t** out) {
  int64_t row = 0;
  for (int64_t ch = 0; ch < cg; ++ch)
    for (int64_t kz = 0; kz < g.k[0]; ++kz)
      for (int64_t ky = 0; ky < g.k[1]; ++ky)
        for (int64_t kx = 0; kx < g.k[2]; ++kx, ++row) {
          const int64_t off = kx * g.dil[2];  // padded column = ox * s + off
          out[row] = reinterpret_cast<const uint8_t*>(
              p.at(xp, ch, kz * g.dil[0], ky * g.dil[1], off % p.s) + off / p.s);
        }
}

inline bool pointwise(const Window3& g) {
  for (int i = 0; i < 3; ++i)
    if (g.k[i] != 1 || g.stride[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
  return true;
}

// A 1x1 conv without padding that steps over its input (ResNet's downsample).
inline bool strided_pointwise(const Window3& g) {
  bool strided = false;
  for (int i = 0; i < 3; ++i) {
    if (g.k[i] != 1 || g.pad_begin[i] != 0 || g.pad_end[i] != 0) return false;
    strided = strided || g.stride[i] != 1;
  }
  return strided;
}

// A depthwise channel's layout: centred int16 input, padded, split into its y and x stride
// phases as separate 2-D planes of pitch wp, so that for every tap the whole output (at pitch
// wp) is one flat multiply-add over one plane. Columns from ow to wp are computed and dropped:
// one long loop beats many row-long ones.
struct DwLayout {
  int64_t sy = 1, sx = 1, hp = 1, wp = 1, pz = 1;
  int64_t plane() const { return hp * wp; }
  int64_t elements() const { return pz * sy * sx * plane(); }
};
inline DwLayout dw_layout(const Window3& g) {
  DwLayout l;
  l.sy = g.stride[1];
  l.sx = g.stride[2];
  l.pz = std::max(g.pad_begin[0] + g.in[0],
                  (g.out[0] - 1) * g.stride[0] + (g.k[0] - 1) * g.dil[0] + 1);
  const int64_t qy = (g.k[1] - 1) * g.dil[1] / l.sy, qx = (g.k[2] - 1) * g.dil[2] / l.sx;
  const int64_t py = g.pad_begin[1] + g.in[1], px = g.pad_begin[2] + g.in[2];
  l.hp = std::max(g.out[1] + qy, (py + l.sy - 1) / l.sy) + 1;
  l.wp = std::max(g.out[2] + qx, (px + l.sx - 1) / l.sx) + 1;
  return l;
}
template <class T>
SOD2_SIMD_INLINE void dw_plane(const Window3& g, const DwLayout& l, const T* x, int32_t zp,
                               int16_t* out) {
  std::fill(out, out + l.elements(), int16_t{0});
  const int64_t w = g.in[2], sx = l.sx, x0 = g.pad_begin[2];
  PhaseRun runs[kMaxCachedPhases];
  for (int64_t ph = 0; ph < sx && ph < kMaxCachedPhases; ++ph) runs[ph] = phase_run(ph, x0, w, sx);
  for (int64_t iz = 0; iz < g.in[0]; ++iz)
    for (int64_t iy = 0; iy < g.in[1]; ++iy) {
      const int64_t z = iz + g.pad_begin[0], yy = iy + g.pad_begin[1];
      const T* __restrict src = x + (iz * g.in[1] + iy) * w;
      int16_t* row = out + (z * l.sy + yy % l.sy) * sx * l.plane() + (yy / l.sy) * l.wp;
      for (int64_t phase = 0; phase < sx; ++phase) {
        const PhaseRun r = phase < kMaxCachedPhases ? runs[phase] : phase_run(phase, x0, w, sx);
        int16_t* __restrict d = row + phase * l.plane() + r.first;
        const T* __restrict from = src + r.j0;
        if (sx == 1) {
          for (int64_t i = 0; i < r.count; ++i)
            d[i] = static_cast<int16_t>(static_cast<int32_t>(from[i]) - zp);
        } else {
          for (int64_t i = 0; i < r.count; ++i)
            d[i] = static_cast<int16_t>(static_cast<int32_t>(from[i * sx]) - zp);
        }
      }
    }
}

// One channel's sums into acc (out_size values, dense).
template <class T>
SOD2_SIMD_INLINE void depthwise_body(const Window3& g, const DwLayout& l, const T* x, int32_t zp,
                                     const int16_t* taps, int16_t* plane, int32_t* acc) {
  dw_plane(g, l, x, zp, plane);
  const int64_t slice = g.out[1] * l.wp;  // one output z-slice at pitch wp
  std::fill(acc, acc + g.out[0] * slice, 0);
  int64_t k = 0;
  for (int64_t kz = 0; kz < g.k[0]; ++kz)
    for (int64_t ky = 0; ky < g.k[1]; ++ky)
      for (int64_t kx = 0; kx < g.k[2]; ++kx, ++k) {
        const int16_t tap = taps[k];
        if (tap == 0) continue;
        const int64_t yo = ky * g.dil[1], xo = kx * g.dil[2];
        for (int64_t oz = 0; oz < g.out[0]; ++oz) {
          const int64_t z = oz * g.stride[0] + kz * g.dil[0];
          const int16_t* __restrict src = plane +
                                          ((z * l.sy + yo % l.sy) * l.sx + xo % l.sx) * l.plane() +
                                          (yo / l.sy) * l.wp + xo / l.sx;
          // uint32: sums wrap modulo 2^32 (a crafted window can overflow int32; no UB).
          auto* __restrict a = reinterpret_cast<uint32_t*>(acc + oz * slice);
          for (int64_t j = 0; j < slice; ++j)
            a[j] += static_cast<uint32_t>(static_cast<int32_t>(tap) * static_cast<int32_t>(src[j]));
        }
      }
  // Drop the columns past ow: rows move down in place.
  const int64_t ow = g.out[2];
  for (int64_t r = 0; r < g.out[0] * g.out[1]; ++r)
    std::memmove(acc + r * ow, acc + r * l.wp, static_cast<size_t>(ow) * sizeof(int32_t));
}
#if SOD2_SIMD_X86
template <class T>
SOD2_TARGET_AVX2 inline void depthwise_avx2(const Window3& g, const DwLayout& l, const T* x,
                                            int32_t zp, const int16_t* taps, int16_t* plane,
                                            int32_t* acc) {
  depthwise_body(g, l, x, zp, taps, plane, acc);
}
#endif
template <class T>
inline void depthwise_channel(const Window3& g, const DwLayout& l, const T* x, int32_t zp,
                              const int16_t* taps, int16_t* plane, int32_t* acc) {
#if SOD2_SIMD_X86
  if (simd::simd_level() != simd::Level::kBase)
    return depthwise_avx2(g, l, x, zp, taps, plane, acc);
#endif
  depthwise_body(g, l, x, zp, taps, plane, acc);
}

// Whether the float depthwise kernel computes this window's integer sums exactly: a sum of at
// most k_size products of centred values in [-255, 255] stays below 2^24, where every float
// partial sum is an exact integer, whatever the order. 1-D and 2-D windows, as it serves.
inline bool depthwise_exact_in_float(const Window3& g) {
  return g.in[0] == 1 && g.k[0] == 1 && g.out[0] == 1 && g.k_size() * 255 * 255 < (1 << 24);
}

}  // namespace sod2::rt::quant
