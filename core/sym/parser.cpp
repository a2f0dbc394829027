// parse(): a recursive-descent reader for the grammar in text.h. Every node it builds goes
// through the canonical constructors, so `N*2`, `2*N` and `N+N` parse to one handle.
#include <string>
#include <vector>

#include "core/sym/text.h"

namespace sod2::sym {
namespace {

constexpr int kMaxNesting = 256;  // bounds recursion on hostile input ("((((...")

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expected<SymExpr> parse_all() {
    SOD2_ASSIGN_OR_RETURN(SymExpr e, expr());
    skip_ws();
    if (pos_ != text_.size()) return error(pos_, "unexpected '" + std::string(1, peek()) + "'");
    return e;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= text_.size(); }

  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }

  bool consume(char c) {
    skip_ws();
    if (peek() != c || at_end()) return false;
    ++pos_;
    return true;
  }

  Status error(size_t at, const std::string& what) const {
    return parse_error("expression \"" + std::string(text_) + "\", column " +
                       std::to_string(at + 1) + ": " + what);
  }

  Status expect(char c) {
    if (consume(c)) return {};
    return error(pos_, at_end() ? "expected '" + std::string(1, c) + "' before the end"
                                : "expected '" + std::string(1, c) + "', found '" +
                                      std::string(1, peek()) + "'");
  }

  Expected<SymExpr> expr() {
    if (++depth_ > kMaxNesting) return error(pos_, "nesting deeper than 256");
    SOD2_ASSIGN_OR_RETURN(SymExpr acc, term(false));
    while (true) {
      if (consume('+')) {
        SOD2_ASSIGN_OR_RETURN(SymExpr t, term(false));
        acc = acc + t;
      } else if (consume('-')) {
        // The minus is pushed into the term so `a-9223372036854775808*b` reads INT64_MIN.
        SOD2_ASSIGN_OR_RETURN(SymExpr t, term(true));
        acc = acc + t;
      } else {
        break;
      }
    }
    --depth_;
    return acc;
  }

  Expected<SymExpr> term(bool negate) {
    SOD2_ASSIGN_OR_RETURN(SymExpr acc, unary(negate));
    while (consume('*')) {
      SOD2_ASSIGN_OR_RETURN(SymExpr f, unary(false));
      acc = acc * f;
    }
    return acc;
  }

  Expected<SymExpr> unary(bool negate) {
    if (consume('-')) {
      if (++depth_ > kMaxNesting) return error(pos_, "nesting deeper than 256");
      auto r = unary(!negate);
      --depth_;
      return r;
    }
    return primary(negate);
  }

  Expected<SymExpr> primary(bool negate) {
    skip_ws();
    const size_t start = pos_;
    if (at_end()) return error(pos_, "expected a number, a name or '(' before the end");
    const char c = peek();
    if (c >= '0' && c <= '9') return integer(negate);
    if (c == '(') {
      ++pos_;
      SOD2_ASSIGN_OR_RETURN(SymExpr e, expr());
      SOD2_RETURN_IF_ERROR(expect(')'));
      return negate ? -e : e;
    }
    if (c == '"') {
      SOD2_ASSIGN_OR_RETURN(std::string name, quoted());
      SymExpr s = symbol(name);
      return negate ? -s : s;
    }
    if (is_identifier_start(c)) {
      while (!at_end() && is_identifier_char(peek())) ++pos_;
      std::string_view name = text_.substr(start, pos_ - start);
      skip_ws();
      SymExpr e;
      if (peek() == '(' && !at_end()) {
        SOD2_ASSIGN_OR_RETURN(e, call(name, start));
      } else {
        e = symbol(name);
      }
      return negate ? -e : e;
    }
    return error(pos_, "expected a number, a name or '(', found '" + std::string(1, c) + "'");
  }

  Expected<SymExpr> integer(bool negate) {
    const size_t start = pos_;
    // Magnitudes up to 2^63 are representable when negated (INT64_MIN), 2^63-1 otherwise.
    const uint64_t limit = negate ? (uint64_t{1} << 63) : (uint64_t{1} << 63) - 1;
    uint64_t v = 0;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const uint64_t digit = static_cast<uint64_t>(peek() - '0');
      if (v > (limit - digit) / 10) return error(start, "integer literal outside int64");
      v = v * 10 + digit;
      ++pos_;
    }
    if (!at_end() && is_identifier_char(peek())) {
      return error(pos_, "a name cannot start with a digit (quote it: \"2d\")");
    }
    return SymExpr(negate ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v));
  }

  Expected<std::string> quoted() {
    const size_t start = pos_;
    ++pos_;  // opening quote
    std::string name;
    while (!at_end() && peek() != '"') {
      if (peek() == '\\') {
        ++pos_;
        if (at_end()) break;
      }
      name += peek();
      ++pos_;
    }
    if (at_end()) return error(start, "unterminated quoted name");
    ++pos_;  // closing quote
    return name;
  }

  Expected<SymExpr> call(std::string_view name, size_t name_pos) {
    ++pos_;  // '('
    std::vector<SymExpr> args;
    skip_ws();
    if (peek() != ')') {
      do {
        SOD2_ASSIGN_OR_RETURN(SymExpr a, expr());
        args.push_back(a);
      } while (consume(','));
    }
    SOD2_RETURN_IF_ERROR(expect(')'));
    auto arity = [&](size_t n) -> Status {
      if (args.size() == n) return {};
      return error(name_pos, std::string(name) + " takes " + std::to_string(n) +
                                 " arguments, got " + std::to_string(args.size()));
    };
    if (name == "floordiv" || name == "ceildiv" || name == "mod") {
      SOD2_RETURN_IF_ERROR(arity(2));
      if (name == "floordiv") return floordiv(args[0], args[1]);
      if (name == "ceildiv") return ceildiv(args[0], args[1]);
      return mod(args[0], args[1]);
    }
    if (name == "min" || name == "max") {
      if (args.empty()) return error(name_pos, std::string(name) + " needs an argument");
      return name == "min" ? min(args) : max(args);
    }
    if (name == "overflow") {
      SOD2_RETURN_IF_ERROR(arity(0));
      return SymExpr::overflow();
    }
    return error(name_pos, "unknown function '" + std::string(name) +
                               "' (expected floordiv, ceildiv, mod, min, max)");
  }

  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Expected<SymExpr> parse(std::string_view text) { return Parser(text).parse_all(); }

}  // namespace sod2::sym
