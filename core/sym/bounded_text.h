// An expression's text for a report, within a length. Expressions share subexpressions (a DAG),
// but their text is a tree: a memory plan's offsets over execution symbols, each the max over the
// ends of the tensors below it, can print as hundreds of megabytes (a mixture-of-experts model's
// plan versions did). Reports print such an expression as a short stand-in instead, and the
// check costs one pass over the DAG, not the printing.
#pragma once

#include <cstddef>
#include <string>

#include "core/sym/sym_expr.h"

namespace sod2::sym {

// At least the length of e.to_string() when that is at most `cap`, else some value above
// `cap` (the walk stops counting there).
size_t text_length(const SymExpr& e, size_t cap);

// e.to_string() when it is at most `max_chars` long; else "<max(...): about N characters as text,
// M distinct subexpressions>", which parse() rejects (so no tool mistakes it for the expression).
std::string bounded_text(const SymExpr& e, size_t max_chars = 2048);

}  // namespace sod2::sym
