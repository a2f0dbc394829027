// Reports print an expression only when its text is short; a DAG whose text would explode
// becomes a stand-in, found without printing it.
#include "core/sym/bounded_text.h"

#include <gtest/gtest.h>

#include "core/sym/text.h"

namespace sod2::sym {
namespace {

TEST(BoundedText, ShortExpressionsPrintAsThemselves) {
  const Symbol h = symbol("h"), w = symbol("w"), odd = symbol("a b");
  for (const SymExpr& e :
       {SymExpr(h) * w + 3, max(SymExpr(h), SymExpr(w) * -2) - 7, SymExpr(h) * h * h,
        floordiv(SymExpr(odd) + 1, SymExpr(4)), SymExpr(-123456789)}) {
    EXPECT_EQ(bounded_text(e), e.to_string());
    EXPECT_GE(text_length(e, 1 << 20), e.to_string().size()) << e.to_string();
  }
}

TEST(BoundedText, ADagWhoseTextExplodesBecomesAStandIn) {
  // Each level is max(prev + a_i, prev + b_i): 40 levels share `prev`, so the DAG has ~120
  // nodes but its text doubles per level (~2^40 copies of the first).
  SymExpr e = symbol("x0");
  for (int i = 0; i < 40; ++i)
    e = max(e + symbol("a" + std::to_string(i)), e + symbol("b" + std::to_string(i)));
  EXPECT_GT(text_length(e, 10000), 10000u);
  const std::string text = bounded_text(e);
  EXPECT_LT(text.size(), 200u);
  EXPECT_EQ(text.rfind("<max(...): about ", 0), 0u) << text;
  EXPECT_NE(text.find("distinct subexpressions>"), std::string::npos) << text;
  EXPECT_FALSE(parse(text).ok());  // never mistaken for an expression
  // A limit exactly at the text's length keeps it.
  SymExpr small = symbol("x0");
  for (int i = 0; i < 3; ++i) small = max(small + 1, small + symbol("b"));
  const std::string full = small.to_string();
  EXPECT_EQ(bounded_text(small, text_length(small, 1 << 20)), full);
}

}  // namespace
}  // namespace sod2::sym
