// float16 and bfloat16 as the math kernels see them: 16-bit patterns (Half / BFloat16 wrap a
// uint16_t so dispatch can tell them apart from uint16), converted by
// runtime/tensor/narrow_float.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "runtime/kernels/math/math_common.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::rt::math {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

template <class T>
inline constexpr bool kIsNarrowFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Widening (exact) and narrowing for the wrapper types.
inline float to_float(Half h) { return half_to_float(h.bits); }
inline float to_float(BFloat16 h) { return bfloat16_to_float(h.bits); }
template <class T>
inline T narrow_from(double d) {
  if constexpr (std::is_same_v<T, Half>) {
    return Half{double_to_half(d)};
  } else {
    return BFloat16{double_to_bfloat16(d)};
  }
}

// visit_dtype plus float16 (Half) and bfloat16 (BFloat16).
template <class F>
Status visit_dtype_narrow(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::kFloat16: return f(Tag<Half>{});
    case DType::kBFloat16: return f(Tag<BFloat16>{});
    default: return visit_dtype(op, t, std::forward<F>(f));
  }
}

}  // namespace sod2::rt::math
