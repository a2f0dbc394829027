// The shared table formatter: columns never run together, numbers line up on the right, long
// names keep their ends, long value lists say how many values they hide.
#include "core/text/text_table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace sod2::text {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(TextTable, PadsEveryColumnToItsWidestCellAndRightAlignsNumbers) {
  TextTable t({{"node"}, {"bytes", Align::kRight}, {"op"}}, "  ");
  t.add_row({"a", "5", "Relu"});
  t.add_row({"longer_name", "123456", "Conv"});
  EXPECT_EQ(t.str(),
            "  node          bytes  op\n"
            "  a                 5  Relu\n"
            "  longer_name  123456  Conv\n");
}

TEST(TextTable, ACappedColumnElidesTheMiddleAndKeepsTheEnd) {
  const std::string name = "/model/encoder/layers.11/attention/self/query/MatMul_output_0_x";
  ASSERT_EQ(name.size(), 63u);
  TextTable t({{"name", Align::kLeft, 30}, {"op"}});
  t.add_row({name, "MatMul"});
  t.add_row({"short", "Add"});
  const auto lines = lines_of(t.str());
  ASSERT_EQ(lines.size(), 3u);
  // The op column starts at the same column on every line, two spaces after the widest name.
  for (const std::string& line : lines)
    EXPECT_EQ(display_width(line.substr(0, line.rfind("  ") + 2)), 32u) << line;
  EXPECT_NE(lines[1].find("…"), std::string::npos);
  EXPECT_NE(lines[1].find("MatMul_output_0_x"), std::string::npos) << lines[1];
  EXPECT_EQ(lines[1].rfind("/model/", 0), 0u) << lines[1];
}

TEST(TextTable, WidthCountsCodePointsNotBytes) {
  EXPECT_EQ(display_width("n∈[1,8]"), 7u);
  EXPECT_EQ(display_width(elide_middle("αβγδεζηθικ", 5)), 5u);
  EXPECT_EQ(elide_middle("αβγδεζηθικ", 5), "α…θικ");
  EXPECT_EQ(elide_middle("short", 5), "short");
  TextTable t({{"k"}, {"v"}});
  t.add_row({"∈∈", "x"});
  t.add_row({"ab", "y"});
  EXPECT_EQ(t.str(), "k   v\n∈∈  x\nab  y\n");
}

TEST(TextTable, LinesBetweenRowsAndNoTrailingSpaces) {
  TextTable t({{"a"}, {"b"}});
  t.add_row({"x"});
  t.add_line("-- subgraph body");
  t.add_row({"yyyy", "z"});
  EXPECT_EQ(t.str(), "a     b\nx\n-- subgraph body\nyyyy  z\n");
}

TEST(ElidedList, ShortListsInFullLongOnesWithTheirCount) {
  EXPECT_EQ(elided_list({"1", "2", "3"}, 8), "1, 2, 3");
  const std::vector<std::string> zeros(64, "0");
  EXPECT_EQ(elided_list(zeros, 8), "0, 0, 0, 0, … 64 values");
  EXPECT_EQ(elided_list(std::vector<std::string>(9, "a"), 8, "names"), "a, a, a, a, … 9 names");
}

}  // namespace
}  // namespace sod2::text
