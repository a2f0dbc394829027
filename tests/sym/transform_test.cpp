// substitute(), free_symbols(), and verify() catching hand-made non-canonical nodes.
#include <gtest/gtest.h>

#include "core/sym/canonical_internal.h"
#include "core/sym/transform.h"
#include "tests/sym/test_util.h"

namespace sod2::sym {
namespace {

using testing::P;

TEST(Substitute, RecanonicalisesParents) {
  Symbol h = symbol("h"), b = symbol("b");
  EXPECT_EQ(substitute(P("floordiv(h,2)"), {{h, P("2*w")}}), P("w"));
  EXPECT_EQ(substitute(P("min(a,b)"), {{b, P("a+1")}}), P("a"));
  EXPECT_EQ(substitute(P("h*h-w*w"), {{h, P("w")}}), P("0"));
  EXPECT_EQ(substitute(P("mod(h,4)"), {{h, P("4*w+3")}}), P("3"));
  EXPECT_EQ(substitute(P("floordiv(h,n)"), {{symbol("n"), P("0")}}), P("floordiv(h,0)"));
  EXPECT_EQ(substitute(P("h+1"), {}), P("h+1"));
}

TEST(Substitute, IsSimultaneous) {
  Symbol a = symbol("a"), b = symbol("b");
  EXPECT_EQ(substitute(P("a-2*b"), {{a, P("b")}, {b, P("a")}}), P("b-2*a"));
}

TEST(FreeSymbols, SortedByNameAndDistinct) {
  auto syms = free_symbols(P("zeta*alpha+floordiv(alpha,beta)+min(zeta,3)"));
  std::vector<std::string> names;
  for (const Symbol& s : syms) names.push_back(s.name());
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "beta", "zeta"}));
  EXPECT_TRUE(free_symbols(P("42")).empty());
}

// These keys are never produced by the canonical constructors, so the stray nodes they add to the
// table cannot be returned to any other caller.
TEST(Verify, RejectsHandMadeNonCanonicalNodes) {
  using detail::intern;
  const SymExpr a = symbol("va"), b = symbol("vb");
  const SymExpr ab[] = {a, b}, ba[] = {b, a}, only_a[] = {a};
  const int64_t one[] = {1}, ones[] = {1, 1}, zero_coeff[] = {0};
  struct {
    SymExpr e;
    const char* why;
  } cases[] = {
      {intern(Kind::kSum, 0, {}, only_a, one), "I2: bare monomial"},
      {intern(Kind::kSum, 3, {}, only_a, zero_coeff), "I2: zero coefficient"},
      {intern(Kind::kSum, 0, {}, ba, ones), "I2: term order"},
      {intern(Kind::kProduct, 0, {}, only_a, one), "I3: single atom"},
      {intern(Kind::kMin, 0, {}, ba, {}), "I9: operand order"},
      {intern(Kind::kMin, 0, {}, only_a, {}), "I9: fewer than 2 operands"},
  };
  for (const auto& c : cases) {
    Status st = verify(c.e);
    ASSERT_FALSE(st.ok()) << c.why;
    EXPECT_NE(st.message().find(c.why), std::string::npos) << st.message();
  }
  const SymExpr num_div[] = {P("2*va"), SymExpr(4)};
  EXPECT_FALSE(verify(intern(Kind::kFloorDiv, 0, {}, num_div, {})).ok());
  EXPECT_TRUE(verify(intern(Kind::kMin, 0, {}, ab, {})).ok());
}

}  // namespace
}  // namespace sod2::sym
