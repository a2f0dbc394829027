// Canonical forms: tables of (input, expected canonical text), rules that must not fire, and the
// hash-consing guarantees.
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "core/sym/sym_expr.h"
#include "core/sym/text.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

struct Case {
  const char* input;
  const char* expected;
};

// Every entry is also checked to satisfy verify() and to parse back from its printed form.
const Case kCanonical[] = {
    // Leaves and names.
    {"batch", "batch"},
    {"NonZero_17.out0.d1 + 1", "NonZero_17.out0.d1+1"},
    {"ns::dim", "ns::dim"},
    // Sums and products: one form for one polynomial.
    {"N*2", "2*N"},
    {"N+N", "2*N"},
    {"2*(3*N)", "6*N"},
    {"a-a", "0"},
    {"0*a", "0"},
    {"a*b-b*a", "0"},
    {"3+4*5", "23"},
    {"seq+past", "past+seq"},
    {"1+2*h", "2*h+1"},
    {"(a+1)*(a+1)", "a*a+2*a+1"},
    {"(a+b)*(a+b)", "a*a+2*a*b+b*b"},
    {"(a+b)*(a-b)", "a*a-b*b"},
    {"a*(b+c)", "a*b+a*c"},
    {"h*w+2*h+1", "h*w+2*h+1"},
    {"h*h*h", "h*h*h"},
    {"1-a", "1-a"},
    {"-a-1", "-a-1"},
    {"-(a-b)", "b-a"},
    {"b-a", "b-a"},
    {"2*h-h*w", "2*h-h*w"},
    {"-9223372036854775808", "-9223372036854775808"},
    {"a-9223372036854775808*b", "a-9223372036854775808*b"},
    {"9223372036854775807+1", "overflow()"},
    {"overflow()*0", "overflow()"},
    // floordiv with constant divisors.
    {"floordiv(height+1,2)", "floordiv(height+1,2)"},
    {"floordiv(4*a+2,2)", "2*a+1"},
    {"floordiv(2*a+3,2)", "a+1"},
    {"floordiv(a+5,2)", "floordiv(a+1,2)+2"},
    {"floordiv(a-1,2)", "floordiv(a+1,2)-1"},
    {"floordiv(4*a+b,2)", "2*a+floordiv(b,2)"},
    {"floordiv(2*a+1,4)", "floordiv(a,2)"},
    {"floordiv(6*a+3*b,9)", "floordiv(2*a+b,3)"},
    {"floordiv(floordiv(a,2),3)", "floordiv(a,6)"},
    {"floordiv(floordiv(a,2)+1,3)", "floordiv(a+2,6)"},
    {"floordiv(a,1)", "a"},
    {"floordiv(a,-1)", "-a"},
    {"floordiv(a,-2)", "floordiv(-a,2)"},
    {"floordiv(a,0)", "floordiv(a,0)"},
    {"floordiv(-7,2)", "-4"},
    {"floordiv(7,-2)", "-4"},
    {"floordiv(h,2)*2", "2*floordiv(h,2)"},
    // ceildiv: constant positive divisors become floordiv(x + c-1, c).
    {"ceildiv(h,32)", "floordiv(h+31,32)"},
    {"ceildiv(h+1,32)", "floordiv(h,32)+1"},
    {"ceildiv(2*a,4)", "floordiv(a+1,2)"},
    {"ceildiv(h,-2)", "-floordiv(h,2)"},
    {"ceildiv(-7,2)", "-3"},
    {"ceildiv(7,2)", "4"},
    {"ceildiv(a,n)", "ceildiv(a,n)"},
    // mod with constant divisors.
    {"mod(-7,2)", "1"},
    {"mod(7,-2)", "-1"},
    {"mod(a,1)", "0"},
    {"mod(3*a+5,2)", "mod(a+1,2)"},
    {"mod(2*a,4)", "2*mod(a,2)"},
    {"mod(2*a+1,4)", "2*mod(a,2)+1"},
    {"mod(4*a+b,4)", "mod(b,4)"},
    {"mod(mod(a,6),3)", "mod(a,3)"},
    {"mod(mod(a,3),6)", "mod(mod(a,3),6)"},
    {"mod(a,-3)", "-mod(2*a,3)"},
    // The division identity x = c*floordiv(x,c) + mod(x,c).
    {"7*floordiv(w,7)+mod(w,7)", "w"},
    {"4*floordiv(a,2)+2*mod(a,2)+1", "2*a+1"},
    {"mod(2*a,4)+4*floordiv(a,2)", "2*a"},
    {"3*floordiv(a+b,3)+mod(a+b+3,3)", "a+b"},
    // Symbolic divisors: exact multiples split out.
    {"floordiv(n*x,n)", "x"},
    {"floordiv(2*n*x,2*n)", "x"},
    {"floordiv(n*x+y,n)", "x+floordiv(y,n)"},
    {"ceildiv(n*x+y,n)", "x+ceildiv(y,n)"},
    {"mod(n*x+y,n)", "mod(y,n)"},
    {"floordiv(0,n)", "0"},
    {"floordiv(n,n)", "1"},
    {"mod(n,n)", "0"},
    {"floordiv(a+b,a+b)", "1"},
    // min / max.
    {"min(a,a)", "a"},
    {"min(4,a)", "min(a,4)"},
    {"min(b,a)", "min(a,b)"},
    {"min(3,5)", "3"},
    {"min(a,min(b,3),5)", "min(a,b,3)"},
    {"max(a+1,a)", "a+1"},
    {"min(a+1,a+3,b)", "min(b,a+1)"},
    {"min(a,max(a,b))", "a"},
    {"max(a,min(a,b))", "a"},
    {"max(a,2)-max(2,a)", "0"},
};

class CanonicalTable : public ::testing::TestWithParam<Case> {};

TEST_P(CanonicalTable, PrintsExpectedFormAndRoundTrips) {
  const Case& c = GetParam();
  SymExpr e = P(c.input);
  EXPECT_EQ(e.to_string(), c.expected) << "input: " << c.input;
  EXPECT_TRUE(verify(e).ok()) << verify(e).to_string();
  auto back = parse(e.to_string());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, e) << "round trip of " << e.to_string();
}

INSTANTIATE_TEST_SUITE_P(Sym, CanonicalTable, ::testing::ValuesIn(kCanonical));

// Pairs that are equal only for some values, or equal but not by a rule that is valid for all
// integers: a canonicaliser that merges them is wrong.
const Case kMustNotMerge[] = {
    {"floordiv(a,2)*2", "a"},
    {"floordiv(a,n)*n", "a"},
    {"mod(a+b,2)", "mod(a,2)+mod(b,2)"},
    {"floordiv(a+b,2)", "floordiv(a,2)+floordiv(b,2)"},
    {"floordiv(3*a,2)", "a+floordiv(a,2)"},
    {"floordiv(a,2)+mod(a,2)", "a"},
    {"2*floordiv(a,2)+2*mod(a,2)", "2*a"},
    {"min(a,b)", "a"},
    {"max(a,b)", "b"},
    {"min(a,b)+max(a,b)", "a+b"},
    {"floordiv(floordiv(a,n),m)", "floordiv(a,n*m)"},
    {"floordiv(-a,2)", "-floordiv(a,2)"},
    {"mod(a,2)*mod(a,2)", "mod(a,2)"},
    {"2*ceildiv(h,32)", "ceildiv(h,16)"},
    {"floordiv(a,0)", "0"},
};

class MustNotMerge : public ::testing::TestWithParam<Case> {};

TEST_P(MustNotMerge, StaysDistinct) {
  const Case& c = GetParam();
  EXPECT_NE(P(c.input), P(c.expected)) << c.input << " vs " << c.expected;
}

INSTANTIATE_TEST_SUITE_P(Sym, MustNotMerge, ::testing::ValuesIn(kMustNotMerge));

TEST(SymExpr, SameValueBuiltThreeWaysIsOneHandle) {
  SymExpr n = symbol("N");
  EXPECT_EQ(2 * n, n * 2);
  EXPECT_EQ(n + n, 2 * n);
  EXPECT_EQ((n + 1) * (n + 1), n * n + 2 * n + 1);
  EXPECT_EQ(n - n, SymExpr(0));
  EXPECT_EQ(floordiv(4 * n + 2, 2), 2 * n + 1);
  EXPECT_EQ(ceildiv(n, 32), floordiv(n + 31, 32));
}

TEST(SymExpr, SymbolsAreUniqueByName) {
  EXPECT_EQ(symbol("batch"), symbol("batch"));
  EXPECT_NE(symbol("batch"), symbol("Batch"));
  EXPECT_EQ(symbol("batch").name(), "batch");
  EXPECT_EQ(SymExpr(symbol("batch")).as_symbol(), symbol("batch"));
}

TEST(SymExpr, ConstantsAndAccessors) {
  SymExpr e = P("2*h+1");
  EXPECT_FALSE(e.is_constant());
  EXPECT_FALSE(e.constant_value().has_value());
  EXPECT_EQ(e.kind(), Kind::kSum);
  EXPECT_EQ(e.constant_term(), 1);
  ASSERT_EQ(e.operands().size(), 1u);
  EXPECT_EQ(e.operands()[0], SymExpr(symbol("h")));
  EXPECT_EQ(e.coefficients()[0], 2);
  EXPECT_EQ(SymExpr(7).constant_value(), 7);
  EXPECT_EQ(SymExpr(123456789).constant_value(), 123456789);
  EXPECT_EQ(SymExpr(), SymExpr(0));
  EXPECT_EQ(SymExpr(5000000000LL), SymExpr(5000000000LL));
}

TEST(SymExpr, RebuildingDoesNotGrowTheTable) {
  auto build = [] {
    SymExpr h = symbol("grow_h"), w = symbol("grow_w");
    return floordiv(h * w + 2 * h + 7, 4) + min(h, w) * mod(w, 3);
  };
  SymExpr first = build();
  const size_t count = interned_node_count();
  EXPECT_EQ(build(), first);
  EXPECT_EQ(interned_node_count(), count);
}

TEST(SymExpr, DepthAndHashAreStructural) {
  SymExpr a = P("floordiv(min(a,b)+1,2)");
  EXPECT_EQ(SymExpr(symbol("a")).depth(), 1u);
  EXPECT_EQ(a.depth(), 4u);  // floordiv > sum > min > a
  EXPECT_EQ(a.hash(), P("floordiv(1+min(b,a),2)").hash());
  EXPECT_NE(a.hash(), P("floordiv(min(a,b)+1,3)").hash());
}

TEST(SymExpr, OverflowPoisonAbsorbs) {
  SymExpr big(INT64_MAX);
  SymExpr o = big + 1;
  EXPECT_TRUE(o.is_overflow());
  EXPECT_TRUE((o * 0).is_overflow());
  EXPECT_TRUE((o - o).is_overflow());
  EXPECT_TRUE(min(o, symbol("a")).is_overflow());
  EXPECT_TRUE((big * symbol("a") * 2).is_overflow());
  EXPECT_TRUE(floordiv(SymExpr(INT64_MIN), -1).is_overflow());
  EXPECT_TRUE(min(std::span<const SymExpr>()).is_overflow());
}

TEST(SymExpr, ConcurrentBuildersGetTheSameHandles) {
  constexpr int kThreads = 4;
  constexpr int kExprs = 500;
  std::vector<std::vector<SymExpr>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&results, t] {
      for (int i = 0; i < kExprs; ++i) {
        SymExpr s = symbol("thread_sym_" + std::to_string(i % 37));
        results[t].push_back(floordiv(s * (i + 1) + 3, 1 + i % 7) + max(s, SymExpr(i)));
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(results[t], results[0]);
  for (const SymExpr& e : results[0]) EXPECT_TRUE(verify(e).ok()) << e.to_string();
}

TEST(SymExpr, CompareIsATotalOrder) {
  std::vector<SymExpr> v = {P("b"),   P("a"), P("3"), P("min(a,b)"), P("a*a"), P("floordiv(a,2)"),
                            P("a+1"), P("-2")};
  std::sort(v.begin(), v.end(), SymExprLess());
  std::vector<std::string> s;
  for (const SymExpr& e : v) s.push_back(e.to_string());
  EXPECT_EQ(s, (std::vector<std::string>{"a", "b", "floordiv(a,2)", "min(a,b)", "a*a", "a+1", "-2",
                                         "3"}));
}

}  // namespace
}  // namespace sod2::sym

namespace sod2::sym {
namespace {

// A hostile model can square a many-term shape again and again: past the expansion cap the
// product is the overflow poison rather than an exponential blow-up.
TEST(CanonicalLimits, HugeExpansionsBecomeOverflow) {
  SymExpr many(0);
  for (int i = 0; i < 70; ++i) many = many + symbol("t" + std::to_string(i));
  EXPECT_FALSE((many * SymExpr(symbol("u"))).is_overflow());
  EXPECT_TRUE((many * many).is_overflow());
  EXPECT_TRUE((many * many + 1).is_overflow());  // the poison absorbs what follows
}

}  // namespace
}  // namespace sod2::sym

