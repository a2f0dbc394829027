// Compiles symbolic expressions into the runtime's shape program (runtime/program/shape_program.h):
// the one bridge from SymExpr to the contract, so the runtime never links the symbolic library.
#pragma once

#include <span>

#include "core/status/status.h"
#include "core/sym/sym_expr.h"
#include "runtime/program/shape_program.h"

namespace sod2::sym {

// Output i of the program is outputs[i]; input j is inputs[j]. Every node shared between outputs
// (hash-consing makes sharing structural) is computed once. Errors: a free symbol not in `inputs`
// (named), an overflow() expression, more than 2^31 registers.
Expected<rt::ShapeProgram> compile_shape_program(std::span<const SymExpr> outputs,
                                                 std::span<const Symbol> inputs);

}  // namespace sod2::sym
