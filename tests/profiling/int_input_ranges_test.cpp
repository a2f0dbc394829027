// Integer inputs' values as typed in the studio and given to --int-range: ranges, single
// values, bounds that name symbols, and every malformed form an error naming the input.
#include "app/profiling/int_input_ranges.h"

#include <gtest/gtest.h>

namespace sod2::profiling {
namespace {

using Ranges = std::map<std::string, std::pair<int64_t, int64_t>>;

Ranges at(const std::string& text, const std::map<std::string, int64_t>& values = {}) {
  auto r = int_input_ranges_from(text, values);
  EXPECT_TRUE(r.ok()) << text << ": " << r.status().to_string();
  return r.ok() ? *r : Ranges{};
}

std::string error_of(const std::string& text, const std::map<std::string, int64_t>& values = {}) {
  auto r = int_input_ranges_from(text, values);
  EXPECT_FALSE(r.ok()) << text;
  return r.ok() ? std::string() : r.status().message();
}

TEST(IntInputRanges, RangesAndSingleValues) {
  EXPECT_EQ(at("input_ids=0:1000"), (Ranges{{"input_ids", {0, 1000}}}));
  EXPECT_EQ(at(" a = 3 , b=-2:2 "), (Ranges{{"a", {3, 4}}, {"b", {-2, 2}}}));
  EXPECT_TRUE(at("").empty());
  EXPECT_TRUE(at("   ").empty());
}

TEST(IntInputRanges, BoundsFollowTheSymbols) {
  // A conformer's lengths equal to the time dim, token ids below the sequence length.
  EXPECT_EQ(at("lengths=time, ids=0:seq+1", {{"time", 100}, {"seq", 7}}),
            (Ranges{{"lengths", {100, 101}}, {"ids", {0, 8}}}));
  // Commas and colons inside parentheses belong to the expression.
  EXPECT_EQ(at("k=1:max(seq,2), m=floordiv(seq,2)", {{"seq", 9}}),
            (Ranges{{"k", {1, 9}}, {"m", {4, 5}}}));
}

TEST(IntInputRanges, MalformedTextIsAnErrorNamingTheInput) {
  EXPECT_NE(error_of("input_ids").find("name=lo:hi"), std::string::npos);
  EXPECT_NE(error_of("=3").find("name=lo:hi"), std::string::npos);
  EXPECT_NE(error_of("a=1,a=2").find("a is given twice"), std::string::npos);
  EXPECT_NE(error_of("a=1:2:3").find("one colon"), std::string::npos);
  EXPECT_NE(error_of("a=1+:4").find("lower bound"), std::string::npos);
  EXPECT_NE(error_of("a=5:2").find("a: the range 5:2 is empty"), std::string::npos);
  EXPECT_NE(error_of("a=0:seq").find("a:"), std::string::npos) << "seq has no value";
  EXPECT_NE(error_of("a=0:seq", {{"seq", 0}}).find("empty"), std::string::npos);
}

}  // namespace
}  // namespace sod2::profiling
