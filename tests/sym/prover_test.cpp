// Prover truth tables, including relations that hold for some bindings only (kUnknown).
#include <gtest/gtest.h>

#include "core/sym/evaluate.h"
#include "core/sym/prover.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

enum class Rel { kEq, kNe, kLe, kLt, kGe, kGt };

struct ProofCase {
  const char* a;
  Rel rel;
  const char* b;
  Proof expected;
};

RangeMap ranges() {
  RangeMap r;
  EXPECT_TRUE(r.set(symbol("h"), {32, 1024}).ok());
  EXPECT_TRUE(r.set(symbol("h32"), {32, 1024, 32}).ok());
  EXPECT_TRUE(r.set(symbol("w"), {1, 100}).ok());
  EXPECT_TRUE(r.set(symbol("n"), {-10, 10}).ok());
  return r;
}

Proof prove(const ProofCase& c, const RangeMap& r) {
  SymExpr a = P(c.a), b = P(c.b);
  switch (c.rel) {
    case Rel::kEq: return prove_eq(a, b, r);
    case Rel::kNe: return prove_ne(a, b, r);
    case Rel::kLe: return prove_le(a, b, r);
    case Rel::kLt: return prove_lt(a, b, r);
    case Rel::kGe: return prove_ge(a, b, r);
    case Rel::kGt: return prove_gt(a, b, r);
  }
  return Proof::kUnknown;
}

class ProverTable : public ::testing::TestWithParam<ProofCase> {};

TEST_P(ProverTable, Decides) {
  const ProofCase& c = GetParam();
  EXPECT_EQ(proof_name(prove(c, ranges())), std::string(proof_name(c.expected)))
      << c.a << " rel " << static_cast<int>(c.rel) << " " << c.b;
  testing::ExpectRoundTrip(P(c.a));
  testing::ExpectRoundTrip(P(c.b));
}

constexpr Proof T = Proof::kTrue;
constexpr Proof F = Proof::kFalse;
constexpr Proof U = Proof::kUnknown;

INSTANTIATE_TEST_SUITE_P(Sym, ProverTable,
                         ::testing::ValuesIn(std::vector<ProofCase>{
                             // Equal only for some h: an assumption for RDP, never a proof.
                             {"2*ceildiv(h,32)", Rel::kEq, "ceildiv(h,16)", U},
                             {"2*ceildiv(h32,32)", Rel::kEq, "ceildiv(h32,16)", T},
                             {"floordiv(h32,32)*32", Rel::kEq, "h32", T},
                             {"floordiv(h,32)*32", Rel::kEq, "h", U},
                             {"mod(h32,32)", Rel::kEq, "0", T},
                             {"mod(h32+1,32)", Rel::kEq, "0", F},
                             {"batch*seq", Rel::kEq, "seq*batch", T},
                             {"(a+1)*(a+1)", Rel::kEq, "a*a+2*a+1", T},
                             {"h", Rel::kEq, "h+1", F},
                             {"2*a", Rel::kEq, "2*b+1", F},  // parity
                             {"a", Rel::kEq, "b", U},
                             {"w", Rel::kEq, "n", U},
                             {"w", Rel::kEq, "n+200", F},
                             {"h", Rel::kNe, "w", U},
                             {"h", Rel::kNe, "w+2000", T},
                             // Order.
                             {"w", Rel::kLe, "100", T},
                             {"w", Rel::kLe, "99", U},
                             {"w", Rel::kLe, "0", F},
                             {"w", Rel::kLt, "101", T},
                             {"w", Rel::kLt, "100", U},
                             {"0", Rel::kLt, "w", T},
                             {"w", Rel::kGe, "1", T},
                             {"w", Rel::kGt, "100", F},
                             {"h", Rel::kGe, "w", U},
                             {"h", Rel::kGe, "w-68", T},
                             {"batch", Rel::kGe, "0", T},  // default range: dims are non-negative
                             {"batch", Rel::kGt, "0", U},
                             {"min(a,b)", Rel::kLe, "a", T},
                             {"b", Rel::kLe, "max(a,b)", T},
                             {"min(a,b)", Rel::kLe, "max(a,c)", T},
                             {"min(a,b)", Rel::kEq, "a", U},
                             {"mod(a,8)", Rel::kLt, "8", T},
                             {"mod(n,8)", Rel::kGe, "0", T},
                             {"floordiv(w,128)", Rel::kEq, "0", T},
                             {"n*n", Rel::kGe, "0", T},
                             {"n*n+1", Rel::kEq, "0", F},
                             {"floordiv(w,n)", Rel::kLe, "100", T},
                             {"overflow()", Rel::kEq, "overflow()", U},
                             {"9223372036854775807*w", Rel::kGe, "1", T},
                         }));

TEST(Prover, AssumptionExampleReallyIsMixed) {
  // The kUnknown above is honest: the equality holds at h = 32 and fails at h = 33.
  SymExpr lhs = P("2*ceildiv(h,32)"), rhs = P("ceildiv(h,16)");
  Binding at32{{symbol("h"), 32}}, at33{{symbol("h"), 33}};
  EXPECT_EQ(*evaluate(lhs, at32), *evaluate(rhs, at32));
  EXPECT_NE(*evaluate(lhs, at33), *evaluate(rhs, at33));
}

}  // namespace
}  // namespace sod2::sym
