// simplify(): canonical form plus the rewrites that need symbol facts. Each rule holds at every
// binding inside the ranges; the comment on each says why.
#include <unordered_set>
#include <vector>

#include "core/sym/analysis_internal.h"
#include "core/sym/canonical_internal.h"
#include "core/sym/int_math.h"
#include "core/sym/prover.h"

namespace sod2::sym {
namespace detail {
namespace {

class Simplifier {
 public:
  explicit Simplifier(BoundsContext* ctx) : ctx_(ctx) {}

  SymExpr run(const SymExpr& e) {
    if (e.is_constant() || e.is_overflow()) return e;
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    SymExpr out = e;
    if (!e.operands().empty()) {
      std::vector<SymExpr> ops;
      ops.reserve(e.operands().size());
      for (const SymExpr& op : e.operands()) ops.push_back(run(op));
      out = apply_rules(rebuild(e, ops));
    }
    // An expression whose bounds are one value v equals v wherever it is defined.
    if (!out.is_constant() && !out.is_overflow()) {
      Interval iv = ctx_->bounds(out);
      if (iv.is_point()) out = SymExpr(iv.lo);
    }
    memo_.emplace(e.node(), out);
    return out;
  }

 private:
  bool provably_le(const SymExpr& a, const SymExpr& b) {
    SymExpr d = b - a;
    if (d.is_overflow()) return false;
    return ctx_->bounds(d).lo >= 0;  // INT64_MIN (unbounded) fails the test, as it must
  }

  bool provably_positive(const SymExpr& d) { return ctx_->bounds(d).lo >= 1; }

  SymExpr apply_rules(const SymExpr& e) {
    switch (e.kind()) {
      case Kind::kFloorDiv: return floordiv_rules(e);
      case Kind::kMod: return mod_rules(e);
      case Kind::kMin:
      case Kind::kMax: return min_max_rules(e);
      default: return e;
    }
  }

  SymExpr floordiv_rules(const SymExpr& e) {
    const SymExpr& x = e.operands()[0];
    const SymExpr& d = e.operands()[1];
    // floor(floor(x/d1)/d2) = floor(x/(d1*d2)) for d1, d2 > 0; the canonicaliser does this for
    // constants, ranges extend it to symbolic divisors proven positive.
    if (x.kind() == Kind::kFloorDiv && provably_positive(d) && provably_positive(x.operands()[1])) {
      return floordiv(x.operands()[0], x.operands()[1] * d);
    }
    return e;
  }

  SymExpr mod_rules(const SymExpr& e) {
    const SymExpr& x = e.operands()[0];
    const SymExpr& d = e.operands()[1];
    if (!provably_positive(d)) return e;
    Interval xi = ctx_->bounds(x);
    Interval di = ctx_->bounds(d);
    // x mod d = x when 0 <= x < d.
    if (xi.lo >= 0 && xi.hi != INT64_MAX && xi.hi < di.lo) return x;
    // x mod c = x - q*c when every x in range has the same quotient q = floor(x/c).
    if (auto c = d.constant_value(); c && xi.lo != INT64_MIN && xi.hi != INT64_MAX) {
      const int64_t q = floordiv_nonzero(xi.lo, *c);
      if (q == floordiv_nonzero(xi.hi, *c)) return x - SymExpr(q) * d;
    }
    return e;
  }

  // min(..., a, ..., b, ...) drops b when a <= b at every binding (b never is the minimum);
  // max dually.
  SymExpr min_max_rules(const SymExpr& e) {
    const bool is_min = e.kind() == Kind::kMin;
    auto ops = e.operands();
    std::vector<bool> dead(ops.size(), false);
    for (size_t i = 0; i < ops.size(); ++i) {
      for (size_t j = 0; j < ops.size(); ++j) {
        if (i == j || dead[i] || dead[j]) continue;
        if (is_min ? provably_le(ops[i], ops[j]) : provably_le(ops[j], ops[i])) dead[j] = true;
      }
    }
    std::vector<SymExpr> live;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (!dead[i]) live.push_back(ops[i]);
    }
    if (live.size() == ops.size()) return e;
    return is_min ? min(live) : max(live);
  }

  BoundsContext* ctx_;
  std::unordered_map<const Node*, SymExpr> memo_;
};

}  // namespace

SymExpr simplify_scaled(const SymExpr& e, BoundsContext* ctx) { return Simplifier(ctx).run(e); }

namespace {
size_t dag_size(const SymExpr& e) {
  std::unordered_set<const Node*> seen;
  std::vector<SymExpr> stack{e};
  while (!stack.empty()) {
    SymExpr x = stack.back();
    stack.pop_back();
    if (!seen.insert(x.node()).second) continue;
    for (const SymExpr& op : x.operands()) stack.push_back(op);
  }
  return seen.size();
}
}  // namespace

}  // namespace detail

SymExpr simplify(const SymExpr& e, const RangeMap& ranges) {
  if (e.is_constant() || e.is_overflow()) return e;
  detail::BoundsContext ctx(ranges);
  detail::Scaling scaling;
  SymExpr scaled = detail::scale_multiples(e, &ctx, &scaling);
  SymExpr out = detail::unscale(detail::simplify_scaled(scaled, &ctx), scaling);
  // Unscaling can spell a form that is only longer (mod(h,64) with 32 | h comes back as
  // 32*mod(floordiv(h,32),2)); both are equal in range, so keep the shorter.
  return detail::dag_size(out) <= detail::dag_size(e) ? out : e;
}

}  // namespace sod2::sym
