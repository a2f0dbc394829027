// Range-aware simplification and proofs over the symbol facts of a RangeMap.
//
// Soundness contract: kTrue means the relation holds at every binding inside the ranges (at which
// both sides are defined); kFalse means it fails at every such binding; everything else is
// kUnknown. A relation that holds for some bindings only (2*ceildiv(h,32) = ceildiv(h,16) for h
// in [32, 1024]) is kUnknown: RDP turns those into checked assumptions.
#pragma once

#include "core/sym/ranges.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym {

enum class Proof { kTrue, kFalse, kUnknown };

const char* proof_name(Proof p);
inline Proof negate(Proof p) {
  return p == Proof::kTrue ? Proof::kFalse : (p == Proof::kFalse ? Proof::kTrue : Proof::kUnknown);
}

// The canonical form plus what the facts allow: divisibility (floordiv(h,32)*32 = h and
// mod(h,32) = 0 when 32 divides h), min/max operands that provably never win dropped, mod and
// floordiv by positive divisors resolved when the numerator's range fixes the quotient, and any
// subexpression whose bounds are a single value replaced by it. The result equals `e` at every
// binding in range where `e` is defined.
SymExpr simplify(const SymExpr& e, const RangeMap& ranges);

Proof prove_eq(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);
Proof prove_ne(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);
Proof prove_le(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);
Proof prove_lt(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);
Proof prove_ge(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);
Proof prove_gt(const SymExpr& a, const SymExpr& b, const RangeMap& ranges);

}  // namespace sod2::sym
