// Helpers shared by the sym tests.
#pragma once

#include <ostream>
#include <string_view>

#include <gtest/gtest.h>

#include "core/sym/sym_expr.h"
#include "core/sym/text.h"

namespace sod2::sym {

// gtest prints handles in failure messages as their canonical text.
inline void PrintTo(const SymExpr& e, std::ostream* os) { *os << e.to_string(); }
inline void PrintTo(const Symbol& s, std::ostream* os) { *os << s.name(); }

}  // namespace sod2::sym

namespace sod2::sym::testing {

// The printed form parses back to the same handle.
inline void ExpectRoundTrip(const SymExpr& e) {
  auto back = parse(e.to_string());
  ASSERT_TRUE(back.ok()) << e.to_string() << ": " << back.status().to_string();
  EXPECT_EQ(back->node(), e.node()) << e.to_string();
}

// Parses or fails the current test with the parser's message.
inline SymExpr P(std::string_view text) {
  auto e = parse(text);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().to_string();
  return e.ok() ? *e : SymExpr::overflow();
}

}  // namespace sod2::sym::testing
