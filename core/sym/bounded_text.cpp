#include "core/sym/bounded_text.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace sod2::sym {
namespace {

size_t digits(int64_t v) { return std::to_string(v).size(); }

// Printed length per distinct node, memoised, saturating at `cap + 1`: never below what the
// printer (printer.cpp) writes, since it counts every coefficient, constant and quote it might.
class LengthWalk {
 public:
  explicit LengthWalk(size_t cap) : cap_(cap) {}

  size_t length(const SymExpr& e) {
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    size_t n = 0;
    switch (e.kind()) {
      case Kind::kSymbol: n = e.symbol_name().size() + 2; break;  // quotes, at most
      case Kind::kConst: n = digits(e.constant_term()); break;
      case Kind::kOverflow: n = 10; break;
      case Kind::kSum:
      case Kind::kProduct: {
        n = digits(e.constant_term()) + 1;
        const auto ops = e.operands();
        const auto coeffs = e.coefficients();
        for (size_t i = 0; i < ops.size(); ++i) {
          // A product writes each factor `power` times; a sum writes "coeff*" before a term.
          const size_t times =
              e.kind() == Kind::kProduct ? static_cast<size_t>(std::max<int64_t>(coeffs[i], 1)) : 1;
          const size_t one = length(ops[i]) + 1;
          add(&n, one > cap_ / times ? cap_ + 1 : one * times);
          if (e.kind() == Kind::kSum) add(&n, digits(coeffs[i]) + 1);
        }
        break;
      }
      default: {  // calls: name(arg,arg)
        n = 10;
        for (const SymExpr& op : e.operands()) add(&n, length(op) + 1);
        break;
      }
    }
    n = std::min(n, cap_ + 1);
    memo_.emplace(e.node(), n);
    return n;
  }

  size_t distinct() const { return memo_.size(); }

 private:
  void add(size_t* n, size_t more) const { *n = std::min(*n + std::min(more, cap_ + 1), cap_ + 1); }

  size_t cap_;
  std::unordered_map<const detail::Node*, size_t> memo_;
};

}  // namespace

size_t text_length(const SymExpr& e, size_t cap) { return LengthWalk(cap).length(e); }

std::string bounded_text(const SymExpr& e, size_t max_chars) {
  // Count far enough past the limit to say how large the text would be.
  constexpr size_t kCountTo = size_t{1} << 40;
  LengthWalk walk(kCountTo);
  const size_t n = walk.length(e);
  if (n <= max_chars) return e.to_string();  // the count is never below the text's length
  std::string size = n > kCountTo ? "more than 10^12" : std::to_string(n);
  return "<" + std::string(kind_name(e.kind())) + "(...): about " + size + " characters as text, " +
         std::to_string(walk.distinct()) + " distinct subexpressions>";
}

}  // namespace sod2::sym
