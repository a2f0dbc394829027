// Facts about symbols (ranges and divisibility) and sound interval bounds of expressions.
//
// Facts live outside the expressions on purpose: the same `h` has [32, 1024] in one analysis and
// [1, 4096] in another, and hash-consed nodes must not depend on either.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "core/status/status.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym {

// Default upper bound of a symbol with no range. Dims are non-negative and far below 2^61; the
// bound leaves headroom so sums of a few dims do not saturate.
inline constexpr int64_t kDefaultMaxDim = INT64_MAX / 4;

// lo <= s <= hi and s % multiple == 0.
struct SymbolRange {
  int64_t lo = 0;
  int64_t hi = kDefaultMaxDim;
  int64_t multiple = 1;

  // A ranges-file triple [lo, hi, step] (values lo, lo+step, ...): all its values are multiples
  // of gcd(lo, step), which is what the prover can use.
  static Expected<SymbolRange> from_step(int64_t lo, int64_t hi, int64_t step);

  friend bool operator==(const SymbolRange&, const SymbolRange&) = default;
};

class RangeMap {
 public:
  // Validates (multiple >= 1, lo <= hi, some multiple inside) and stores the range with lo and
  // hi tightened to multiples, so readers never re-round.
  Status set(const Symbol& s, SymbolRange range);
  Status set_default(SymbolRange range);  // the range of symbols never set; [0, kDefaultMaxDim]

  SymbolRange get(const Symbol& s) const;
  bool contains(const Symbol& s) const { return ranges_.count(s) != 0; }
  const SymbolRange& default_range() const { return default_; }
  size_t size() const { return ranges_.size(); }

  // Whether `value` is one `s` may take: what a binding is checked against before a run.
  bool admits(const Symbol& s, int64_t value) const;

 private:
  SymbolRange default_{0, kDefaultMaxDim, 1};
  std::unordered_map<Symbol, SymbolRange> ranges_;
};

// A closed interval; lo == INT64_MIN means unbounded below, hi == INT64_MAX unbounded above.
struct Interval {
  int64_t lo;
  int64_t hi;

  static Interval everything() { return {INT64_MIN, INT64_MAX}; }
  bool is_point() const { return lo == hi && lo != INT64_MIN && hi != INT64_MAX; }
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sound bounds of `e` over every binding inside `ranges` at which `e` is defined: interval
// arithmetic in 128 bits, saturating to "unbounded" instead of wrapping. Correlations between
// occurrences of one symbol are lost (h - h is folded before, but h - floordiv(h,2) is not), so
// the interval can be wider than the true range, never narrower. Ignores divisibility; simplify()
// and the prover use it.
Interval bounds(const SymExpr& e, const RangeMap& ranges);

}  // namespace sod2::sym
