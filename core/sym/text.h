// Text form of expressions: SymExpr::to_string() prints (printer.cpp), parse() reads back
// (parser.cpp).
//
// Grammar (whitespace allowed between tokens):
//   expr    := term (('+' | '-') term)*
//   term    := unary ('*' unary)*
//   unary   := '-' unary | primary
//   primary := integer | name | call | '(' expr ')'
//   call    := ('floordiv' | 'ceildiv' | 'mod') '(' expr ',' expr ')'
//            | ('min' | 'max') '(' expr (',' expr)* ')' | 'overflow' '(' ')'
//   name    := [A-Za-z_][A-Za-z0-9_.:]*  |  '"' (any char, with \" and \\ escaped) '"'
// A name followed by '(' is a call, so symbols may be called `min` or `mod`.
#pragma once

#include <string>
#include <string_view>

#include "core/status/status.h"
#include "core/sym/sym_expr.h"

namespace sod2::sym {

// Parses `text` into its canonical form. Errors are kParseError naming the 1-based column.
Expected<SymExpr> parse(std::string_view text);

bool is_identifier_start(char c);
bool is_identifier_char(char c);
// Appends `name` as printed: bare when it is an identifier, quoted otherwise.
void append_symbol_name(std::string_view name, std::string* out);

}  // namespace sod2::sym
