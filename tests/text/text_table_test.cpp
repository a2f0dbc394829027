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

// A node name is any bytes: what a cell shows of one stays on its row and cannot drive the
// terminal, and the widths still count code points.
TEST(Visible, ControlCharactersAndBrokenUtf8BecomeEscapes) {
  EXPECT_EQ(visible("plain/name_1"), "plain/name_1");
  EXPECT_EQ(visible("∈αβ…"), "∈αβ…");
  EXPECT_EQ(visible("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(visible("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(visible(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(visible("del\x7f"), "del\\x7f");
  EXPECT_EQ(visible("c1\xc2\x85"), "c1\\u0085");  // NEL, a C1 control
  EXPECT_EQ(visible("\xe2\x80\xae"
                    "evil"),
            "\\u202eevil");                       // right-to-left override
  EXPECT_EQ(visible("\xe2\x80\xa8"), "\\u2028");  // line separator
  EXPECT_EQ(visible("bad\xff\xfe"), "bad\\xff\\xfe");
  EXPECT_EQ(visible("\xc3"), "\\xc3");                             // a cut sequence
  EXPECT_EQ(visible("\xc0\xaf"), "\\xc0\\xaf");                    // an overlong '/'
  EXPECT_EQ(visible("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(visible("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(visible("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");      // an emoji is kept
  EXPECT_EQ(visible("back\\slash"), "back\\slash");
  for (const char* s : {"a\nb", "\x1b]0;title\x07", "x\xff", "\xe2\x80\xae"})
    EXPECT_EQ(visible(visible(s)), visible(s)) << s;
}

TEST(Visible, ElidingNeverCutsAnEscape) {
  const std::string name = std::string("\x1b\x1b\x1b\x1b\x1b") + "/layers.3/Conv";
  const std::string e = elide_middle(name, 16);
  // The head's five columns hold one whole "\x1b", not "\x1b\"; the column left over goes to
  // the end.
  EXPECT_EQ(e, "\\x1b…yers.3/Conv");
  EXPECT_EQ(display_width(e), 16u);
  EXPECT_EQ(elide_middle(e, 16), e);  // already visible and fitting: unchanged
}

TEST(TextTable, AHostileCellStaysOnItsRowAndKeepsTheColumnsAligned) {
  TextTable t({{"node", Align::kLeft, 24}, {"op"}}, "  ");
  t.add_row({"evil\nname\r\x1b[2J\x07", "Conv"});
  t.add_row({"ok", "Relu"});
  t.add_row({"αβγ\t", "Add"});
  t.add_line("-- subgraph body of /Loop\n\x1b[2J");
  const std::string text = t.str();
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 5u) << text;
  for (const std::string& line : lines)
    for (char c : line) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << line;
  EXPECT_EQ(lines[1], "  evil\\nname\\r\\x1b[2J\\x07  Conv");
  // The op column starts at the same column on every row.
  const size_t at = display_width(lines[1].substr(0, lines[1].find("Conv")));
  EXPECT_EQ(display_width(lines[2].substr(0, lines[2].find("Relu"))), at);
  EXPECT_EQ(display_width(lines[3].substr(0, lines[3].find("Add"))), at);
  EXPECT_EQ(lines[4], "-- subgraph body of /Loop\\n\\x1b[2J");
}

}  // namespace
}  // namespace sod2::text
