// Explicit SIMD for the direct-loop kernels (depthwise conv, pooling) that the auto-vectoriser
// does not block well: GCC vector extensions of VL floats, compiled once per x86 ISA level and
// picked at run time (the runtime targets baseline x86-64; this machine class has AVX-512).
//
// A kernel body is a template on VL marked SOD2_SIMD_INLINE; it is instantiated inside one
// wrapper per ISA level (SOD2_TARGET_AVX512 with VL 16, SOD2_TARGET_AVX2 with VL 8, none with
// VL 4) so the vector types compile to zmm / ymm / xmm (NEON on arm64). The wrappers are chosen
// with simd_level() once. Vector values never cross a non-inlined call (no ABI dependence).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#endif

// Vector values only live inside always_inline bodies, so the ABI notes do not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace sod2::rt::simd {

template <int VL>
struct VecOf {
  typedef float type __attribute__((vector_size(VL * sizeof(float))));
};
template <int VL>
using Vec = typename VecOf<VL>::type;

#define SOD2_SIMD_INLINE inline __attribute__((always_inline))

template <int VL>
SOD2_SIMD_INLINE Vec<VL> load(const float* p) {
  Vec<VL> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int VL>
SOD2_SIMD_INLINE void store(float* p, Vec<VL> v) {
  std::memcpy(p, &v, sizeof v);
}
template <int VL>
SOD2_SIMD_INLINE Vec<VL> splat(float x) {
  return Vec<VL>{} + x;
}
template <int VL>
SOD2_SIMD_INLINE Vec<VL> vmax(Vec<VL> a, Vec<VL> b) {
  return a > b ? a : b;
}

// The sum of v's lanes as a tree (halves added until one lane is left): log2(VL) dependent adds
// instead of VL.
template <int VL>
SOD2_SIMD_INLINE float reduce_add(Vec<VL> v) {
  if constexpr (VL == 16) {
    const Vec<8> lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const Vec<8> hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    return reduce_add<8>(lo + hi);
  } else if constexpr (VL == 8) {
    const Vec<4> lo = __builtin_shufflevector(v, v, 0, 1, 2, 3);
    const Vec<4> hi = __builtin_shufflevector(v, v, 4, 5, 6, 7);
    return reduce_add<4>(lo + hi);
  } else {
    static_assert(VL == 4);
    return (v[0] + v[2]) + (v[1] + v[3]);
  }
}

enum class Level { kBase, kAvx2, kAvx512 };

// The level tests force (kBase..detected); -1 when not forced.
inline int& forced_level() {
  static int l = -1;
  return l;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SOD2_SIMD_X86 1
// ISA flags only (no arch=): GCC inlines a baseline always_inline body into these, not into an
// arch= function.
#define SOD2_TARGET_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma")))
#define SOD2_TARGET_AVX2 __attribute__((target("avx2,fma")))
inline Level detected_level() {
  static const Level l = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
      return Level::kAvx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Level::kAvx2;
    return Level::kBase;
  }();
  return l;
}
#else
#define SOD2_SIMD_X86 0
inline Level detected_level() { return Level::kBase; }
#endif

// The level the kernels use: the detected one, or a lower one a test forced.
inline Level simd_level() {
  const int f = forced_level();
  const Level d = detected_level();
  return f >= 0 && f < static_cast<int>(d) ? static_cast<Level>(f) : d;
}
// For tests: run the kernels at `l` (or the detected level when that is lower); -1 resets.
// Not thread-safe against running kernels.
inline void force_simd_level(int l) { forced_level() = l; }

// The wrappers of a kernel whose work items run in chunks with a scratch slot (common.h's
// run_in_slots): `Body::run<VL>(job, i0, i1, slot)`, a SOD2_SIMD_INLINE template, in one copy per
// ISA level, and items_for(l) picks the copy for level `l`.
template <class Job>
using ItemsFn = void (*)(const Job&, int64_t, int64_t, float*);
#if SOD2_SIMD_X86
template <class Body, class Job>
SOD2_TARGET_AVX512 void items_avx512(const Job& j, int64_t i0, int64_t i1, float* slot) {
  Body::template run<16>(j, i0, i1, slot);
}
template <class Body, class Job>
SOD2_TARGET_AVX2 void items_avx2(const Job& j, int64_t i0, int64_t i1, float* slot) {
  Body::template run<8>(j, i0, i1, slot);
}
#endif
template <class Body, class Job>
void items_base(const Job& j, int64_t i0, int64_t i1, float* slot) {
  Body::template run<4>(j, i0, i1, slot);
}
template <class Body, class Job>
ItemsFn<Job> items_for(Level l) {
#if SOD2_SIMD_X86
  if (l == Level::kAvx512) return &items_avx512<Body, Job>;
  if (l == Level::kAvx2) return &items_avx2<Body, Job>;
#endif
  (void)l;
  return &items_base<Body, Job>;
}

// Stores lanes [0, n) of v, n in [0, VL]. On x86 a masked store: the builtins (not the
// intrinsic wrappers, whose target attributes would stop inlining) expand inside the
// AVX2 / AVX-512 wrapper functions this is inlined into, the only places VL 8 / 16 run.
template <int VL>
SOD2_SIMD_INLINE void store_n(float* p, Vec<VL> v, int64_t n) {
#if SOD2_SIMD_X86
  if constexpr (VL == 16) {
    __builtin_ia32_storeups512_mask(p, (__v16sf)v, static_cast<__mmask16>((1u << n) - 1u));
    return;
  } else if constexpr (VL == 8) {
    typedef int IVec8 __attribute__((vector_size(32)));
    const IVec8 lanes = {0, 1, 2, 3, 4, 5, 6, 7};
    const IVec8 mask = lanes < static_cast<int>(n);  // all ones where lane < n
    __builtin_ia32_maskstoreps256((__v8sf*)p, (__v8si)mask, (__v8sf)v);
    return;
  }
#endif
  for (int64_t i = 0; i < n; ++i) p[i] = v[i];
}

// Loads lanes [0, n) of p, n in [0, VL], zeros in the others; nothing past p + n is read.
template <int VL>
SOD2_SIMD_INLINE Vec<VL> load_n(const float* p, int64_t n) {
#if SOD2_SIMD_X86
  if constexpr (VL == 16) {
    return (Vec<VL>)__builtin_ia32_loadups512_mask(p, (__v16sf)Vec<VL>{},
                                                   static_cast<__mmask16>((1u << n) - 1u));
  } else if constexpr (VL == 8) {
    typedef int IVec8 __attribute__((vector_size(32)));
    const IVec8 lanes = {0, 1, 2, 3, 4, 5, 6, 7};
    const IVec8 mask = lanes < static_cast<int>(n);
    return (Vec<VL>)__builtin_ia32_maskloadps256((const __v8sf*)p, (__v8si)mask);
  }
#endif
  Vec<VL> v{};
  for (int64_t i = 0; i < n; ++i) v[i] = p[i];
  return v;
}

// The even / odd lanes of the 2*VL floats a:b (a stride-2 deinterleave).
template <int VL>
SOD2_SIMD_INLINE Vec<VL> even_lanes(Vec<VL> a, Vec<VL> b);
template <int VL>
SOD2_SIMD_INLINE Vec<VL> odd_lanes(Vec<VL> a, Vec<VL> b);
template <>
SOD2_SIMD_INLINE Vec<4> even_lanes<4>(Vec<4> a, Vec<4> b) {
  return __builtin_shufflevector(a, b, 0, 2, 4, 6);
}
template <>
SOD2_SIMD_INLINE Vec<8> even_lanes<8>(Vec<8> a, Vec<8> b) {
  return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
}
template <>
SOD2_SIMD_INLINE Vec<16> even_lanes<16>(Vec<16> a, Vec<16> b) {
  return __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
}
template <>
SOD2_SIMD_INLINE Vec<4> odd_lanes<4>(Vec<4> a, Vec<4> b) {
  return __builtin_shufflevector(a, b, 1, 3, 5, 7);
}
template <>
SOD2_SIMD_INLINE Vec<8> odd_lanes<8>(Vec<8> a, Vec<8> b) {
  return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);
}
template <>
SOD2_SIMD_INLINE Vec<16> odd_lanes<16>(Vec<16> a, Vec<16> b) {
  return __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
}

// Hides a value from the optimiser: loads through a laundered pointer stay inside the loop
// that launders it (stops GCC hoisting and then spilling loop-invariant loads), and a
// laundered counter keeps a short scalar loop from becoming a memcpy/memset call.
template <typename T>
SOD2_SIMD_INLINE T launder(T v) {
  asm("" : "+r"(v));
  return v;
}

// Copies n floats (ranges must not overlap).
template <int VL>
SOD2_SIMD_INLINE void copy(float* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) store<VL>(d + i, load<VL>(s + i));
  if (i == n) return;
  if (n >= VL) {
    store<VL>(d + n - VL, load<VL>(s + n - VL));
  } else {
    for (; i < n; i = launder(i + 1)) d[i] = s[i];
  }
}

// Zeroes [d, d + n) in whole vectors: may write up to VL - 1 floats past the end.
template <int VL>
SOD2_SIMD_INLINE void zero_over(float* d, int64_t n) {
  for (int64_t i = 0; i < n; i += VL) store<VL>(d + i, Vec<VL>{});
}

// Lanes of the widest vector of a level.
inline int lanes(Level l) { return l == Level::kAvx512 ? 16 : l == Level::kAvx2 ? 8 : 4; }

}  // namespace sod2::rt::simd
