// The prover: every relation is reduced to the sign of one difference d, simplified under the
// facts (divisibility included), and decided by its interval. Unknown is the honest default.
#include "core/sym/prover.h"
#include "core/sym/analysis_internal.h"
#include "core/sym/canonical_internal.h"
#include "core/sym/int_math.h"

namespace sod2::sym {
namespace {

// d simplified in scaled form: the intervals of scaled symbols keep their stride, which the
// unscaled floordiv(h,32) would blur.
SymExpr reduce(const SymExpr& d, detail::BoundsContext* ctx) {
  detail::Scaling scaling;
  return detail::simplify_scaled(detail::scale_multiples(d, ctx, &scaling), ctx);
}

// Whether d >= 0 everywhere (kTrue), d < 0 everywhere (kFalse), or neither is shown.
Proof sign_nonnegative(const SymExpr& d, const RangeMap& ranges) {
  if (d.is_overflow()) return Proof::kUnknown;
  detail::BoundsContext ctx(ranges);
  SymExpr r = reduce(d, &ctx);
  if (r.is_overflow()) return Proof::kUnknown;
  const Interval iv = ctx.bounds(r);
  if (iv.lo >= 0) return Proof::kTrue;  // unbounded lo is INT64_MIN: never
  if (iv.hi < 0) return Proof::kFalse;  // unbounded hi is INT64_MAX: never
  return Proof::kUnknown;
}

}  // namespace

const char* proof_name(Proof p) {
  switch (p) {
    case Proof::kTrue: return "true";
    case Proof::kFalse: return "false";
    case Proof::kUnknown: return "unknown";
  }
  return "?";
}

Proof prove_eq(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  if (a == b && !a.is_overflow()) return Proof::kTrue;  // one canonical form, one value
  const SymExpr d = a - b;
  if (d.is_overflow()) return Proof::kUnknown;
  detail::BoundsContext ctx(ranges);
  const SymExpr r = reduce(d, &ctx);
  if (r.is_overflow()) return Proof::kUnknown;
  if (auto v = r.constant_value()) return *v == 0 ? Proof::kTrue : Proof::kFalse;
  // sum(c_i * m_i) + k = 0 needs gcd(c_i) to divide k, whatever integers the m_i are.
  detail::PolyView v(r);
  uint64_t g = 0;
  for (size_t i = 0; i < v.size(); ++i) g = detail::gcd_u(static_cast<int64_t>(g), v.coeff(i));
  if (g > 1 && detail::mod_nonzero(v.constant(), static_cast<int64_t>(g)) != 0) {
    return Proof::kFalse;
  }
  const Interval iv = ctx.bounds(r);
  if (iv.lo > 0 || iv.hi < 0) return Proof::kFalse;
  if (iv.lo == 0 && iv.hi == 0) return Proof::kTrue;
  return Proof::kUnknown;
}

Proof prove_ne(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  return negate(prove_eq(a, b, ranges));
}

Proof prove_le(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  Proof p = sign_nonnegative(b - a, ranges);  // a <= b  <=>  b - a >= 0
  if (p != Proof::kUnknown) return p;
  // Intervals forget that min(x, y) and x move together: min(.., x, ..) <= b when x <= b, and
  // a <= max(.., y, ..) when a <= y.
  if (a.kind() == Kind::kMin) {
    for (const SymExpr& x : a.operands()) {
      if (prove_le(x, b, ranges) == Proof::kTrue) return Proof::kTrue;
    }
  }
  if (b.kind() == Kind::kMax) {
    for (const SymExpr& y : b.operands()) {
      if (prove_le(a, y, ranges) == Proof::kTrue) return Proof::kTrue;
    }
  }
  return Proof::kUnknown;
}

Proof prove_lt(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  return prove_le(a + SymExpr(1), b, ranges);  // a < b  <=>  a + 1 <= b on integers
}

Proof prove_ge(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  return prove_le(b, a, ranges);
}

Proof prove_gt(const SymExpr& a, const SymExpr& b, const RangeMap& ranges) {
  return prove_lt(b, a, ranges);
}

}  // namespace sod2::sym
