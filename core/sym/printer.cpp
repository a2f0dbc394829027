// to_string(): the canonical text form. It is a function of the canonical node only, so it is
// deterministic and golden-testable, and parse() (parser.cpp) reads every output back to the same
// handle. Layout: positive terms, then negative terms (each group in term order), then the
// constant, except that a positive constant leads when every term is negative (`1-a`). Powers are
// written as repeated factors (`h*h`) so the grammar needs no `^`.
#include <string>

#include "core/sym/sym_expr.h"
#include "core/sym/text.h"

namespace sod2::sym {
namespace {

uint64_t magnitude(int64_t v) {
  return v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

void print(const SymExpr& e, std::string* out);

void print_monomial(const SymExpr& mono, std::string* out) {
  if (mono.kind() != Kind::kProduct) {
    print(mono, out);
    return;
  }
  bool first = true;
  for (size_t i = 0; i < mono.operands().size(); ++i) {
    for (int64_t p = 0; p < mono.coefficients()[i]; ++p) {
      if (!first) *out += '*';
      first = false;
      print(mono.operands()[i], out);
    }
  }
}

void print_term(int64_t coeff, const SymExpr& mono, bool first, std::string* out) {
  if (coeff < 0) {
    *out += '-';
  } else if (!first) {
    *out += '+';
  }
  if (magnitude(coeff) != 1) {
    *out += std::to_string(magnitude(coeff));
    *out += '*';
  }
  print_monomial(mono, out);
}

void print_sum(const SymExpr& e, std::string* out) {
  auto monos = e.operands();
  auto coeffs = e.coefficients();
  const int64_t k = e.constant_term();
  bool any_positive = false;
  for (int64_t c : coeffs) any_positive |= c > 0;
  bool first = true;
  if (!any_positive && k > 0) {
    *out += std::to_string(k);
    first = false;
  }
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < monos.size(); ++i) {
      if ((coeffs[i] > 0) != (pass == 0)) continue;
      print_term(coeffs[i], monos[i], first, out);
      first = false;
    }
  }
  if (k < 0) {
    *out += '-';
    *out += std::to_string(magnitude(k));
  } else if (k > 0 && any_positive) {
    *out += '+';
    *out += std::to_string(k);
  }
}

void print_call(const char* name, const SymExpr& e, std::string* out) {
  *out += name;
  *out += '(';
  for (size_t i = 0; i < e.operands().size(); ++i) {
    if (i > 0) *out += ',';
    print(e.operands()[i], out);
  }
  *out += ')';
}

void print(const SymExpr& e, std::string* out) {
  switch (e.kind()) {
    case Kind::kConst: *out += std::to_string(e.constant_term()); return;
    case Kind::kSymbol: append_symbol_name(e.symbol_name(), out); return;
    case Kind::kOverflow: *out += "overflow()"; return;
    case Kind::kProduct: print_monomial(e, out); return;
    case Kind::kSum: print_sum(e, out); return;
    case Kind::kFloorDiv:
    case Kind::kCeilDiv:
    case Kind::kMod:
    case Kind::kMin:
    case Kind::kMax: print_call(kind_name(e.kind()), e, out); return;
  }
}

}  // namespace

bool is_identifier_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_identifier_char(char c) {
  return is_identifier_start(c) || (c >= '0' && c <= '9') || c == '.' || c == ':';
}

void append_symbol_name(std::string_view name, std::string* out) {
  bool plain = !name.empty() && is_identifier_start(name[0]);
  for (char c : name) plain = plain && is_identifier_char(c);
  if (plain) {
    *out += name;
    return;
  }
  // Names from arbitrary dim_params ("batch size", "N-1") are quoted so the text stays parseable.
  *out += '"';
  for (char c : name) {
    if (c == '"' || c == '\\') *out += '\\';
    *out += c;
  }
  *out += '"';
}

std::string SymExpr::to_string() const {
  std::string out;
  print(*this, &out);
  return out;
}

}  // namespace sod2::sym
