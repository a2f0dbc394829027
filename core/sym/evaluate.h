// Concrete evaluation of an expression under a binding of its symbols.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "core/status/status.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym {

using Binding = std::unordered_map<Symbol, int64_t>;

// Python semantics (floordiv toward -inf, mod with the divisor's sign). Errors: kNotFound for an
// unbound symbol (named), kInvalidArgument for a division by zero or an int64 overflow (naming
// the subexpression). Sums are accumulated term by term in term order, products factor by
// factor, exactly as ShapeProgram does, so both report overflow on the same inputs.
Expected<int64_t> evaluate(const SymExpr& e, const Binding& binding);

}  // namespace sod2::sym
