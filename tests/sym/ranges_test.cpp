// RangeMap validation, interval bounds, and range-aware simplification.
#include <gtest/gtest.h>

#include "core/sym/prover.h"
#include "core/sym/ranges.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

// h in [32, 1024] step 32, w in [1, 100], n in [-10, 10], p fixed at 7; x has the default range.
RangeMap test_ranges() {
  RangeMap r;
  EXPECT_TRUE(r.set(symbol("h"), {32, 1024, 32}).ok());
  EXPECT_TRUE(r.set(symbol("w"), {1, 100}).ok());
  EXPECT_TRUE(r.set(symbol("n"), {-10, 10}).ok());
  EXPECT_TRUE(r.set(symbol("p"), {7, 7}).ok());
  return r;
}

TEST(RangeMap, ValidatesAndTightensToMultiples) {
  RangeMap r;
  EXPECT_EQ(r.set(symbol("a"), {5, 3}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.set(symbol("a"), {0, 3, 0}).code(), StatusCode::kInvalidArgument);
  Status none = r.set(symbol("a"), {1, 31, 32});
  EXPECT_EQ(none.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.message().find("'a'"), std::string::npos) << none.message();
  EXPECT_FALSE(r.contains(symbol("a")));
  EXPECT_EQ(r.get(symbol("a")), (SymbolRange{0, kDefaultMaxDim, 1}));

  ASSERT_TRUE(r.set(symbol("a"), {10, 100, 32}).ok());
  EXPECT_EQ(r.get(symbol("a")), (SymbolRange{32, 96, 32}));
  EXPECT_TRUE(r.admits(symbol("a"), 64));
  EXPECT_FALSE(r.admits(symbol("a"), 65));
  EXPECT_FALSE(r.admits(symbol("a"), 128));
  ASSERT_TRUE(r.set(symbol("neg"), {-100, -1, 8}).ok());
  EXPECT_EQ(r.get(symbol("neg")), (SymbolRange{-96, -8, 8}));

  ASSERT_TRUE(r.set_default({1, 4096}).ok());
  EXPECT_EQ(r.get(symbol("unset")), (SymbolRange{1, 4096, 1}));
  EXPECT_FALSE(r.set_default({2, 1}).ok());
}

TEST(SymbolRange, FromStepUsesTheGcdOfStartAndStep) {
  EXPECT_EQ(*SymbolRange::from_step(32, 1024, 32), (SymbolRange{32, 1024, 32}));
  EXPECT_EQ(*SymbolRange::from_step(8, 100, 16), (SymbolRange{8, 88, 8}));
  EXPECT_EQ(*SymbolRange::from_step(0, 10, 3), (SymbolRange{0, 9, 3}));
  EXPECT_EQ(*SymbolRange::from_step(5, 5, 1), (SymbolRange{5, 5, 1}));
  EXPECT_FALSE(SymbolRange::from_step(0, 10, 0).ok());
  EXPECT_FALSE(SymbolRange::from_step(10, 0, 1).ok());
}

struct BoundsCase {
  const char* expr;
  int64_t lo;
  int64_t hi;
};

class BoundsTable : public ::testing::TestWithParam<BoundsCase> {};

TEST_P(BoundsTable, IsTheExpectedInterval) {
  const BoundsCase& c = GetParam();
  EXPECT_EQ(bounds(P(c.expr), test_ranges()), (Interval{c.lo, c.hi})) << c.expr;
  testing::ExpectRoundTrip(P(c.expr));
}

INSTANTIATE_TEST_SUITE_P(Sym, BoundsTable,
                         ::testing::ValuesIn(std::vector<BoundsCase>{
                             {"h", 32, 1024},
                             {"2*w+1", 3, 201},
                             {"w-w", 0, 0},
                             {"n*n", 0, 100},
                             {"n*n*n", -1000, 1000},
                             {"n*w", -1000, 1000},
                             {"-n", -10, 10},
                             {"floordiv(w,3)", 0, 33},
                             {"floordiv(n,3)", -4, 3},
                             {"floordiv(w,n)", -100, 100},
                             {"floordiv(w,p)", 0, 14},
                             {"ceildiv(w,2)", 1, 50},
                             {"ceildiv(w,n)", -100, 100},
                             {"mod(w,7)", 0, 6},
                             {"mod(w,128)", 1, 100},
                             {"mod(w+200,100)", 0, 99},
                             {"mod(n,-3)", -2, 0},
                             {"mod(w,n)", -9, 9},
                             {"mod(h,32)", 0, 0},
                             {"mod(h,64)", 0, 32},
                             {"min(w,50)", 1, 50},
                             {"max(n,0)", 0, 10},
                             {"min(w,n)", -10, 10},
                             {"x", 0, kDefaultMaxDim},
                             {"-x", -kDefaultMaxDim, 0},
                             {"x*x*x", 0, INT64_MAX},
                             {"x-x*x*x", INT64_MIN, kDefaultMaxDim},
                             {"floordiv(w,0)", INT64_MIN, INT64_MAX},
                             {"overflow()", INT64_MIN, INT64_MAX},
                             {"9223372036854775807*w", 9223372036854775807, INT64_MAX},
                         }));

struct SimplifyCase {
  const char* input;
  const char* expected;
};

class SimplifyTable : public ::testing::TestWithParam<SimplifyCase> {};

TEST_P(SimplifyTable, UsesRangesAndDivisibility) {
  const SimplifyCase& c = GetParam();
  SymExpr s = simplify(P(c.input), test_ranges());
  EXPECT_EQ(s.to_string(), c.expected) << c.input;
  EXPECT_TRUE(verify(s).ok());
  testing::ExpectRoundTrip(P(c.input));
  testing::ExpectRoundTrip(s);
}

INSTANTIATE_TEST_SUITE_P(Sym, SimplifyTable,
                         ::testing::ValuesIn(std::vector<SimplifyCase>{
                             // Divisibility: 32 divides h.
                             {"floordiv(h,32)*32", "h"},
                             {"mod(h,32)", "0"},
                             {"mod(h,16)", "0"},
                             {"mod(h+5,32)", "5"},
                             {"floordiv(h+5,32)", "floordiv(h,32)"},
                             {"ceildiv(h,32)", "floordiv(h,32)"},
                             {"floordiv(h,2)", "floordiv(h,2)"},
                             {"3*floordiv(h,2)", "3*floordiv(h,2)"},
                             {"mod(h,64)", "mod(h,64)"},
                             {"h*h", "h*h"},
                             {"2*ceildiv(h,32)-ceildiv(h,16)", "0"},
                             // Ranges: operands that never win, quotients fixed by the range.
                             {"min(w,200)", "w"},
                             {"max(w,0)", "w"},
                             {"min(w,100)", "w"},
                             {"min(w,99)", "min(w,99)"},
                             {"min(w,n)", "min(n,w)"},
                             {"max(h,w,5)", "max(h,w)"},
                             {"mod(w,128)", "w"},
                             {"mod(w+200,100)", "mod(w,100)"},
                             {"mod(w,100)", "mod(w,100)"},
                             {"floordiv(w,128)", "0"},
                             {"floordiv(w+100,200)", "floordiv(w+100,200)"},
                             {"floordiv(floordiv(x,w),w)", "floordiv(x,w*w)"},
                             {"floordiv(floordiv(x,n),w)", "floordiv(floordiv(x,n),w)"},
                             {"p+1", "8"},
                             {"floordiv(w,p)*p+mod(w,p)", "w"},
                             // Facts never invent equalities for unknown symbols.
                             {"min(a,b)", "min(a,b)"},
                             {"floordiv(a,2)*2", "2*floordiv(a,2)"},
                         }));

}  // namespace
}  // namespace sod2::sym
