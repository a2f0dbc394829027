// verify(): checks the canonical-form invariants I1..I10 listed in sym_expr.h, node by node.
#include <algorithm>
#include <unordered_set>

#include "core/sym/canonical_internal.h"
#include "core/sym/int_math.h"

namespace sod2::sym {
namespace {

using detail::PolyView;

Status fail(const SymExpr& e, const std::string& why) {
  return internal_error("non-canonical " + std::string(kind_name(e.kind())) + " node " +
                        e.to_string() + ": " + why);
}

bool strictly_increasing(std::span<const SymExpr> ops, int (*cmp)(const SymExpr&, const SymExpr&)) {
  for (size_t i = 1; i < ops.size(); ++i) {
    if (cmp(ops[i - 1], ops[i]) >= 0) return false;
  }
  return true;
}

Status check_sum(const SymExpr& e) {
  auto ops = e.operands();
  auto cs = e.coefficients();
  if (ops.empty() || ops.size() != cs.size()) return fail(e, "I2: terms and coefficients");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!detail::is_monomial_kind(ops[i].kind())) return fail(e, "I2: term is not a monomial");
    if (cs[i] == 0) return fail(e, "I2: zero coefficient");
  }
  if (!strictly_increasing(ops, detail::compare_terms)) return fail(e, "I2: term order");
  if (ops.size() == 1 && cs[0] == 1 && e.constant_term() == 0) return fail(e, "I2: bare monomial");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind() != Kind::kMod) continue;
    for (size_t j = 0; j < ops.size(); ++j) {
      int64_t ck = 0;
      auto c = ops[i].operands()[1].constant_value();
      if (ops[j].kind() == Kind::kFloorDiv && c && *c >= 2 &&
          ops[j].operands()[0] == ops[i].operands()[0] &&
          ops[j].operands()[1] == ops[i].operands()[1] && detail::mul_checked(*c, cs[i], &ck) &&
          ck == cs[j]) {
        return fail(e, "I2: unfolded division identity");
      }
    }
  }
  return {};
}

Status check_product(const SymExpr& e) {
  auto ops = e.operands();
  auto ps = e.coefficients();
  if (ops.empty() || ops.size() != ps.size()) return fail(e, "I3: factors and powers");
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!detail::is_atom_kind(ops[i].kind())) return fail(e, "I3: factor is not an atom");
    if (ps[i] < 1) return fail(e, "I3: power below 1");
  }
  if (!strictly_increasing(ops, compare)) return fail(e, "I3: factor order");
  if (ops.size() == 1 && ps[0] == 1) return fail(e, "I3: single atom");
  return {};
}

uint64_t coefficient_gcd(const PolyView& v, int64_t c) {
  uint64_t g = static_cast<uint64_t>(c);
  for (size_t i = 0; i < v.size(); ++i) g = detail::gcd_u(static_cast<int64_t>(g), v.coeff(i));
  return g;
}

Status check_division(const SymExpr& e) {
  if (e.operands().size() != 2 || !e.coefficients().empty()) return fail(e, "two operands");
  const SymExpr& x = e.operands()[0];
  const SymExpr& d = e.operands()[1];
  auto c = d.constant_value();
  if (!c) {  // I8
    if (x.is_constant() && x.constant_term() == 0) return fail(e, "I8: zero numerator");
    if (x == d) return fail(e, "I8: numerator equals divisor");
    PolyView dv(d);
    if (dv.size() == 1 && dv.constant() == 0) {
      PolyView xv(x);
      for (size_t i = 0; i < xv.size(); ++i) {
        SymExpr q;
        if (detail::mod_nonzero(xv.coeff(i), dv.coeff(0)) == 0 &&
            detail::monomial_divide(xv.mono(i), dv.mono(0), &q)) {
          return fail(e, "I8: a term is a multiple of the divisor");
        }
      }
    }
    return {};
  }
  if (*c == 0 || *c == detail::kInt64Min) return {};  // kept verbatim on purpose
  if (e.kind() == Kind::kCeilDiv) return fail(e, "I7: constant divisor");
  if (*c < 2) return fail(e, "I5/I6: divisor below 2");
  if (x.is_constant()) return fail(e, "I5/I6: constant numerator");
  PolyView xv(x);
  if (xv.constant() < 0 || xv.constant() >= *c) return fail(e, "I5/I6: constant not in [0, c)");
  if (coefficient_gcd(xv, *c) != 1) return fail(e, "I5/I6: common factor with the divisor");
  for (size_t i = 0; i < xv.size(); ++i) {
    int64_t ci = xv.coeff(i);
    if (e.kind() == Kind::kFloorDiv && detail::mod_nonzero(ci, *c) == 0) {
      return fail(e, "I5: coefficient multiple of the divisor");
    }
    if (e.kind() == Kind::kMod && (ci < 1 || ci >= *c)) return fail(e, "I6: coefficient range");
    const SymExpr& m = xv.mono(i);
    if (e.kind() == Kind::kMod && m.kind() == Kind::kMod) {
      auto c1 = m.operands()[1].constant_value();
      if (c1 && *c1 != 0 && detail::mod_nonzero(*c1, *c) == 0) return fail(e, "I6: nested mod");
    }
  }
  if (e.kind() == Kind::kFloorDiv && xv.size() == 1 && xv.coeff(0) == 1 &&
      xv.mono(0).kind() == Kind::kFloorDiv) {
    auto c1 = xv.mono(0).operands()[1].constant_value();
    if (c1 && *c1 > 0) return fail(e, "I5: nested floordiv");
  }
  return {};
}

Status check_min_max(const SymExpr& e) {
  auto ops = e.operands();
  if (ops.size() < 2 || !e.coefficients().empty()) return fail(e, "I9: fewer than 2 operands");
  if (!strictly_increasing(ops, compare)) return fail(e, "I9: operand order");
  const Kind dual = e.kind() == Kind::kMin ? Kind::kMax : Kind::kMin;
  int constants = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind() == e.kind()) return fail(e, "I9: nested, not flattened");
    if (ops[i].is_constant()) ++constants;
    for (size_t j = 0; j < ops.size(); ++j) {
      if (i == j) continue;
      PolyView a(ops[i]), b(ops[j]);
      bool same = a.size() == b.size();
      for (size_t k = 0; same && k < a.size(); ++k) {
        same = a.mono(k) == b.mono(k) && a.coeff(k) == b.coeff(k);
      }
      if (same) return fail(e, "I9: operands differ by a constant");
      if (ops[i].kind() == dual && std::find(ops[i].operands().begin(), ops[i].operands().end(),
                                             ops[j]) != ops[i].operands().end()) {
        return fail(e, "I9: absorbable operand");
      }
    }
  }
  if (constants > 1) return fail(e, "I9: several constants");
  return {};
}

Status check_node(const SymExpr& e) {
  const auto* n = e.node();
  uint64_t h = detail::structural_hash(n->kind, n->value, n->name, n->operands, n->coeffs);
  if (h != n->hash) return fail(e, "I10: stale hash");
  uint32_t depth = 0;
  for (const SymExpr& op : e.operands()) {
    if (op.is_overflow()) return fail(e, "I1: overflow as an operand");
    depth = std::max(depth, op.depth());
  }
  if (depth + 1 != e.depth()) return fail(e, "I10: stale depth");
  if (detail::intern(n->kind, n->value, n->name, n->operands, n->coeffs) != e) {
    return fail(e, "I10: not the table's node");
  }
  if (!n->name.empty() && e.kind() != Kind::kSymbol) return fail(e, "I1: stray name");
  switch (e.kind()) {
    case Kind::kConst:
    case Kind::kSymbol:
    case Kind::kOverflow:
      if (!e.operands().empty() || !e.coefficients().empty()) return fail(e, "I1: leaf operands");
      return {};
    case Kind::kSum: return check_sum(e);
    case Kind::kProduct: return check_product(e);
    case Kind::kFloorDiv:
    case Kind::kCeilDiv:
    case Kind::kMod: return check_division(e);
    case Kind::kMin:
    case Kind::kMax: return check_min_max(e);
  }
  return fail(e, "unknown kind");
}

}  // namespace

Status verify(const SymExpr& root) {
  std::unordered_set<const detail::Node*> seen;
  std::vector<SymExpr> stack{root};
  while (!stack.empty()) {
    SymExpr e = stack.back();
    stack.pop_back();
    if (!seen.insert(e.node()).second) continue;
    SOD2_RETURN_IF_ERROR(check_node(e));
    for (const SymExpr& op : e.operands()) stack.push_back(op);
  }
  return {};
}

}  // namespace sod2::sym
