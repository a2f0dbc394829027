// The canonicalising constructors. Every rewrite holds for all integer values of its symbols
// wherever the input is defined (see sym_expr.h); each carries a one-line reason.
#include <algorithm>

#include "core/sym/canonical_internal.h"
#include "core/sym/int_math.h"

namespace sod2::sym {
namespace detail {
namespace {
const int64_t kOneCoeff = 1;
}  // namespace

PolyView::PolyView(const SymExpr& e) : self_(e) {
  switch (e.kind()) {
    case Kind::kSum:
      monos_ = e.operands();
      coeffs_ = e.coefficients();
      constant_ = e.constant_term();
      break;
    case Kind::kConst: constant_ = e.constant_term(); break;
    default:
      monos_ = std::span<const SymExpr>(&self_, 1);
      coeffs_ = std::span<const int64_t>(&kOneCoeff, 1);
      break;
  }
}

uint64_t degree(const SymExpr& mono) {
  if (mono.kind() != Kind::kProduct) return 1;
  uint64_t d = 0;
  for (int64_t p : mono.coefficients()) d += static_cast<uint64_t>(p);
  return d;
}

int compare_terms(const SymExpr& a, const SymExpr& b) {
  if (a == b) return 0;
  uint64_t da = degree(a), db = degree(b);
  if (da != db) return da > db ? -1 : 1;
  return compare(a, b);
}

void PolyBuilder::add_const(int64_t k) {
  if (!add_checked(constant_, k, &constant_)) overflow_ = true;
}

void PolyBuilder::add_term(const SymExpr& mono, int64_t coeff) {
  if (coeff != 0) terms_.push_back({mono, coeff});
}

void PolyBuilder::add(const SymExpr& e, int64_t scale) {
  if (overflow_) return;
  if (e.is_overflow()) {
    overflow_ = true;  // the poison absorbs even 0 * poison: its value is unknown, not zero
    return;
  }
  if (scale == 0) return;
  PolyView v(e);
  int64_t k = 0;
  if (!mul_checked(v.constant(), scale, &k)) {
    overflow_ = true;
    return;
  }
  add_const(k);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t c = 0;
    if (!mul_checked(v.coeff(i), scale, &c)) {
      overflow_ = true;
      return;
    }
    terms_.push_back({v.mono(i), c});
  }
}

SymExpr PolyBuilder::build() {
  if (overflow_) return SymExpr::overflow();
  std::sort(terms_.begin(), terms_.end(),
            [](const Term& a, const Term& b) { return compare_terms(a.mono, b.mono) < 0; });
  // c1*m + c2*m = (c1+c2)*m (distributivity); zero coefficients vanish (0*m = 0).
  size_t out = 0;
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (out > 0 && terms_[out - 1].mono == terms_[i].mono) {
      if (!add_checked(terms_[out - 1].coeff, terms_[i].coeff, &terms_[out - 1].coeff)) {
        return SymExpr::overflow();
      }
    } else {
      terms_[out++] = terms_[i];
    }
  }
  terms_.resize(out);
  std::erase_if(terms_, [](const Term& t) { return t.coeff == 0; });
  if (SymExpr merged; merge_division_identity(&merged)) return merged;
  if (terms_.empty()) return SymExpr(constant_);
  if (terms_.size() == 1 && terms_[0].coeff == 1 && constant_ == 0) return terms_[0].mono;
  std::vector<SymExpr> monos;
  std::vector<int64_t> coeffs;
  monos.reserve(terms_.size());
  coeffs.reserve(terms_.size());
  for (const Term& t : terms_) {
    monos.push_back(t.mono);
    coeffs.push_back(t.coeff);
  }
  return intern(Kind::kSum, constant_, {}, monos, coeffs);
}

bool PolyBuilder::merge_division_identity(SymExpr* out) {
  for (size_t i = 0; i < terms_.size(); ++i) {
    const SymExpr& m = terms_[i].mono;
    if (m.kind() != Kind::kMod) continue;
    auto c = m.operands()[1].constant_value();
    int64_t ck = 0;
    if (!c || *c < 2 || !mul_checked(*c, terms_[i].coeff, &ck)) continue;
    for (size_t j = 0; j < terms_.size(); ++j) {
      const SymExpr& f = terms_[j].mono;
      if (f.kind() != Kind::kFloorDiv || terms_[j].coeff != ck ||
          f.operands()[0] != m.operands()[0] || f.operands()[1] != m.operands()[1]) {
        continue;
      }
      // c*k*floordiv(x, c) + k*mod(x, c) = k*x: the division identity x = c*floor(x/c) + x mod c.
      PolyBuilder rest;
      rest.add_const(constant_);
      for (size_t t = 0; t < terms_.size(); ++t) {
        if (t != i && t != j) rest.add_term(terms_[t].mono, terms_[t].coeff);
      }
      rest.add(m.operands()[0], terms_[i].coeff);
      *out = rest.build();
      return true;
    }
  }
  return false;
}

void append_factors(const SymExpr& mono, std::vector<Factor>* out) {
  if (mono.kind() == Kind::kProduct) {
    for (size_t i = 0; i < mono.operands().size(); ++i) {
      out->push_back({mono.operands()[i], mono.coefficients()[i]});
    }
  } else if (!mono.is_constant()) {  // the constant 1 is the empty monomial
    out->push_back({mono, 1});
  }
}

SymExpr make_monomial(std::vector<Factor>* factors) {
  auto& f = *factors;
  std::sort(f.begin(), f.end(),
            [](const Factor& a, const Factor& b) { return compare(a.atom, b.atom) < 0; });
  // x^p * x^q = x^(p+q).
  size_t out = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (out > 0 && f[out - 1].atom == f[i].atom) {
      if (!add_checked(f[out - 1].power, f[i].power, &f[out - 1].power)) {
        return SymExpr::overflow();
      }
    } else {
      f[out++] = f[i];
    }
  }
  f.resize(out);
  if (f.empty()) return SymExpr(1);
  if (f.size() == 1 && f[0].power == 1) return f[0].atom;
  std::vector<SymExpr> atoms;
  std::vector<int64_t> powers;
  for (const Factor& x : f) {
    atoms.push_back(x.atom);
    powers.push_back(x.power);
  }
  return intern(Kind::kProduct, 0, {}, atoms, powers);
}

SymExpr monomial_product(const SymExpr& a, const SymExpr& b) {
  std::vector<Factor> f;
  append_factors(a, &f);
  append_factors(b, &f);
  return make_monomial(&f);
}

bool monomial_divide(const SymExpr& num, const SymExpr& den, SymExpr* quotient) {
  std::vector<Factor> n, d;
  append_factors(num, &n);
  append_factors(den, &d);
  for (const Factor& df : d) {
    auto it =
        std::find_if(n.begin(), n.end(), [&](const Factor& nf) { return nf.atom == df.atom; });
    if (it == n.end() || it->power < df.power) return false;
    it->power -= df.power;
  }
  std::erase_if(n, [](const Factor& f) { return f.power == 0; });
  *quotient = make_monomial(&n);
  return true;
}

namespace {

SymExpr make_binary(Kind kind, const SymExpr& a, const SymExpr& b) {
  const SymExpr ops[2] = {a, b};
  return intern(kind, 0, {}, ops, {});
}

// q = c / k when k divides c exactly, avoiding the MIN / -1 trap.
bool exact_div(int64_t c, int64_t k, int64_t* q) {
  if (k == 0 || (c == kInt64Min && k == -1)) return false;
  if (c % k != 0) return false;
  *q = c / k;
  return true;
}

// k * (sum c_i m_i + c0) = sum (k c_i) m_i + k c0; k = 0 leaves 0 (x*0 = 0 for every integer x).
SymExpr scale(const SymExpr& e, int64_t k) {
  if (k == 1) return e;
  PolyBuilder b;
  b.add(e, k);
  return b.build();
}

// If d is k*M for one monomial M with no constant, sets *k and *m.
bool single_monomial(const SymExpr& d, int64_t* k, SymExpr* m) {
  PolyView v(d);
  if (v.size() != 1 || v.constant() != 0) return false;
  *k = v.coeff(0);
  *m = v.mono(0);
  return true;
}

// Splits x = (k*M)*Q + R, moving into Q every term that is an exact multiple of k*M. False when
// no term moves.
bool split_multiples(const SymExpr& x, int64_t k, const SymExpr& m, SymExpr* q, SymExpr* r) {
  PolyView v(x);
  PolyBuilder qb, rb;
  rb.add_const(v.constant());
  bool moved = false;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t cq = 0;
    SymExpr mq;
    if (exact_div(v.coeff(i), k, &cq) && monomial_divide(v.mono(i), m, &mq)) {
      qb.add(mq, cq);
      moved = true;
    } else {
      rb.add_term(v.mono(i), v.coeff(i));
    }
  }
  if (!moved) return false;
  *q = qb.build();
  *r = rb.build();
  return true;
}

SymExpr floordiv_const(const SymExpr& a, int64_t c);

SymExpr div_symbolic(Kind kind, const SymExpr& a, const SymExpr& d) {
  // 0 / d = 0 and 0 mod d = 0 wherever d != 0.
  if (a.is_constant() && a.constant_term() == 0) return SymExpr(0);
  // d / d = 1 and d mod d = 0 wherever d != 0.
  if (a == d) return SymExpr(kind == Kind::kMod ? 0 : 1);
  int64_t k = 0;
  SymExpr m, q, r;
  if (single_monomial(d, &k, &m) && split_multiples(a, k, m, &q, &r)) {
    switch (kind) {
      // floor((d*Q + R)/d) = Q + floor(R/d) for integer Q and d != 0; same for ceil.
      case Kind::kFloorDiv: return q + floordiv(r, d);
      case Kind::kCeilDiv: return q + ceildiv(r, d);
      // (d*Q + R) mod d = R mod d.
      default: return mod(r, d);
    }
  }
  return make_binary(kind, a, d);
}

SymExpr floordiv_const(const SymExpr& a, int64_t c) {
  // A zero divisor is undefined everywhere; keeping the node lets evaluation report it.
  if (c == 0) return make_binary(Kind::kFloorDiv, a, SymExpr(0));
  if (auto v = a.constant_value()) {  // constant folding, with the one overflow (MIN / -1)
    int64_t q = 0;
    return floordiv_checked(*v, c, &q) ? SymExpr(q) : SymExpr::overflow();
  }
  if (c == kInt64Min) return make_binary(Kind::kFloorDiv, a, SymExpr(c));  // cannot negate
  // floor(x / -c) = floor(-x / c).
  if (c < 0) return floordiv_const(-a, -c);
  // floor(x / 1) = x.
  if (c == 1) return a;

  // floor((c*Q + R)/c) = Q + floor(R/c) for integer Q: move exact multiples of c out, and the
  // constant's quotient with them, leaving a constant in [0, c).
  PolyView v(a);
  PolyBuilder qb, rb;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t cq = 0;
    if (exact_div(v.coeff(i), c, &cq)) {
      qb.add_term(v.mono(i), cq);
    } else {
      rb.add_term(v.mono(i), v.coeff(i));
    }
  }
  qb.add_const(floordiv_nonzero(v.constant(), c));
  int64_t r0 = mod_nonzero(v.constant(), c);
  SymExpr quotient = qb.build();
  // floor(r0 / c) = 0 for 0 <= r0 < c.
  if (rb.terms().empty()) return quotient;

  // floor((g*X + r)/(g*c')) = floor((X + floor(r/g))/c') for g > 0: no multiple of g*c' lies
  // strictly between g*X + g*floor(r/g) and g*X + r.
  uint64_t g = static_cast<uint64_t>(c);
  for (const Term& t : rb.terms()) g = gcd_u(static_cast<int64_t>(g), t.coeff);
  int64_t gi = static_cast<int64_t>(g);
  int64_t c2 = c / gi;
  for (Term& t : rb.terms()) t.coeff /= gi;
  rb.add_const(r0 / gi);  // r0 >= 0, so truncation is floor
  SymExpr num = rb.build();

  // floor((floor(y/c1) + k)/c2) = floor((y + k*c1)/(c1*c2)) for c1, c2 > 0 (nested floors of
  // positive divisors compose; k*c1 folds into the inner numerator).
  PolyView nv(num);
  if (nv.size() == 1 && nv.coeff(0) == 1 && nv.mono(0).kind() == Kind::kFloorDiv) {
    const SymExpr& inner = nv.mono(0);
    auto c1 = inner.operands()[1].constant_value();
    int64_t c12 = 0, kc1 = 0;
    if (c1 && *c1 > 0 && mul_checked(*c1, c2, &c12) && mul_checked(nv.constant(), *c1, &kc1)) {
      return quotient + floordiv_const(inner.operands()[0] + SymExpr(kc1), c12);
    }
  }
  return quotient + make_binary(Kind::kFloorDiv, num, SymExpr(c2));
}

SymExpr mod_const(const SymExpr& a, int64_t c) {
  if (c == 0) return make_binary(Kind::kMod, a, SymExpr(0));  // undefined: evaluation reports it
  if (auto v = a.constant_value()) return SymExpr(mod_nonzero(*v, c));  // constant folding
  if (c == kInt64Min) return make_binary(Kind::kMod, a, SymExpr(c));    // cannot negate
  // x mod -c = -((-x) mod c): both are x - (-c)*floor(x/-c).
  if (c < 0) return -mod_const(-a, -c);
  // x mod 1 = 0.
  if (c == 1) return SymExpr(0);

  // Only the residue of each coefficient and of the constant matters modulo c; a term
  // mod(y, c1) with c | c1 is congruent to y modulo c, so it is replaced by y.
  PolyView v(a);
  PolyBuilder rb;
  bool replaced = false;
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t ci = mod_nonzero(v.coeff(i), c);
    if (ci == 0) continue;
    const SymExpr& m = v.mono(i);
    if (m.kind() == Kind::kMod) {
      auto c1 = m.operands()[1].constant_value();
      if (c1 && *c1 != 0 && mod_nonzero(*c1, c) == 0) {
        rb.add(m.operands()[0], ci);
        replaced = true;
        continue;
      }
    }
    rb.add_term(m, ci);
  }
  rb.add_const(mod_nonzero(v.constant(), c));
  if (replaced) return mod_const(rb.build(), c);  // the substituted y needs reducing in turn
  if (rb.overflowed()) return SymExpr::overflow();
  if (rb.terms().empty()) return SymExpr(rb.constant());

  // mod(g*Y + r, g*c') = g*mod(Y, c') + r for 0 <= r < g (the floor identity above, times g).
  uint64_t g = static_cast<uint64_t>(c);
  for (const Term& t : rb.terms()) g = gcd_u(static_cast<int64_t>(g), t.coeff);
  if (g > 1) {
    int64_t gi = static_cast<int64_t>(g);
    int64_t k = rb.constant();
    PolyBuilder yb;
    for (const Term& t : rb.terms()) yb.add_term(t.mono, t.coeff / gi);
    yb.add_const(k / gi);
    return SymExpr(gi) * mod_const(yb.build(), c / gi) + SymExpr(k % gi);
  }
  return make_binary(Kind::kMod, rb.build(), SymExpr(c));
}

// a - b as a constant when they differ only in their constants.
bool constant_difference(const SymExpr& a, const SymExpr& b, int64_t* d) {
  PolyView va(a), vb(b);
  if (va.size() != vb.size()) return false;
  for (size_t i = 0; i < va.size(); ++i) {
    if (va.mono(i) != vb.mono(i) || va.coeff(i) != vb.coeff(i)) return false;
  }
  return sub_checked(va.constant(), vb.constant(), d);
}

SymExpr min_max(Kind kind, std::span<const SymExpr> in) {
  // The empty min is +inf: not an integer, so the poison, not a crash.
  if (in.empty()) return SymExpr::overflow();
  const bool is_min = kind == Kind::kMin;
  const Kind dual = is_min ? Kind::kMax : Kind::kMin;
  std::vector<SymExpr> args;
  std::optional<int64_t> folded;
  auto take = [&](const SymExpr& e) {
    if (auto v = e.constant_value()) {
      // Constants fold to one: min(c1, c2) is a constant.
      folded = folded ? (is_min ? std::min(*folded, *v) : std::max(*folded, *v)) : *v;
    } else {
      args.push_back(e);
    }
  };
  for (const SymExpr& e : in) {
    if (e.is_overflow()) return SymExpr::overflow();
    if (e.kind() == kind) {
      for (const SymExpr& inner : e.operands()) take(inner);  // associativity: flatten
    } else {
      take(e);
    }
  }
  if (folded) args.push_back(SymExpr(*folded));
  // Commutativity: sort; idempotence: min(x, x) = x.
  std::sort(args.begin(), args.end(), SymExprLess());
  args.erase(std::unique(args.begin(), args.end()), args.end());

  std::vector<bool> dead(args.size(), false);
  for (size_t i = 0; i < args.size(); ++i) {
    for (size_t j = 0; j < args.size() && !dead[i]; ++j) {
      if (i == j || dead[j]) continue;
      // min(x + c1, x + c2) = x + min(c1, c2): the one with the larger constant never wins.
      int64_t d = 0;
      if (constant_difference(args[i], args[j], &d) && (is_min ? d > 0 : d < 0)) dead[i] = true;
      // Absorption: min(y, max(y, z)) = y since y <= max(y, z); dually for max.
      if (args[i].kind() == dual) {
        for (const SymExpr& op : args[i].operands()) {
          if (op == args[j]) dead[i] = true;
        }
      }
    }
  }
  std::vector<SymExpr> live;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!dead[i]) live.push_back(args[i]);
  }
  if (live.size() == 1) return live[0];
  return intern(kind, 0, {}, live, {});
}

}  // namespace

SymExpr rebuild(const SymExpr& e, std::span<const SymExpr> ops) {
  switch (e.kind()) {
    case Kind::kSum: {
      PolyBuilder b;
      b.add_const(e.constant_term());
      for (size_t i = 0; i < ops.size(); ++i) b.add(ops[i], e.coefficients()[i]);
      return b.build();
    }
    case Kind::kProduct: {
      SymExpr r(1);
      for (size_t i = 0; i < ops.size(); ++i) {
        r = r * pow(ops[i], static_cast<uint32_t>(e.coefficients()[i]));
      }
      return r;
    }
    case Kind::kFloorDiv: return floordiv(ops[0], ops[1]);
    case Kind::kCeilDiv: return ceildiv(ops[0], ops[1]);
    case Kind::kMod: return mod(ops[0], ops[1]);
    case Kind::kMin: return min(ops);
    case Kind::kMax: return max(ops);
    default: return e;
  }
}

}  // namespace detail

using detail::PolyBuilder;
using detail::PolyView;

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  if (a.is_constant() && b.is_constant()) {
    int64_t s = 0;
    return detail::add_checked(a.constant_term(), b.constant_term(), &s) ? SymExpr(s)
                                                                         : SymExpr::overflow();
  }
  if (a.is_constant() && a.constant_term() == 0) return b;  // 0 + x = x
  if (b.is_constant() && b.constant_term() == 0) return a;
  PolyBuilder pb;
  pb.add(a, 1);
  pb.add(b, 1);
  return pb.build();
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) {
  if (b.is_constant() && b.constant_term() == 0) return a;  // x - 0 = x
  if (a == b && !a.is_overflow()) return SymExpr(0);        // x - x = 0
  PolyBuilder pb;
  pb.add(a, 1);
  pb.add(b, -1);
  return pb.build();
}

SymExpr operator-(const SymExpr& a) {
  PolyBuilder pb;
  pb.add(a, -1);
  return pb.build();
}

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  if (a.is_overflow() || b.is_overflow()) return SymExpr::overflow();
  if (a.is_constant()) return detail::scale(b, a.constant_term());
  if (b.is_constant()) return detail::scale(a, b.constant_term());
  // Distributivity: expand (sum a_i)(sum b_j) into sum a_i*b_j; monomials multiply by adding
  // powers.
  PolyView va(a), vb(b);
  // A hostile model can square a many-term shape expression again and again; past this size an
  // expansion is no longer a shape anyone can use, and it becomes the overflow poison instead of
  // taking exponential time and memory.
  constexpr size_t kMaxExpandedTerms = 4096;
  if ((va.size() + 1) * (vb.size() + 1) > kMaxExpandedTerms) return SymExpr::overflow();
  PolyBuilder out;
  for (size_t i = 0; i <= va.size(); ++i) {
    const bool ia = i == va.size();  // index size() stands for the constant term
    const int64_t ca = ia ? va.constant() : va.coeff(i);
    if (ca == 0) continue;
    for (size_t j = 0; j <= vb.size(); ++j) {
      const bool jb = j == vb.size();
      const int64_t cb = jb ? vb.constant() : vb.coeff(j);
      if (cb == 0) continue;
      int64_t c = 0;
      if (!detail::mul_checked(ca, cb, &c)) return SymExpr::overflow();
      if (ia && jb) {
        out.add_const(c);
      } else if (ia) {
        out.add_term(vb.mono(j), c);
      } else if (jb) {
        out.add_term(va.mono(i), c);
      } else {
        SymExpr m = detail::monomial_product(va.mono(i), vb.mono(j));
        if (m.is_overflow()) return m;
        out.add_term(m, c);
      }
    }
  }
  return out.build();
}

SymExpr pow(const SymExpr& base, uint32_t exponent) {
  SymExpr result(1), square = base;
  // Square-and-multiply; x^0 = 1.
  while (exponent != 0) {
    if (exponent & 1u) result = result * square;
    exponent >>= 1;
    if (exponent != 0) square = square * square;
  }
  return result;
}

SymExpr floordiv(const SymExpr& a, const SymExpr& b) {
  if (a.is_overflow() || b.is_overflow()) return SymExpr::overflow();
  if (auto c = b.constant_value()) return detail::floordiv_const(a, *c);
  return detail::div_symbolic(Kind::kFloorDiv, a, b);
}

SymExpr ceildiv(const SymExpr& a, const SymExpr& b) {
  if (a.is_overflow() || b.is_overflow()) return SymExpr::overflow();
  if (auto c = b.constant_value()) {
    if (*c == 0)
      return detail::make_binary(Kind::kCeilDiv, a, b);  // undefined: evaluation reports it
    if (auto v = a.constant_value()) {                   // constant folding
      int64_t q = 0;
      return detail::ceildiv_checked(*v, *c, &q) ? SymExpr(q) : SymExpr::overflow();
    }
    // ceil(x/c) = floor((x + c - 1)/c) for c > 0.
    if (*c > 0) return detail::floordiv_const(a + SymExpr(*c - 1), *c);
    if (*c == detail::kInt64Min) return detail::make_binary(Kind::kCeilDiv, a, b);
    // ceil(x / -c) = -floor(x / c).
    return -detail::floordiv_const(a, -*c);
  }
  return detail::div_symbolic(Kind::kCeilDiv, a, b);
}

SymExpr mod(const SymExpr& a, const SymExpr& b) {
  if (a.is_overflow() || b.is_overflow()) return SymExpr::overflow();
  if (auto c = b.constant_value()) return detail::mod_const(a, *c);
  return detail::div_symbolic(Kind::kMod, a, b);
}

SymExpr min(const SymExpr& a, const SymExpr& b) {
  const SymExpr args[2] = {a, b};
  return detail::min_max(Kind::kMin, args);
}
SymExpr max(const SymExpr& a, const SymExpr& b) {
  const SymExpr args[2] = {a, b};
  return detail::min_max(Kind::kMax, args);
}
SymExpr min(std::span<const SymExpr> args) { return detail::min_max(Kind::kMin, args); }
SymExpr max(std::span<const SymExpr> args) { return detail::min_max(Kind::kMax, args); }

}  // namespace sod2::sym
