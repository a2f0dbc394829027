// Building blocks shared by the canonicaliser, the simplifier and verify(): the interning entry
// point, a non-allocating polynomial view of any expression, and a polynomial builder that
// normalises term lists. Not part of the public API.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/sym/sym_expr.h"

namespace sod2::sym::detail {

// Returns the unique node with these contents. Callers pass contents that already satisfy the
// canonical-form invariants; the table only deduplicates.
SymExpr intern(Kind kind, int64_t value, std::string_view name, std::span<const SymExpr> operands,
               std::span<const int64_t> coeffs);

// Recomputes the structural hash the table uses (verify() checks stored hashes against it).
uint64_t structural_hash(Kind kind, int64_t value, std::string_view name,
                         std::span<const SymExpr> operands, std::span<const int64_t> coeffs);

inline bool is_atom_kind(Kind k) {
  return k == Kind::kSymbol || k == Kind::kFloorDiv || k == Kind::kCeilDiv || k == Kind::kMod ||
         k == Kind::kMin || k == Kind::kMax;
}
inline bool is_monomial_kind(Kind k) { return is_atom_kind(k) || k == Kind::kProduct; }

// Total degree of a monomial (sum of powers); atoms have degree 1.
uint64_t degree(const SymExpr& mono);

// Term order inside a sum: higher degree first so `h*w+2*h+1` reads like a polynomial, then
// compare() for determinism.
int compare_terms(const SymExpr& a, const SymExpr& b);

// Any non-overflow expression read as constant + sum(coeff(i) * mono(i)) without allocating.
// Holds a copy of the expression so that an atom can be viewed as a one-term sum of itself.
class PolyView {
 public:
  explicit PolyView(const SymExpr& e);
  PolyView(const PolyView&) = delete;  // monos_ may point into self_
  PolyView& operator=(const PolyView&) = delete;

  size_t size() const { return monos_.size(); }
  const SymExpr& mono(size_t i) const { return monos_[i]; }
  int64_t coeff(size_t i) const { return coeffs_[i]; }
  int64_t constant() const { return constant_; }

 private:
  SymExpr self_;
  std::span<const SymExpr> monos_;
  std::span<const int64_t> coeffs_;
  int64_t constant_ = 0;
};

struct Term {
  SymExpr mono;
  int64_t coeff;
};

// Accumulates constant + terms in any order; build() sorts, merges equal monomials, drops zero
// coefficients and interns. Any int64 overflow on the way makes the result the overflow poison.
class PolyBuilder {
 public:
  void add_const(int64_t k);
  void add_term(const SymExpr& mono, int64_t coeff);  // mono must be a monomial
  void add(const SymExpr& e, int64_t scale);          // adds scale * e, e any expression
  void set_overflow() { overflow_ = true; }

  bool overflowed() const { return overflow_; }
  int64_t constant() const { return constant_; }
  std::vector<Term>& terms() { return terms_; }
  SymExpr build();

 private:
  // Folds c*k*floordiv(x,c) + k*mod(x,c) into k*x; true (and *out set) when it fired.
  bool merge_division_identity(SymExpr* out);

  int64_t constant_ = 0;
  std::vector<Term> terms_;
  bool overflow_ = false;
};

// Monomial arithmetic. The constant 1 stands for the empty monomial.
struct Factor {
  SymExpr atom;
  int64_t power;
};
void append_factors(const SymExpr& mono, std::vector<Factor>* out);
SymExpr make_monomial(std::vector<Factor>* factors);  // sorts and merges; may return overflow
SymExpr monomial_product(const SymExpr& a, const SymExpr& b);
// True when every factor of `den` divides `num`; *quotient is then num/den (1 when equal).
bool monomial_divide(const SymExpr& num, const SymExpr& den, SymExpr* quotient);

// Rebuilds `e` with new operands through the canonical constructors, so substitutions and
// simplifications of children re-canonicalise their parents.
SymExpr rebuild(const SymExpr& e, std::span<const SymExpr> operands);

}  // namespace sod2::sym::detail
