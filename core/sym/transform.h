// Structural transformations: substitution and free symbols.
#pragma once

#include <unordered_map>
#include <vector>

#include "core/sym/sym_expr.h"

namespace sod2::sym {

using Substitution = std::unordered_map<Symbol, SymExpr>;

// Replaces every mapped symbol simultaneously (the replacements are not substituted again) and
// re-canonicalises on the way up, so substitute(floordiv(h,2), {h: 2*w}) is `w`.
SymExpr substitute(const SymExpr& e, const Substitution& map);

// The distinct symbols of `e`, sorted by name (deterministic for goldens and error messages).
std::vector<Symbol> free_symbols(const SymExpr& e);

}  // namespace sod2::sym
