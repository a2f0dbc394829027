// Divisibility facts as structure: scale_multiples() and unscale(), see analysis_internal.h.
#include <string>

#include "core/sym/analysis_internal.h"
#include "core/sym/canonical_internal.h"
#include "core/sym/int_math.h"
#include "core/sym/transform.h"

namespace sod2::sym::detail {
namespace {

// A name no parsed or printed expression can produce by accident (starts with a control
// character), deterministic so repeated queries reuse one interned symbol.
Symbol scaled_symbol(const Symbol& s, int64_t multiple) {
  return symbol("\x01" + s.name() + "/" + std::to_string(multiple));
}

class Unscaler {
 public:
  explicit Unscaler(const Scaling& scaling) : scaling_(scaling) {}

  SymExpr run(const SymExpr& e) {
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    SymExpr out = e;
    if (e.kind() == Kind::kSum) {
      SymExpr acc(e.constant_term());
      for (size_t i = 0; i < e.operands().size(); ++i) {
        acc = acc + term(e.coefficients()[i], e.operands()[i]);
      }
      out = acc;
    } else if (is_monomial_kind(e.kind())) {
      out = term(1, e);
    }
    memo_.emplace(e.node(), out);
    return out;
  }

 private:
  const Scaling::Entry* find(const SymExpr& atom) const {
    for (const auto& entry : scaling_.entries) {
      if (entry.scaled.expr() == atom) return &entry;
    }
    return nullptr;
  }

  // k * prod(atom^p): each scaled factor s' = s/m takes g = gcd(k, m) from the coefficient,
  // since g*s' = g*(s/m) = s/(m/g) exactly (m divides s).
  SymExpr term(int64_t k, const SymExpr& mono) {
    std::vector<Factor> factors;
    append_factors(mono, &factors);
    SymExpr product(1);
    for (const Factor& f : factors) {
      if (const auto* entry = find(f.atom)) {
        for (int64_t i = 0; i < f.power; ++i) {
          const auto g = static_cast<int64_t>(gcd_u(k, entry->multiple));
          k /= g;
          product = product * floordiv(entry->original.expr(), SymExpr(entry->multiple / g));
        }
      } else if (f.atom.is_symbol()) {
        product = product * pow(f.atom, static_cast<uint32_t>(f.power));
      } else {
        std::vector<SymExpr> ops;
        for (const SymExpr& op : f.atom.operands()) ops.push_back(run(op));
        product = product * pow(rebuild(f.atom, ops), static_cast<uint32_t>(f.power));
      }
    }
    return SymExpr(k) * product;
  }

  const Scaling& scaling_;
  std::unordered_map<const Node*, SymExpr> memo_;
};

}  // namespace

SymExpr scale_multiples(const SymExpr& e, BoundsContext* ctx, Scaling* scaling) {
  Substitution map;
  for (const Symbol& s : free_symbols(e)) {
    const SymbolRange r = ctx->range_of(s);
    if (r.multiple <= 1) continue;
    const Symbol scaled = scaled_symbol(s, r.multiple);
    // lo and hi are multiples already (RangeMap tightens them), so the divisions are exact.
    ctx->add_overlay(scaled, {r.lo / r.multiple, r.hi / r.multiple, 1});
    scaling->entries.push_back({s, scaled, r.multiple});
    // s = m * s' for the integer s' = s/m.
    map.emplace(s, SymExpr(r.multiple) * scaled.expr());
  }
  return substitute(e, map);
}

SymExpr unscale(const SymExpr& e, const Scaling& scaling) {
  if (scaling.entries.empty()) return e;
  return Unscaler(scaling).run(e);
}

}  // namespace sod2::sym::detail
