// Python-semantics integer division and checked arithmetic on int64, shared by the shape program
// (here, in the compiler-runtime contract) and by core/sym's canonicaliser, evaluator and interval
// arithmetic, so all four agree on every corner case.
#pragma once

#include <cstdint>
#include <limits>

namespace sod2::int_math {

inline constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

// floor(a / b) rounding toward -inf. False on b == 0 and on the one overflowing case (MIN / -1).
inline bool floordiv_checked(int64_t a, int64_t b, int64_t* out) {
  if (b == 0 || (a == kInt64Min && b == -1)) return false;
  int64_t q = a / b;
  // C++ truncates toward zero; a non-zero remainder with operands of opposite signs is one too
  // high.
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  *out = q;
  return true;
}

// ceil(a / b). False on b == 0 and on MIN / -1.
inline bool ceildiv_checked(int64_t a, int64_t b, int64_t* out) {
  if (b == 0 || (a == kInt64Min && b == -1)) return false;
  int64_t q = a / b;
  // Truncation is one too low when the exact quotient is positive and inexact.
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  *out = q;
  return true;
}

// a - b * floor(a / b): the result has the sign of the divisor. False only on b == 0.
inline bool mod_checked(int64_t a, int64_t b, int64_t* out) {
  if (b == 0) return false;
  if (b == -1) {  // a % -1 is 0 mathematically, but MIN % -1 traps on x86.
    *out = 0;
    return true;
  }
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  *out = r;
  return true;
}

inline int64_t floordiv_nonzero(int64_t a, int64_t b) {  // callers guarantee b != 0, not MIN/-1
  int64_t q = 0;
  floordiv_checked(a, b, &q);
  return q;
}

inline int64_t mod_nonzero(int64_t a, int64_t b) {  // callers guarantee b != 0
  int64_t r = 0;
  mod_checked(a, b, &r);
  return r;
}

inline bool add_checked(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool sub_checked(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_sub_overflow(a, b, out);
}
inline bool mul_checked(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// base^exponent (exponent >= 0), false when it leaves int64. Bases of magnitude <= 1 are
// answered directly so huge exponents cost nothing; any other base overflows within 63 steps.
inline bool pow_checked(int64_t base, int64_t exponent, int64_t* out) {
  if (exponent == 0 || base == 1) {
    *out = 1;
    return true;
  }
  if (base == 0) {
    *out = 0;
    return true;
  }
  if (base == -1) {
    *out = exponent % 2 == 0 ? 1 : -1;
    return true;
  }
  int64_t acc = base;
  for (int64_t i = 1; i < exponent; ++i) {
    if (__builtin_mul_overflow(acc, base, &acc)) return false;
  }
  *out = acc;
  return true;
}

// gcd of magnitudes; works for MIN because it runs on unsigned values. gcd(0, x) = |x|.
inline uint64_t gcd_u(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y != 0) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  return x;
}

}  // namespace sod2::int_math
