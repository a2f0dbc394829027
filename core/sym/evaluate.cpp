// evaluate(): a direct recursive interpreter with checked int64 arithmetic.
#include "core/sym/evaluate.h"

#include <algorithm>

#include "core/sym/int_math.h"

namespace sod2::sym {
namespace {

Status overflow_in(const SymExpr& e) {
  return invalid_argument("int64 overflow evaluating " + e.to_string());
}

Expected<int64_t> eval(const SymExpr& e, const Binding& binding) {
  auto ops = e.operands();
  switch (e.kind()) {
    case Kind::kConst: return e.constant_term();
    case Kind::kSymbol: {
      auto it = binding.find(*e.as_symbol());
      if (it == binding.end()) return not_found("unbound symbol '" + e.symbol_name() + "'");
      return it->second;
    }
    case Kind::kOverflow:
      return invalid_argument("expression overflowed int64 while it was being built");
    case Kind::kSum: {
      int64_t acc = 0;
      for (size_t i = 0; i < ops.size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(int64_t m, eval(ops[i], binding));
        int64_t t = 0;
        if (i == 0 && e.coefficients()[i] == 1) {
          acc = m;
          continue;
        }
        if (!detail::mul_checked(m, e.coefficients()[i], &t)) return overflow_in(e);
        if (i == 0) {
          acc = t;
        } else if (!detail::add_checked(acc, t, &acc)) {
          return overflow_in(e);
        }
      }
      if (!detail::add_checked(acc, e.constant_term(), &acc)) return overflow_in(e);
      return acc;
    }
    case Kind::kProduct: {
      int64_t acc = 1;
      for (size_t i = 0; i < ops.size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(int64_t m, eval(ops[i], binding));
        int64_t f = 0;
        if (!detail::pow_checked(m, e.coefficients()[i], &f)) return overflow_in(e);
        if (i == 0) {
          acc = f;
        } else if (!detail::mul_checked(acc, f, &acc)) {
          return overflow_in(e);
        }
      }
      return acc;
    }
    case Kind::kFloorDiv:
    case Kind::kCeilDiv:
    case Kind::kMod: {
      SOD2_ASSIGN_OR_RETURN(int64_t a, eval(ops[0], binding));
      SOD2_ASSIGN_OR_RETURN(int64_t b, eval(ops[1], binding));
      if (b == 0) return invalid_argument("division by zero evaluating " + e.to_string());
      int64_t r = 0;
      bool ok = e.kind() == Kind::kFloorDiv  ? detail::floordiv_checked(a, b, &r)
                : e.kind() == Kind::kCeilDiv ? detail::ceildiv_checked(a, b, &r)
                                             : detail::mod_checked(a, b, &r);
      if (!ok) return overflow_in(e);
      return r;
    }
    case Kind::kMin:
    case Kind::kMax: {
      SOD2_ASSIGN_OR_RETURN(int64_t acc, eval(ops[0], binding));
      for (size_t i = 1; i < ops.size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(int64_t v, eval(ops[i], binding));
        acc = e.kind() == Kind::kMin ? std::min(acc, v) : std::max(acc, v);
      }
      return acc;
    }
  }
  return internal_error("unknown expression kind");
}

}  // namespace

Expected<int64_t> evaluate(const SymExpr& e, const Binding& binding) { return eval(e, binding); }

}  // namespace sod2::sym
