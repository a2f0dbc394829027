// Range-aware machinery shared by bounds(), simplify() and the prover. Not public API.
#pragma once

#include <unordered_map>
#include <utility>
#include <vector>

#include "core/sym/ranges.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym::detail {

// An interval in 128 bits with explicit infinities (+-kXInf). Finite ends always lie in the
// int64 range, so sums and products of two finite ends are exact.
using I128 = __int128;
inline constexpr I128 kXInf = I128{1} << 100;
struct XInterval {
  I128 lo;
  I128 hi;
};

// Memoised interval arithmetic over a RangeMap plus an overlay of internal symbols (the scaled
// symbols below). One context per query: the memo is only valid for one set of facts.
class BoundsContext {
 public:
  explicit BoundsContext(const RangeMap& ranges) : ranges_(ranges) {}

  void add_overlay(const Symbol& s, SymbolRange r) { overlay_[s] = r; }
  SymbolRange range_of(const Symbol& s) const;
  Interval bounds(const SymExpr& e);
  XInterval bounds_x(const SymExpr& e);

 private:
  XInterval compute(const SymExpr& e);

  const RangeMap& ranges_;
  std::unordered_map<Symbol, SymbolRange> overlay_;
  std::unordered_map<const Node*, XInterval> memo_;
};

// Divisibility turned into structure: each symbol s with multiple m > 1 becomes m*s' for an
// internal symbol s' over [ceil(lo/m), floor(hi/m)]. The canonicaliser then does the divisibility
// reasoning by itself (floordiv(32*s', 32) = s', mod(32*s', 32) = 0), and intervals of s' are
// exact where those of s would have lost the stride.
struct Scaling {
  struct Entry {
    Symbol original;
    Symbol scaled;
    int64_t multiple;
  };
  std::vector<Entry> entries;
};

// Rewrites e in scaled symbols and registers their ranges in ctx.
SymExpr scale_multiples(const SymExpr& e, BoundsContext* ctx, Scaling* scaling);
// Maps scaled symbols back: k*s'^p becomes (k/g)*floordiv(s, m/g)*... with g = gcd(k, m), so
// 32*s' reads `s` again and 16*s' reads `floordiv(s,2)` (exact because m divides s).
SymExpr unscale(const SymExpr& e, const Scaling& scaling);

// Bottom-up range rules on an expression already in scaled form.
SymExpr simplify_scaled(const SymExpr& e, BoundsContext* ctx);

}  // namespace sod2::sym::detail
