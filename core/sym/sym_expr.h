// Symbolic integer expressions for tensor dimensions (RDP's dims, small shape values, plans).
//
// A SymExpr is a cheap handle to an immutable node in a process-wide hash-consing table. Every
// constructor below returns a canonical form, so two handles compare equal (one pointer compare)
// exactly when their canonical forms are structurally equal. Canonical forms are not complete
// (floordiv(a,2)*2 + mod(a,2) equals a but is another handle), so "different handles" means "not
// known equal", never "known different": ask the prover (prover.h) for that.
//
// Semantics are those of mathematical integers with Python's division: floordiv rounds toward
// -inf, mod has the sign of the divisor, ceildiv(a,b) = -floordiv(-a,b). A rewrite only has to
// hold wherever the original is defined: floordiv(n*x, n) becomes x although the left side is
// undefined at n = 0 (a model that divides by a zero dim is broken at run time either way). Only a
// divisor that is the constant 0 is kept, so that evaluation reports it.
//
// Overflow: a constant or coefficient that would not fit in int64 turns the whole expression into
// the `overflow()` poison, which absorbs every operation, has an unbounded range and evaluates to
// an error. Valid models never get there; the poison keeps adversarial ones from wrapping around.
//
// ceildiv: with a constant positive divisor c it is canonicalised to floordiv(x + c-1, c)
// (ceil(x/c) = floor((x+c-1)/c) for c > 0), so `ceildiv(h,32)` and the exporter idiom
// `floordiv(h+31,32)` are one handle, printed as the latter. With a symbolic divisor it stays a
// kCeilDiv atom, because the +d-1 trick needs d > 0, which only ranges can tell.
//
// Canonical-form invariants (verify() checks them all):
//  I1  kConst and kSymbol have no operands; symbol names are unique in the table; kOverflow is a
//      singleton and never an operand.
//  I2  kSum = constant_term() + sum(coefficients()[i] * operands()[i]): operands are monomials
//      (atoms or kProduct) strictly increasing in term order (higher degree first, then
//      compare()); coefficients are non-zero; never a bare monomial (1 operand, coefficient 1,
//      constant 0) and never term-free (that is a kConst); no pair of terms c*k*floordiv(x,c)
//      and k*mod(x,c) (they fold to k*x).
//  I3  kProduct = prod(operands()[i] ^ coefficients()[i]): operands are atoms strictly increasing
//      by compare(), powers >= 1, never a single atom to the power 1. Products are fully expanded:
//      no sum is ever a factor.
//  I4  Atoms are kSymbol, kFloorDiv, kCeilDiv, kMod, kMin, kMax.
//  I5  floordiv(x, c), constant c: c >= 2, or c is 0 or INT64_MIN (kept verbatim: undefined,
//      resp. not negatable); x is not a constant; for c >= 2 no coefficient of x is a multiple of
//      c, x's constant is in [0, c), gcd(coefficients of x, c) = 1 and x is not
//      `floordiv(y, c2) + k` with constant c2 > 0.
//  I6  mod(x, c), constant c >= 2 (or 0 / INT64_MIN, kept verbatim): coefficients of x in
//      [1, c), constant in [0, c), gcd(coefficients, c) = 1, no term of x is mod(y, c2) with
//      c | c2.
//  I7  kCeilDiv has a non-constant divisor, or the constant 0 or INT64_MIN.
//  I8  Symbolic divisor d = k*M (single monomial M): no term of x is a multiple of k*M, x != 0
//      and x != d.
//  I9  kMin/kMax: >= 2 operands strictly increasing by compare(); none of the same kind
//      (flattened); at most one constant; no two operands differ by a constant; no operand of
//      min is a max containing another operand of that min (absorption), and vice versa.
//  I10 Each node's hash and depth match a recomputation and it is the table's node for its key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status/status.h"

namespace sod2::sym {

// The enumerator order is the first key of compare(): symbols sort first, constants last, so
// `min(a,4)` and `h+floordiv(h,2)` read naturally.
enum class Kind : uint8_t {
  kSymbol,
  kFloorDiv,
  kCeilDiv,
  kMod,
  kMin,
  kMax,
  kProduct,
  kSum,
  kConst,
  kOverflow,
};

const char* kind_name(Kind kind);

namespace detail {
struct Node;
}

class Symbol;

class SymExpr {
 public:
  SymExpr();                 // the constant 0
  SymExpr(int64_t value);    // NOLINT(google-explicit-constructor): `2*n + 1`
  SymExpr(const Symbol& s);  // NOLINT(google-explicit-constructor)

  static SymExpr overflow();

  Kind kind() const;
  bool is_constant() const { return kind() == Kind::kConst; }
  bool is_symbol() const { return kind() == Kind::kSymbol; }
  bool is_overflow() const { return kind() == Kind::kOverflow; }
  std::optional<int64_t> constant_value() const;
  std::optional<Symbol> as_symbol() const;

  // Structure, for passes outside this folder (shape program compilers, serialisers):
  // kSum: operands are monomials, coefficients their factors, constant_term() the constant.
  // kProduct: operands are atoms, coefficients their powers.
  // kFloorDiv/kCeilDiv/kMod: {numerator, divisor}. kMin/kMax: the arguments.
  std::span<const SymExpr> operands() const;
  std::span<const int64_t> coefficients() const;
  int64_t constant_term() const;           // kConst's value, kSum's constant, else 0
  const std::string& symbol_name() const;  // empty unless kSymbol
  uint32_t depth() const;                  // 1 for leaves; recursive passes recurse this deep
  uint64_t hash() const;                   // structural and deterministic across runs

  std::string to_string() const;  // printer.cpp; parse() reads it back

  const detail::Node* node() const { return node_; }
  static SymExpr from_node(const detail::Node* node) { return SymExpr(node, 0); }  // internal

 private:
  SymExpr(const detail::Node* node, int /*tag*/) : node_(node) {}  // a tag: SymExpr(0) is 0
  const detail::Node* node_;
};

// A SymExpr known to be a symbol: the key type of RangeMap, Binding and Substitution.
class Symbol {
 public:
  const std::string& name() const;
  SymExpr expr() const { return SymExpr::from_node(node_); }
  const detail::Node* node() const { return node_; }
  static Symbol from_node(const detail::Node* node) { return Symbol(node, 0); }  // internal

  friend bool operator==(const Symbol& a, const Symbol& b) { return a.node_ == b.node_; }

 private:
  Symbol(const detail::Node* node, int /*tag*/) : node_(node) {}
  const detail::Node* node_;
};

// Interns `name`; the same name always gives the same symbol. Any name is allowed: names outside
// the identifier alphabet are quoted by the printer.
Symbol symbol(std::string_view name);

inline bool operator==(const SymExpr& a, const SymExpr& b) { return a.node() == b.node(); }

SymExpr operator+(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a, const SymExpr& b);
SymExpr operator*(const SymExpr& a, const SymExpr& b);
SymExpr operator-(const SymExpr& a);
SymExpr floordiv(const SymExpr& a, const SymExpr& b);
SymExpr ceildiv(const SymExpr& a, const SymExpr& b);
SymExpr mod(const SymExpr& a, const SymExpr& b);
SymExpr min(const SymExpr& a, const SymExpr& b);
SymExpr max(const SymExpr& a, const SymExpr& b);
SymExpr min(std::span<const SymExpr> args);  // at least one argument
SymExpr max(std::span<const SymExpr> args);
SymExpr pow(const SymExpr& base, uint32_t exponent);

// The deterministic total order of canonical forms (kind, then contents; symbols by name).
// Term order inside sums, argument order of min/max and golden output all derive from it.
int compare(const SymExpr& a, const SymExpr& b);
struct SymExprLess {
  bool operator()(const SymExpr& a, const SymExpr& b) const { return compare(a, b) < 0; }
};

// Checks invariants I1..I10 on the whole expression; ok() for every expression this library
// builds. Meant for tests and debug assertions (it walks the whole DAG).
Status verify(const SymExpr& e);

// Number of distinct nodes ever interned (all kinds). For diagnostics and tests.
size_t interned_node_count();

// ----- internals the inline accessors need -------------------------------------------------------

namespace detail {
struct Node {
  Kind kind;
  uint32_t depth;
  uint64_t hash;
  int64_t value;     // kConst: the value; kSum: the constant term; else 0
  std::string name;  // kSymbol only
  std::vector<SymExpr> operands;
  std::vector<int64_t> coeffs;  // kSum: coefficients; kProduct: powers; else empty
};
}  // namespace detail

inline Kind SymExpr::kind() const { return node_->kind; }
inline std::span<const SymExpr> SymExpr::operands() const { return node_->operands; }
inline std::span<const int64_t> SymExpr::coefficients() const { return node_->coeffs; }
inline int64_t SymExpr::constant_term() const { return node_->value; }
inline const std::string& SymExpr::symbol_name() const { return node_->name; }
inline uint32_t SymExpr::depth() const { return node_->depth; }
inline uint64_t SymExpr::hash() const { return node_->hash; }
inline std::optional<int64_t> SymExpr::constant_value() const {
  if (node_->kind != Kind::kConst) return std::nullopt;
  return node_->value;
}
inline SymExpr::SymExpr(const Symbol& s) : node_(s.node()) {}
inline const std::string& Symbol::name() const { return node_->name; }

}  // namespace sod2::sym

template <>
struct std::hash<sod2::sym::SymExpr> {
  size_t operator()(const sod2::sym::SymExpr& e) const { return e.hash(); }
};
template <>
struct std::hash<sod2::sym::Symbol> {
  size_t operator()(const sod2::sym::Symbol& s) const { return s.expr().hash(); }
};
