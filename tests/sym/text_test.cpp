// Printer goldens built through the API, quoting of odd names, and parser errors.
#include <gtest/gtest.h>

#include "core/sym/sym_expr.h"
#include "core/sym/text.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

TEST(Printer, GoldensBuiltThroughTheApi) {
  SymExpr batch = symbol("batch"), seq = symbol("seq"), past = symbol("past");
  SymExpr h = symbol("h"), height = symbol("height"), a = symbol("a");
  struct {
    SymExpr e;
    const char* text;
  } cases[] = {
      {batch, "batch"},
      {seq + past, "past+seq"},
      {2 * h + 1, "2*h+1"},
      {floordiv(height + 1, 2), "floordiv(height+1,2)"},
      {min(a, 4), "min(a,4)"},
      {max(4, a), "max(a,4)"},
      {batch * seq * 64, "64*batch*seq"},
      {batch * (seq + past) - batch, "batch*past+batch*seq-batch"},
      {ceildiv(h, 32), "floordiv(h+31,32)"},
      {mod(h, 32) - 5, "mod(h,32)-5"},
      {-h, "-h"},
      {SymExpr(-3) - h * h, "-h*h-3"},
      {pow(h, 3), "h*h*h"},
      {pow(h + 1, 0), "1"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.e.to_string(), c.text);
    auto back = parse(c.e.to_string());
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, c.e);
  }
}

TEST(Printer, QuotesNamesOutsideTheIdentifierAlphabet) {
  const char* names[] = {"batch size", "N-1", "2d", "", "quote\"back\\slash", "min", "a.b:c_1"};
  const char* printed[] = {
      "\"batch size\"", "\"N-1\"", "\"2d\"", "\"\"", "\"quote\\\"back\\\\slash\"", "min",
      "a.b:c_1"};
  for (size_t i = 0; i < std::size(names); ++i) {
    SymExpr s = symbol(names[i]);
    EXPECT_EQ(s.to_string(), printed[i]);
    auto back = parse(s.to_string());
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, s) << names[i];
    SymExpr e = floordiv(s * 3 + 1, 2);
    EXPECT_EQ(*parse(e.to_string()), e);
  }
}

TEST(Parser, AcceptsWhitespaceAndRedundantParentheses) {
  EXPECT_EQ(P("  ( ( a ) + 2 ) *\t3 "), P("3*a+6"));
  EXPECT_EQ(P("--a"), P("a"));
  EXPECT_EQ(P("-(-(a))"), P("a"));
  EXPECT_EQ(P("max( a , b , 3 )"), P("max(3,b,a)"));
  EXPECT_EQ(P("min(a)"), P("a"));
  EXPECT_EQ(P("a - -1"), P("a+1"));
}

struct ErrorCase {
  const char* text;
  const char* message;  // a substring of the error
};

class ParseErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ParseErrors, NameThePosition) {
  auto r = parse(GetParam().text);
  ASSERT_FALSE(r.ok()) << GetParam().text;
  EXPECT_EQ(r.status().code(), StatusCode::kParseError);
  EXPECT_NE(r.status().message().find(GetParam().message), std::string::npos)
      << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(Sym, ParseErrors,
                         ::testing::ValuesIn(std::vector<ErrorCase>{
                             {"", "column 1: expected a number, a name or '(' before the end"},
                             {"a+", "column 3: expected a number"},
                             {"a+*b", "column 3: expected a number, a name or '(', found '*'"},
                             {"(a+1", "column 5: expected ')' before the end"},
                             {"a)", "column 2: unexpected ')'"},
                             {"a b", "column 3: unexpected 'b'"},
                             {"floordiv(a)", "column 1: floordiv takes 2 arguments, got 1"},
                             {"x+foo(a)", "column 3: unknown function 'foo'"},
                             {"min()", "column 1: min needs an argument"},
                             {"9223372036854775808", "column 1: integer literal outside int64"},
                             {"2d", "column 2: a name cannot start with a digit"},
                             {"\"abc", "column 1: unterminated quoted name"},
                             {"a % 2", "column 3: unexpected '%'"},
                         }));

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  auto r = parse(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nesting deeper than 256"), std::string::npos);
  std::string minus(100000, '-');
  EXPECT_FALSE(parse(minus + "a").ok());
}

}  // namespace
}  // namespace sod2::sym
