// RangeMap and sound interval arithmetic.
//
// Soundness of the saturation: every stored lower end is <= the true minimum and every upper end
// >= the true maximum. An end beyond int64 becomes an infinity when that only widens the interval
// (a huge upper end, a tiny lower end) and is clamped to the int64 edge when an infinity would
// claim too much (a lower end above INT64_MAX is stored as INT64_MAX, still below the truth).
#include <algorithm>

#include "core/sym/analysis_internal.h"
#include "core/sym/int_math.h"

namespace sod2::sym {
namespace {

using detail::I128;
using detail::kXInf;
using detail::XInterval;

constexpr I128 kMin64 = INT64_MIN;
constexpr I128 kMax64 = INT64_MAX;

bool is_inf(I128 v) { return v == kXInf || v == -kXInf; }

XInterval norm(I128 lo, I128 hi) {
  if (lo < kMin64) {
    lo = -kXInf;
  } else if (lo > kMax64) {
    lo = kMax64;
  }
  if (hi > kMax64) {
    hi = kXInf;
  } else if (hi < kMin64) {
    hi = kMin64;
  }
  return {lo, hi};
}

XInterval everything() { return {-kXInf, kXInf}; }

XInterval unite(const XInterval& a, const XInterval& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

I128 mul_x(I128 a, I128 b) {
  if (a == 0 || b == 0) return 0;  // x * 0 = 0 even for an unbounded x: values are finite
  if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? -kXInf : kXInf;
  return a * b;  // both finite and within int64: exact in 128 bits
}

XInterval add(const XInterval& a, const XInterval& b) {
  I128 lo = (a.lo == -kXInf || b.lo == -kXInf) ? -kXInf : a.lo + b.lo;
  I128 hi = (a.hi == kXInf || b.hi == kXInf) ? kXInf : a.hi + b.hi;
  return norm(lo, hi);
}

XInterval neg(const XInterval& a) { return norm(-a.hi, -a.lo); }

XInterval scale(const XInterval& a, int64_t k) {
  if (k >= 0) return norm(mul_x(a.lo, k), mul_x(a.hi, k));
  return norm(mul_x(a.hi, k), mul_x(a.lo, k));
}

XInterval mul(const XInterval& a, const XInterval& b) {
  const I128 c[4] = {mul_x(a.lo, b.lo), mul_x(a.lo, b.hi), mul_x(a.hi, b.lo), mul_x(a.hi, b.hi)};
  return norm(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
}

// x^p for a finite or infinite end, rounded up (upper ends) or down (lower ends) when the exact
// power leaves int64.
I128 pow_end(I128 x, int64_t p, bool up) {
  const bool negative = x < 0 && (p % 2 == 1);
  const I128 base = x < 0 ? -x : x;
  I128 mag = 1;
  const I128 huge = kMax64 + 1;
  if (base == kXInf) {
    mag = kXInf;
  } else if (base >= 2) {
    for (int64_t i = 0; i < p && mag < huge; ++i) mag = std::min(mag * base, huge);
  } else {
    mag = base;  // 0^p = 0, 1^p = 1 for p >= 1
  }
  if (mag == kXInf) return negative ? -kXInf : kXInf;
  if (mag >= huge) {
    if (negative) return up ? kMin64 : -kXInf;
    return up ? kXInf : kMax64;
  }
  return negative ? -mag : mag;
}

XInterval pow_x(const XInterval& a, int64_t p) {
  if (p == 1) return a;
  if (p % 2 == 1 || a.lo >= 0) return norm(pow_end(a.lo, p, false), pow_end(a.hi, p, true));
  // Even power: |x|^p is decreasing on the negative side.
  if (a.hi <= 0) return norm(pow_end(a.hi, p, false), pow_end(a.lo, p, true));
  return norm(0, std::max(pow_end(a.lo, p, true), pow_end(a.hi, p, true)));
}

I128 floor_div(I128 x, I128 y) {  // finite x, finite non-zero y
  I128 q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return q;
}

// floor(x/d) for d in [d.lo >= 1, d.hi]: non-decreasing in x; in d non-increasing for x >= 0 and
// non-decreasing for x < 0, so the extremes sit at the corners chosen below.
XInterval floordiv_pos(const XInterval& a, const XInterval& d) {
  I128 lo = 0, hi = 0;
  if (a.lo >= 0) {
    lo = d.hi == kXInf ? 0 : floor_div(a.lo, d.hi);
    hi = a.hi == kXInf ? kXInf : floor_div(a.hi, d.lo);
  } else if (a.hi < 0) {
    lo = a.lo == -kXInf ? -kXInf : floor_div(a.lo, d.lo);
    hi = d.hi == kXInf ? -1 : floor_div(a.hi, d.hi);
  } else {
    lo = a.lo == -kXInf ? -kXInf : floor_div(a.lo, d.lo);
    hi = a.hi == kXInf ? kXInf : floor_div(a.hi, d.lo);
  }
  return norm(lo, hi);
}

// Splits the divisor into its negative and positive parts (0 is excluded: undefined there) and
// unites the results; floor(x/d) = floor(-x/-d) maps the negative part onto the positive case.
XInterval floordiv_x(const XInterval& a, const XInterval& d) {
  std::optional<XInterval> r;
  if (d.hi >= 1) r = floordiv_pos(a, {std::max<I128>(d.lo, 1), d.hi});
  if (d.lo <= -1) {
    XInterval n = floordiv_pos(neg(a), neg({d.lo, std::min<I128>(d.hi, -1)}));
    r = r ? unite(*r, n) : n;
  }
  return r ? *r : everything();
}

// x mod d for d in [d.lo >= 1, d.hi] lies in [0, d-1]; and x mod d = x when 0 <= x < d.
XInterval mod_pos(const XInterval& a, const XInterval& d) {
  if (a.lo >= 0 && a.hi < d.lo) return a;
  if (d.lo == d.hi && !is_inf(a.lo) && !is_inf(a.hi)) {
    // Same quotient at both ends: x mod c = x - q*c is monotone there.
    I128 q = floor_div(a.lo, d.lo);
    if (q == floor_div(a.hi, d.lo)) return norm(a.lo - q * d.lo, a.hi - q * d.lo);
  }
  I128 hi = d.hi == kXInf ? kXInf : d.hi - 1;
  if (a.lo >= 0) hi = std::min(hi, a.hi);  // x mod d <= x for x >= 0
  return norm(0, hi);
}

// x mod d = -((-x) mod -d) maps a negative divisor onto the positive case.
XInterval mod_x(const XInterval& a, const XInterval& d) {
  std::optional<XInterval> r;
  if (d.hi >= 1) r = mod_pos(a, {std::max<I128>(d.lo, 1), d.hi});
  if (d.lo <= -1) {
    XInterval n = neg(mod_pos(neg(a), neg({d.lo, std::min<I128>(d.hi, -1)})));
    r = r ? unite(*r, n) : n;
  }
  return r ? *r : everything();
}

XInterval from_range(const SymbolRange& r) {
  return {r.lo == INT64_MIN ? -kXInf : I128{r.lo}, r.hi == INT64_MAX ? kXInf : I128{r.hi}};
}

Interval to_interval(const XInterval& x) {
  return {x.lo <= kMin64 ? INT64_MIN : static_cast<int64_t>(x.lo),
          x.hi >= kMax64 ? INT64_MAX : static_cast<int64_t>(x.hi)};
}

Status check_range(const std::string& what, SymbolRange* r) {
  if (r->multiple < 1) {
    return invalid_argument(what + ": multiple must be at least 1, got " +
                            std::to_string(r->multiple));
  }
  if (r->lo > r->hi) {
    return invalid_argument(what + ": empty range [" + std::to_string(r->lo) + ", " +
                            std::to_string(r->hi) + "]");
  }
  const I128 m = r->multiple;
  I128 lo = -floor_div(-I128{r->lo}, m) * m;  // ceil(lo/m)*m
  I128 hi = floor_div(r->hi, m) * m;
  if (lo > hi) {
    return invalid_argument(what + ": [" + std::to_string(r->lo) + ", " + std::to_string(r->hi) +
                            "] holds no multiple of " + std::to_string(r->multiple));
  }
  r->lo = static_cast<int64_t>(lo);
  r->hi = static_cast<int64_t>(hi);
  return {};
}

}  // namespace

Expected<SymbolRange> SymbolRange::from_step(int64_t lo, int64_t hi, int64_t step) {
  if (step < 1)
    return invalid_argument("range step must be at least 1, got " + std::to_string(step));
  if (lo > hi) {
    return invalid_argument("empty range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  // The last value lo + k*step that does not pass hi.
  const I128 last = I128{lo} + ((I128{hi} - lo) / step) * step;
  const auto g = static_cast<int64_t>(detail::gcd_u(lo, step));
  return SymbolRange{lo, static_cast<int64_t>(last), g};
}

Status RangeMap::set(const Symbol& s, SymbolRange range) {
  SOD2_RETURN_IF_ERROR(check_range("range of '" + s.name() + "'", &range));
  ranges_[s] = range;
  return {};
}

Status RangeMap::set_default(SymbolRange range) {
  SOD2_RETURN_IF_ERROR(check_range("default range", &range));
  default_ = range;
  return {};
}

SymbolRange RangeMap::get(const Symbol& s) const {
  auto it = ranges_.find(s);
  return it == ranges_.end() ? default_ : it->second;
}

bool RangeMap::admits(const Symbol& s, int64_t value) const {
  const SymbolRange r = get(s);
  return r.lo <= value && value <= r.hi && detail::mod_nonzero(value, r.multiple) == 0;
}

namespace detail {

SymbolRange BoundsContext::range_of(const Symbol& s) const {
  auto it = overlay_.find(s);
  return it == overlay_.end() ? ranges_.get(s) : it->second;
}

Interval BoundsContext::bounds(const SymExpr& e) { return to_interval(bounds_x(e)); }

XInterval BoundsContext::bounds_x(const SymExpr& e) {
  if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
  XInterval x = compute(e);
  memo_.emplace(e.node(), x);
  return x;
}

XInterval BoundsContext::compute(const SymExpr& e) {
  auto ops = e.operands();
  switch (e.kind()) {
    case Kind::kConst: return {e.constant_term(), e.constant_term()};
    case Kind::kSymbol: return from_range(range_of(*e.as_symbol()));
    case Kind::kOverflow: return everything();
    case Kind::kSum: {
      XInterval acc{e.constant_term(), e.constant_term()};
      for (size_t i = 0; i < ops.size(); ++i) {
        acc = add(acc, scale(bounds_x(ops[i]), e.coefficients()[i]));
      }
      return acc;
    }
    case Kind::kProduct: {
      XInterval acc{1, 1};
      for (size_t i = 0; i < ops.size(); ++i) {
        acc = mul(acc, pow_x(bounds_x(ops[i]), e.coefficients()[i]));
      }
      return acc;
    }
    case Kind::kFloorDiv: return floordiv_x(bounds_x(ops[0]), bounds_x(ops[1]));
    // ceil(x/d) = -floor(-x/d).
    case Kind::kCeilDiv: return neg(floordiv_x(neg(bounds_x(ops[0])), bounds_x(ops[1])));
    case Kind::kMod: return mod_x(bounds_x(ops[0]), bounds_x(ops[1]));
    case Kind::kMin:
    case Kind::kMax: {
      const bool is_min = e.kind() == Kind::kMin;
      XInterval acc = bounds_x(ops[0]);
      for (size_t i = 1; i < ops.size(); ++i) {
        XInterval b = bounds_x(ops[i]);
        acc = is_min ? XInterval{std::min(acc.lo, b.lo), std::min(acc.hi, b.hi)}
                     : XInterval{std::max(acc.lo, b.lo), std::max(acc.hi, b.hi)};
      }
      return acc;
    }
  }
  return everything();
}

}  // namespace detail

Interval bounds(const SymExpr& e, const RangeMap& ranges) {
  detail::BoundsContext ctx(ranges);
  detail::Scaling scaling;
  return ctx.bounds(detail::scale_multiples(e, &ctx, &scaling));
}

}  // namespace sod2::sym
