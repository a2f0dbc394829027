// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on NC[D]HW float32 (MaxPool also on
// float64, int8 and uint8, through a plain loop), one output plane per parallel item. 2-D windows
// with horizontal stride 1 or 2 (no Indices output, no horizontal dilation) run vectorised over
// output columns, borders aside; other cases clip the window per axis once per output row, so the
// inner loop only visits input elements. Float MaxPools without Indices take the plane-lane path
// (pool_lanes.h) when their output rows are narrower than a vector, or the row-buffer path
// (pool_rows.h) at horizontal stride 1 or 2. Global pools reduce each plane with vector
// accumulators. Each runs in one copy per ISA (simd.h).
#include <algorithm>
#include <limits>
#include <type_traits>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"
#include "runtime/kernels/linalg/pool_blocked.h"
#include "runtime/kernels/linalg/pool_lanes.h"
#include "runtime/kernels/linalg/pool_rows.h"
#include "runtime/kernels/linalg/simd.h"

namespace sod2::rt {
namespace {

enum class PoolKind { kMax, kAverage };

SOD2_SIMD_INLINE void pool_plane_generic(PoolKind kind, bool include_pad, const float* x, float* y,
                                         int64_t* idx, int64_t idx_base, const Window3& g) {
  for (int64_t oz = 0; oz < g.out[0]; ++oz) {
    const AxisWindow wz = axis_window(g, 0, oz);
    for (int64_t oy = 0; oy < g.out[1]; ++oy) {
      const AxisWindow wy = axis_window(g, 1, oy);
      for (int64_t ox = 0; ox < g.out[2]; ++ox) {
        const AxisWindow wx = axis_window(g, 2, ox);
        float acc = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.f;
        int64_t best = -1;
        for (int64_t tz = wz.t0; tz < wz.t1; ++tz) {
          const int64_t iz = wz.start + tz * g.dil[0];
          for (int64_t ty = wy.t0; ty < wy.t1; ++ty) {
            const int64_t iy = wy.start + ty * g.dil[1];
            const int64_t row = (iz * g.in[1] + iy) * g.in[2] + wx.start;
            const float* xr = x + row;
            if (kind == PoolKind::kMax) {
              for (int64_t tx = wx.t0; tx < wx.t1; ++tx) {
                const float v = xr[tx * g.dil[2]];
                if (v > acc || best < 0) {
                  acc = v;
                  best = row + tx * g.dil[2];
                }
              }
            } else {
              for (int64_t tx = wx.t0; tx < wx.t1; ++tx) acc += xr[tx * g.dil[2]];
            }
          }
        }
        const int64_t o = (oz * g.out[1] + oy) * g.out[2] + ox;
        if (kind == PoolKind::kAverage) {
          const int64_t n = include_pad ? wz.padded * wy.padded * wx.padded
                                        : (wz.t1 - wz.t0) * (wy.t1 - wy.t0) * (wx.t1 - wx.t0);
          acc = n > 0 ? acc / static_cast<float>(n) : 0.f;
        } else if (best < 0) {
          acc = 0.f;  // a window entirely in padding (possible only with large pads)
        }
        y[o] = acc;
        if (idx) idx[o] = best < 0 ? idx_base : idx_base + best;
      }
    }
  }
}

// MaxPool of one plane for the non-float32 types: pool_plane_generic's max without SIMD.
template <typename T>
void max_pool_plane_typed(const T* x, T* y, int64_t* idx, int64_t idx_base, const Window3& g) {
  for (int64_t oz = 0; oz < g.out[0]; ++oz) {
    const AxisWindow wz = axis_window(g, 0, oz);
    for (int64_t oy = 0; oy < g.out[1]; ++oy) {
      const AxisWindow wy = axis_window(g, 1, oy);
      for (int64_t ox = 0; ox < g.out[2]; ++ox) {
        const AxisWindow wx = axis_window(g, 2, ox);
        T acc = T(0);
        int64_t best = -1;
        for (int64_t tz = wz.t0; tz < wz.t1; ++tz) {
          const int64_t iz = wz.start + tz * g.dil[0];
          for (int64_t ty = wy.t0; ty < wy.t1; ++ty) {
            const int64_t iy = wy.start + ty * g.dil[1];
            const int64_t row = (iz * g.in[1] + iy) * g.in[2] + wx.start;
            for (int64_t tx = wx.t0; tx < wx.t1; ++tx) {
              const T v = x[row + tx * g.dil[2]];
              if (best < 0 || v > acc) {
                acc = v;
                best = row + tx * g.dil[2];
              }
            }
          }
        }
        const int64_t o = (oz * g.out[1] + oy) * g.out[2] + ox;
        y[o] = acc;  // zero for a window entirely in padding
        if (idx) idx[o] = best < 0 ? idx_base : idx_base + best;
      }
    }
  }
}

// A 2-D plane without indices or dilation, separably: each output row's window rows reduced into
// one row (a vectorisable elementwise max), then that row, padded with the type's lowest value
// and split into its stride phases, reduced tap by tap: tap tx of every output is one shifted
// run of phase tx % stride, so this is vectorisable too. The same values as
// max_pool_plane_typed (0 for a window entirely in padding).
constexpr int64_t kMaxSeparableWidth = 4096;
// The padded row's length: up to the last window's last tap.
inline int64_t separable_extent(const Window3& g) {
  return std::max(g.pad_begin[2] + g.in[2], (g.out[2] - 1) * g.stride[2] + g.k[2]);
}
template <typename T>
void max_pool_plane_separable(const T* x, T* y, const Window3& g) {
  T padded[kMaxSeparableWidth];
  T phases[kMaxSeparableWidth];
  const int64_t w = g.in[2], ow = g.out[2], s = g.stride[2], k = g.k[2], pl = g.pad_begin[2];
  const int64_t ext = separable_extent(g), plen = (ext + s - 1) / s;
  // Past ext too: the phase split reads up to s - 1 beyond it (the caller checks the room).
  std::fill(padded, padded + ext + s, std::numeric_limits<T>::lowest());
  T* row = padded + pl;
  // ox * s - pl + k <= 0 for ox < left; ox * s - pl >= w for ox >= right.
  const int64_t left = pl >= k ? std::min(ow, (pl - k) / s + 1) : 0;
  const int64_t right = std::clamp<int64_t>((w + pl + s - 1) / s, left, ow);
  for (int64_t oy = 0; oy < g.out[1]; ++oy) {
    const AxisWindow wy = axis_window(g, 1, oy);
    T* __restrict out = y + oy * ow;
    if (wy.t1 <= wy.t0) {
      std::fill(out, out + ow, T(0));
      continue;
    }
    const T* first = x + (wy.start + wy.t0) * w;
    std::copy(first, first + w, row);
    for (int64_t ty = wy.t0 + 1; ty < wy.t1; ++ty) {
      const T* __restrict r = x + (wy.start + ty) * w;
      T* __restrict m = row;
      for (int64_t i = 0; i < w; ++i) {
        const T a = m[i], b = r[i];
        m[i] = a < b ? b : a;
      }
    }
    // Phase p holds padded[p], padded[p + s], ...: tap tx of output ox is phase tx % s at
    // ox + tx / s. Stride 1 reads the padded row itself.
    const T* phase_base = padded;
    if (s > 1) {
      if (s == 2) {  // the common case, as a constant stride the compiler vectorises
        T* __restrict even = phases;
        T* __restrict odd = phases + plen;
        for (int64_t i = 0; i < plen; ++i) {
          even[i] = padded[2 * i];
          odd[i] = padded[2 * i + 1];
        }
      } else {
        for (int64_t p = 0; p < s; ++p) {
          T* __restrict d = phases + p * plen;
          for (int64_t i = 0; i < plen; ++i) d[i] = padded[i * s + p];
        }
      }
      phase_base = phases;
    }
    const int64_t pitch = s > 1 ? plen : 0;
    std::copy(phase_base, phase_base + ow, out);
    for (int64_t tx = 1; tx < k; ++tx) {
      const T* __restrict src = phase_base + (tx % s) * pitch + tx / s;
      for (int64_t ox = 0; ox < ow; ++ox) {
        const T a = out[ox], b = src[ox];
        out[ox] = a < b ? b : a;
      }
    }
    // Windows entirely in padding (pads at least the kernel): 0, as the definition says. They
    // are the first `left` outputs and those from `right` on; a per-output test of every row
    // cost a ResNet stem's pool a quarter of its time.
    std::fill(out, out + left, T(0));
    std::fill(out + right, out + ow, T(0));
  }
}

template <typename T>
void max_pool_typed(ThreadPool& pool, const T* X, T* Y, int64_t* I, const Window3& g,
                    int64_t planes) {
  const int64_t P = g.out_size(), Pin = g.in_size();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(P * g.k_size(), 1));
  // Integers only: float's NaN ordering is the general path's business.
  const bool separable = std::is_integral_v<T> && !I && g.in[0] == 1 && g.k[0] == 1 &&
                         g.dil[1] == 1 && g.dil[2] == 1 &&
                         separable_extent(g) + g.stride[2] <= kMaxSeparableWidth;
  pool.parallel_for(planes, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      if (separable)
        max_pool_plane_separable(X + p * Pin, Y + p * P, g);
      else
        max_pool_plane_typed(X + p * Pin, Y + p * P, I ? I + p * P : nullptr, p * Pin, g);
    }
  });
}

// Indices of a plane's elements in row-major order turned column-major (storage_order 1): the
// plane's offset stays, and within the plane the first spatial axis varies fastest.
void indices_to_column_major(int64_t* I, int64_t planes, const Window3& g) {
  const int64_t P = g.out_size(), Pin = g.in_size();
  if (Pin == 0) return;  // every window lies in padding: the indices are the plane offsets
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t o = 0; o < P; ++o) {
      int64_t& v = I[p * P + o];
      const int64_t r = v - p * Pin;
      const int64_t z = r / (g.in[1] * g.in[2]), y = (r / g.in[2]) % g.in[1], x = r % g.in[2];
      v = p * Pin + z + y * g.in[0] + x * g.in[0] * g.in[1];
    }
  }
}

// One output value from the definition (borders of the fast path): window clipped per axis.
SOD2_SIMD_INLINE float pool_point_2d(PoolKind kind, bool include_pad, const float* x,
                                     const Window3& g, const AxisWindow& wy, int64_t ox) {
  const AxisWindow wx = axis_window(g, 2, ox);
  float acc = kind == PoolKind::kMax ? -std::numeric_limits<float>::infinity() : 0.f;
  bool any = false;
  for (int64_t ty = wy.t0; ty < wy.t1; ++ty) {
    const float* xr = x + (wy.start + ty * g.dil[1]) * g.in[2] + wx.start;
    for (int64_t tx = wx.t0; tx < wx.t1; ++tx) {
      const float v = xr[tx * g.dil[2]];
      if (kind == PoolKind::kMax) {
        if (v > acc || !any) acc = v;
      } else {
        acc += v;
      }
      any = true;
    }
  }
  if (kind == PoolKind::kAverage) {
    const int64_t n = include_pad ? wy.padded * wx.padded : (wy.t1 - wy.t0) * (wx.t1 - wx.t0);
    return n > 0 ? acc / static_cast<float>(n) : 0.f;
  }
  return any ? acc : 0.f;
}

// 2-D pooling without indices and horizontal dilation, horizontal stride 1 or 2: per output
// row, the columns whose window lies inside the row run on vectors (each tap a load, or for
// stride 2 an even-lane deinterleave of two loads), combined over the row's valid input rows;
// the border columns take pool_point_2d.
// The interior columns [a, b) of an output row: ox*S - pl >= 0 and ox*S - pl + kw - 1 <= iw - 1.
template <int S>
SOD2_SIMD_INLINE std::pair<int64_t, int64_t> interior_columns(const Window3& g) {
  const int64_t iw = g.in[2], ow = g.out[2], kw = g.k[2], pl = g.pad_begin[2];
  const int64_t a = std::min<int64_t>(ow, (pl + S - 1) / S);
  const int64_t b = std::clamp<int64_t>(iw - kw + pl < 0 ? 0 : (iw - kw + pl) / S + 1, a, ow);
  return {a, b};
}

// Whether a row's interior holds a vector of VL outputs (see pool_plane_rows).
template <int VL, int S>
SOD2_SIMD_INLINE bool rows_fit_vectors(const Window3& g) {
  const auto [a, b] = interior_columns<S>(g);
  return b - a >= VL && (S == 1 || 2 * VL <= g.in[2]);
}

template <int VL, int S>
SOD2_SIMD_INLINE void pool_plane_rows(PoolKind kind, bool include_pad, const float* x, float* y,
                                      const Window3& g) {
  using simd::Vec;
  const int64_t iw = g.in[2], ow = g.out[2], kw = g.k[2], pl = g.pad_begin[2];
  const auto [a, b] = interior_columns<S>(g);
  // Vector blocks: VL outputs from ox read input columns c .. c + S (VL - 1) + kw - 1 of the
  // row, c = ox S - pl >= 0 inside [a, b). Stride 2 deinterleaves two loads: the odd lanes of
  // loads from one float before each tap (so the last load ends on the last column read), or
  // at c + kx == 0 the even lanes from the tap, which reads columns up to 2 VL - 1 (inside the
  // row when 2 VL <= iw). The last block is shifted back to end at b.
  const bool vec_ok = rows_fit_vectors<VL, S>(g);
  for (int64_t oy = 0; oy < g.out[1]; ++oy) {
    const AxisWindow wy = axis_window(g, 1, oy);
    float* yr = y + oy * ow;
    int64_t ox = 0;
    for (; ox < a; ++ox) yr[ox] = pool_point_2d(kind, include_pad, x, g, wy, ox);
    const int64_t rows = wy.t1 - wy.t0;
    if (rows > 0 && vec_ok) {
      const int64_t count = (include_pad ? wy.padded : rows) * kw;
      const float inv = 1.f / static_cast<float>(count);
      for (;;) {
        const int64_t o0 = std::min(ox, b - VL);
        const int64_t c = o0 * S - pl;
        Vec<VL> acc = kind == PoolKind::kMax
                          ? simd::splat<VL>(-std::numeric_limits<float>::infinity())
                          : Vec<VL>{};
        for (int64_t ty = wy.t0; ty < wy.t1; ++ty) {
          const float* src = x + (wy.start + ty * g.dil[1]) * iw + c;
          for (int64_t kx = 0; kx < kw; ++kx) {
            Vec<VL> v;
            if constexpr (S == 1) {
              v = simd::load<VL>(src + kx);
            } else if (c + kx >= 1) {
              v = simd::odd_lanes<VL>(simd::load<VL>(src + kx - 1),
                                      simd::load<VL>(src + kx - 1 + VL));
            } else {
              v = simd::even_lanes<VL>(simd::load<VL>(src + kx), simd::load<VL>(src + kx + VL));
            }
            acc = kind == PoolKind::kMax ? simd::vmax<VL>(acc, v) : acc + v;
          }
        }
        if (kind == PoolKind::kAverage) acc *= inv;
        simd::store<VL>(yr + o0, acc);
        ox = o0 + VL;
        if (ox >= b) break;
      }
    }
    for (; ox < ow; ++ox) yr[ox] = pool_point_2d(kind, include_pad, x, g, wy, ox);
  }
}

// pool_plane_rows at the widest vector a row's interior holds, down to 4 lanes: a 13-wide output
// row (SqueezeNet's last pools) runs on 8 lanes instead of one output at a time.
template <int VL, int S>
SOD2_SIMD_INLINE void pool_plane_rows_widest(PoolKind kind, bool include_pad, const float* x,
                                             float* y, const Window3& g) {
  if constexpr (VL > 4) {
    if (!rows_fit_vectors<VL, S>(g))
      return pool_plane_rows_widest<VL / 2, S>(kind, include_pad, x, y, g);
  }
  pool_plane_rows<VL, S>(kind, include_pad, x, y, g);
}

// Planes [p0, p1) of one pooling run.
struct PoolJob {
  PoolKind kind;
  bool include_pad;
  const float* x;
  float* y;
  int64_t* idx;
  Window3 g;
  bool rows_path;  // pool_plane_rows applies
};

template <int VL>
SOD2_SIMD_INLINE void pool_planes(const PoolJob& j, int64_t p0, int64_t p1) {
  const int64_t P = j.g.out_size(), Pin = j.g.in_size();
  for (int64_t p = p0; p < p1; ++p) {
    const float* x = j.x + p * Pin;
    float* y = j.y + p * P;
    if (j.rows_path) {
      if (j.g.stride[2] == 1)
        pool_plane_rows_widest<VL, 1>(j.kind, j.include_pad, x, y, j.g);
      else
        pool_plane_rows_widest<VL, 2>(j.kind, j.include_pad, x, y, j.g);
    } else {
      pool_plane_generic(j.kind, j.include_pad, x, y, j.idx ? j.idx + p * P : nullptr, p * Pin,
                         j.g);
    }
  }
}

#if SOD2_SIMD_X86
SOD2_TARGET_AVX512 void pool_planes_avx512(const PoolJob& j, int64_t p0, int64_t p1) {
  pool_planes<16>(j, p0, p1);
}
SOD2_TARGET_AVX2 void pool_planes_avx2(const PoolJob& j, int64_t p0, int64_t p1) {
  pool_planes<8>(j, p0, p1);
}
#endif
void pool_planes_base(const PoolJob& j, int64_t p0, int64_t p1) { pool_planes<4>(j, p0, p1); }

using PlanesFn = void (*)(const PoolJob&, int64_t, int64_t);
PlanesFn pick_planes_fn() {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return &pool_planes_avx512;
    case simd::Level::kAvx2: return &pool_planes_avx2;
    default: break;
  }
#endif
  return &pool_planes_base;
}

// Sum or maximum of each plane of n floats, with VL-wide accumulators (4 of them).
template <int VL, PoolKind K>
SOD2_SIMD_INLINE void global_planes(const float* X, float* Y, int64_t P, int64_t p0, int64_t p1) {
  using simd::Vec;
  for (int64_t p = p0; p < p1; ++p) {
    const float* xp = X + p * P;
    int64_t i = 0;
    float r;
    if constexpr (K == PoolKind::kMax) {
      r = xp[0];
      if (P >= 4 * VL) {
        Vec<VL> m[4];
        for (int u = 0; u < 4; ++u) m[u] = simd::load<VL>(xp + u * VL);
        for (i = 4 * VL; i + 4 * VL <= P; i += 4 * VL)
          for (int u = 0; u < 4; ++u) m[u] = simd::vmax<VL>(m[u], simd::load<VL>(xp + i + u * VL));
        const Vec<VL> mm = simd::vmax<VL>(simd::vmax<VL>(m[0], m[1]), simd::vmax<VL>(m[2], m[3]));
        for (int l = 0; l < VL; ++l) r = mm[l] > r ? mm[l] : r;
      }
      for (; i < P; ++i) r = xp[i] > r ? xp[i] : r;
    } else {
      // Four accumulators, then one for the whole vectors left (a 7x7 plane is three of them,
      // which the four-vector loop alone left to 49 dependent scalar adds), a tree across the
      // lanes, the rest one by one.
      Vec<VL> s[4] = {};
      for (; i + 4 * VL <= P; i += 4 * VL)
        for (int u = 0; u < 4; ++u) s[u] += simd::load<VL>(xp + i + u * VL);
      for (; i + VL <= P; i += VL) s[0] += simd::load<VL>(xp + i);
      r = simd::reduce_add<VL>((s[0] + s[1]) + (s[2] + s[3]));
      for (; i < P; ++i) r += xp[i];
      r = P ? r / static_cast<float>(P) : 0.f;
    }
    Y[p] = r;
  }
}

template <PoolKind K>
void global_planes_dispatch(const float* X, float* Y, int64_t P, int64_t p0, int64_t p1);
#if SOD2_SIMD_X86
template <PoolKind K>
SOD2_TARGET_AVX512 void global_planes_avx512(const float* X, float* Y, int64_t P, int64_t p0,
                                             int64_t p1) {
  global_planes<16, K>(X, Y, P, p0, p1);
}
template <PoolKind K>
SOD2_TARGET_AVX2 void global_planes_avx2(const float* X, float* Y, int64_t P, int64_t p0,
                                         int64_t p1) {
  global_planes<8, K>(X, Y, P, p0, p1);
}
#endif
template <PoolKind K>
void global_planes_dispatch(const float* X, float* Y, int64_t P, int64_t p0, int64_t p1) {
#if SOD2_SIMD_X86
  switch (simd::simd_level()) {
    case simd::Level::kAvx512: return global_planes_avx512<K>(X, Y, P, p0, p1);
    case simd::Level::kAvx2: return global_planes_avx2<K>(X, Y, P, p0, p1);
    default: break;
  }
#endif
  global_planes<4, K>(X, Y, P, p0, p1);
}

class PoolKernel : public Kernel {
 public:
  PoolKernel(const char* op, PoolKind kind, WindowAttrs w, bool include_pad, bool indices,
             bool column_major, bool float_input)
      : op_(op),
        kind_(kind),
        attrs_(std::move(w)),
        include_pad_(include_pad),
        indices_(indices),
        column_major_(column_major),
        float_(float_input) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op_) + ": needs input X");
    if (x->dtype != DType::kFloat && !(kind_ == PoolKind::kMax && typed_max_pool(x->dtype)))
      return unsupported_dtype(op_, "X", x->dtype);
    const int r = x->shape.rank();
    if (r < 3)
      return invalid_argument(std::string(op_) + ": X " + x->shape.to_string() +
                              " must have rank at least 3");
    if (attrs_.kernel_shape.size() != static_cast<size_t>(r - 2))
      return invalid_argument(std::string(op_) + ": kernel_shape " +
                              dims_string(attrs_.kernel_shape) + " does not fit X " +
                              x->shape.to_string());
    SOD2_ASSIGN_OR_RETURN(
        Window3 g, resolve_window(attrs_, x->shape.dims().subspan(2), attrs_.kernel_shape, op_));
    Shape out;
    out.push_back(x->shape[0]);
    out.push_back(x->shape[1]);
    for (int i = 0; i < g.spatial; ++i) out.push_back(g.out[3 - g.spatial + i]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out));
    Tensor* ind = nullptr;
    if (indices_) {
      SOD2_ASSIGN_OR_RETURN(ind, ctx.output(1, DType::kInt64, out));
    }
    const int64_t planes = x->shape[0] * x->shape[1];
    const int64_t P = g.out_size(), Pin = g.in_size();
    if (planes == 0 || P == 0) return Status::ok_status();
    if (x->dtype != DType::kFloat) {
      int64_t* I = ind ? ind->as<int64_t>() : nullptr;
      switch (x->dtype) {
        case DType::kDouble:
          max_pool_typed(ctx.pool(), x->as<const double>(), y->as<double>(), I, g, planes);
          break;
        case DType::kInt8:
          max_pool_typed(ctx.pool(), x->as<const int8_t>(), y->as<int8_t>(), I, g, planes);
          break;
        default:
          max_pool_typed(ctx.pool(), x->as<const uint8_t>(), y->as<uint8_t>(), I, g, planes);
          break;
      }
      if (I && column_major_) indices_to_column_major(I, planes, g);
      return Status::ok_status();
    }
    const float* X = x->as<float>();
    float* Y = y->as<float>();
    if (block_ > 0) {
      if (r != 4 || x->shape[1] % block_ != 0 || !blocked_pool_applies(g))
        return internal_error(std::string(op_) + ": X " + x->shape.to_string() +
                              " cannot be held in channel blocks of " + std::to_string(block_));
      return pool_blocked(ctx, kind_ == PoolKind::kAverage, include_pad_, g, block_,
                          planes / block_, X, Y);
    }
    int64_t* I = ind ? ind->as<int64_t>() : nullptr;
    (void)Pin;
    if (kind_ == PoolKind::kMax && !I) {
      if (max_pool_lanes_applies(g)) return max_pool_lanes(ctx, g, planes, X, Y);
      if (max_pool_rows_applies(g)) return max_pool_rows(ctx, g, planes, X, Y);
    }
    PoolJob job{kind_, include_pad_, X, Y, I, g, false};
    job.rows_path = !I && g.out[0] == 1 && g.k[0] == 1 && g.in[0] == 1 && g.dil[2] == 1 &&
                    (g.stride[2] == 1 || g.stride[2] == 2);
    const PlanesFn fn = pick_planes_fn();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(P * g.k_size(), 1));
    ctx.pool().parallel_for(planes, grain, [&](int64_t p0, int64_t p1) { fn(job, p0, p1); });
    if (I && column_major_) indices_to_column_major(I, planes, g);
    return Status::ok_status();
  }

  static bool typed_max_pool(DType t) {
    return t == DType::kDouble || t == DType::kInt8 || t == DType::kUint8;
  }

  // A 2-D float pool without Indices keeps its input's layout.
  BlockedIo blocked_io(int block) const override {
    BlockedIo io;
    if (!float_ || indices_ || attrs_.kernel_shape.size() != 2 || (block != 16 && block != 8))
      return io;
    io.inputs = io.tied = uint64_t{1};
    io.output = true;
    return io;
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    block_ = tied_block_used(block, inputs, output);
  }

 private:
  const char* op_;
  PoolKind kind_;
  WindowAttrs attrs_;
  bool include_pad_;
  bool indices_;
  bool column_major_;
  bool float_;     // X is float32 (the node's declared type)
  int block_ = 0;  // channels per block of X and Y where they are held blocked
};

template <PoolKind K>
class GlobalPoolKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const char* op = K == PoolKind::kMax ? "GlobalMaxPool" : "GlobalAveragePool";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op) + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
    if (x->shape.rank() < 2)
      return invalid_argument(std::string(op) + ": X " + x->shape.to_string() +
                              " must have rank at least 2");
    Shape out = x->shape;
    for (int i = 2; i < out.rank(); ++i) out[i] = 1;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    const int64_t planes = out.numel();
    const int64_t P = planes == 0 ? 0 : x->numel() / planes;
    if (planes == 0) return Status::ok_status();
    if (P == 0 && K == PoolKind::kMax)
      return invalid_argument(std::string(op) + ": X " + x->shape.to_string() +
                              " has no elements to take the maximum of");
    const float* X = x->as<float>();
    float* Y = y->as<float>();
    if (block_ > 0) {
      if (x->shape.rank() != 4)
        return internal_error(std::string(op) + ": X " + x->shape.to_string() +
                              " cannot be held in channel blocks of " + std::to_string(block_));
      global_pool_blocked(ctx.pool(), K == PoolKind::kAverage, block_, x->shape[0], x->shape[1], P,
                          X, Y);
      return Status::ok_status();
    }
    ctx.pool().parallel_for(
        planes, std::max<int64_t>(1, 65536 / std::max<int64_t>(P, 1)),
        [&](int64_t p0, int64_t p1) { global_planes_dispatch<K>(X, Y, P, p0, p1); });
    return Status::ok_status();
  }

  // Its output, [N, C, 1, ...], is the same bytes in either layout: only X may be blocked, a
  // narrow last block too.
  BlockedIo blocked_io(int block) const override {
    BlockedIo io;
    if (block == 16 || block == 8) io.inputs = io.narrow_inputs = uint64_t{1};
    return io;
  }
  void use_blocked(int block, uint64_t inputs, bool) override {
    block_ = (inputs & 1) != 0 ? block : 0;
  }

 private:
  int block_ = 0;
};

Expected<std::unique_ptr<Kernel>> make_pool(const NodeInfo& node, PoolKind kind, const char* op) {
  const DType xt = node.input_dtypes.empty() ? DType::kUndefined : node.input_dtypes[0];
  if (!(kind == PoolKind::kMax && PoolKernel::typed_max_pool(xt)))
    SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, op));
  if (w.kernel_shape.empty()) return invalid_argument(std::string(op) + ": needs kernel_shape");
  // AveragePool-19's dilations go through the same window geometry as MaxPool's.
  int64_t include_pad = 0, storage_order = 0;
  SOD2_ATTR(include_pad, node.attrs.get_int("count_include_pad", 0));
  SOD2_ATTR(storage_order, node.attrs.get_int("storage_order", 0));
  const bool indices = kind == PoolKind::kMax && node.num_outputs > 1;
  if (storage_order != 0 && storage_order != 1)
    return invalid_argument("MaxPool: storage_order must be 0 or 1, got " +
                            std::to_string(storage_order));
  return std::unique_ptr<Kernel>(new PoolKernel(op, kind, std::move(w), include_pad != 0, indices,
                                                storage_order == 1, xt == DType::kFloat));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_max_pool(const NodeInfo& node) {
  return make_pool(node, PoolKind::kMax, "MaxPool");
}
Expected<std::unique_ptr<Kernel>> make_average_pool(const NodeInfo& node) {
  return make_pool(node, PoolKind::kAverage, "AveragePool");
}
Expected<std::unique_ptr<Kernel>> make_global_average_pool(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  return std::unique_ptr<Kernel>(new GlobalPoolKernel<PoolKind::kAverage>());
}
Expected<std::unique_ptr<Kernel>> make_global_max_pool(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  return std::unique_ptr<Kernel>(new GlobalPoolKernel<PoolKind::kMax>());
}

}  // namespace sod2::rt
