// evaluate(): Python semantics for negative operands, and its three errors.
#include <gtest/gtest.h>

#include "core/sym/evaluate.h"
#include "core/sym/sym_expr.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

struct EvalCase {
  const char* expr;
  int64_t a;
  int64_t b;
  int64_t expected;
};

class EvaluateTable : public ::testing::TestWithParam<EvalCase> {};

TEST_P(EvaluateTable, MatchesPython) {
  const EvalCase& c = GetParam();
  Binding binding{{symbol("a"), c.a}, {symbol("b"), c.b}};
  auto v = evaluate(P(c.expr), binding);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  EXPECT_EQ(*v, c.expected) << c.expr << " at a=" << c.a << ", b=" << c.b;
}

// Expected values are Python's: a // b, a % b, -(-a // b), min, max.
INSTANTIATE_TEST_SUITE_P(Sym, EvaluateTable,
                         ::testing::ValuesIn(std::vector<EvalCase>{
                             {"floordiv(a,b)", -7, 2, -4},
                             {"floordiv(a,b)", 7, -2, -4},
                             {"floordiv(a,b)", -7, -2, 3},
                             {"floordiv(a,b)", 7, 2, 3},
                             {"mod(a,b)", -7, 2, 1},
                             {"mod(a,b)", 7, -2, -1},
                             {"mod(a,b)", -7, -2, -1},
                             {"mod(a,b)", 7, 2, 1},
                             {"ceildiv(a,b)", -7, 2, -3},
                             {"ceildiv(a,b)", 7, 2, 4},
                             {"ceildiv(a,b)", 7, -2, -3},
                             {"floordiv(a,2)", -7, 0, -4},
                             {"mod(a,2)", -7, 0, 1},
                             {"ceildiv(a,32)", 33, 0, 2},
                             {"mod(a,b)", INT64_MIN, -1, 0},
                             {"floordiv(a,b)", INT64_MIN, 1, INT64_MIN},
                             {"min(a,b,3)", 5, 4, 3},
                             {"max(a,b,3)", 5, 4, 5},
                             {"a*a*b+2*a-1", 3, 2, 23},
                             {"(a+b)*(a-b)", 5, 3, 16},
                             {"a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a", -1,
                              0, 1},
                         }));

TEST(Evaluate, UnboundSymbolIsNamed) {
  auto v = evaluate(P("batch*seq"), Binding{{symbol("batch"), 2}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotFound);
  EXPECT_NE(v.status().message().find("'seq'"), std::string::npos) << v.status().message();
}

TEST(Evaluate, DivisionByZeroIsAnError) {
  Binding b{{symbol("a"), 5}, {symbol("n"), 0}};
  for (const char* e : {"floordiv(a,n)", "ceildiv(a,n)", "mod(a,n)", "floordiv(a,0)"}) {
    auto v = evaluate(P(e), b);
    ASSERT_FALSE(v.ok()) << e;
    EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(v.status().message().find("division by zero"), std::string::npos);
  }
}

TEST(Evaluate, OverflowIsAnError) {
  Binding b{{symbol("a"), INT64_MAX / 2 + 1}, {symbol("b"), INT64_MIN}};
  for (const char* e : {"2*a", "a+a", "a*a", "b-1", "floordiv(b,-1)", "-b", "a*a*a"}) {
    auto v = evaluate(P(e), b);
    ASSERT_FALSE(v.ok()) << e;
    EXPECT_NE(v.status().message().find("overflow"), std::string::npos) << v.status().message();
  }
  auto poison = evaluate(SymExpr(INT64_MAX) + 1, {});
  EXPECT_FALSE(poison.ok());
}

}  // namespace
}  // namespace sod2::sym
