// The one table formatter of the text reports (`sod2 inspect`, `plan`, `history`, `profile` and
// the plan text goldens): columns padded to their widest cell, two spaces apart, numbers
// right-aligned. A column may cap its width; a longer cell then loses its middle, not its end,
// because the end of an ONNX name ("…/layers.11/attn/MatMul") is what tells nodes apart.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sod2::text {

enum class Align { kLeft, kRight };

struct Column {
  std::string title;
  Align align = Align::kLeft;
  // 0: as wide as the widest cell. Otherwise cells wider than this are elided in the middle.
  size_t max_width = 0;
};

class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns, std::string indent = "");

  // Missing cells are empty; extra cells are an error in the caller and are dropped. Every cell
  // (and title) is shown visible(): a name with a newline or a terminal escape stays on its row.
  void add_row(std::vector<std::string> cells);
  // A line of its own between rows ("-- subgraph body of /Loop"), printed as it is visible().
  void add_line(std::string line);
  void show_header(bool shown) { header_ = shown; }
  size_t num_rows() const { return rows_.size(); }

  // One line per row, each ending in '\n', no trailing spaces.
  std::string str() const;

 private:
  struct Row {
    bool is_line = false;
    std::vector<std::string> cells;  // visible(), already elided to their column's cap
  };
  std::vector<Column> columns_;
  std::string indent_;
  bool header_ = true;
  std::vector<Row> rows_;
};

// `v` with `decimals` digits after the point ("12.346"): how the reports print measured numbers.
std::string fixed(double v, int decimals = 3);
// A change in percent with its sign and one decimal: "+12.3%", "-4.0%".
std::string signed_percent(double percent);
// The change from `from` to `to` as signed_percent; "-" when `from` is not positive.
std::string percent_change(double from, double to);

// Columns a terminal gives the text: UTF-8 code points ("…" and "∈" count one).
size_t display_width(std::string_view s);

// `s` as one line that cannot move the cursor or change the terminal: what a table cell shows of
// a name from outside (an ONNX node name is any bytes). C0 controls, DEL and C1 controls become
// escapes ("\n", "\r", "\t", "\x1b", "\u0085"), so do the Unicode line and paragraph separators
// and the bidirectional controls that reorder what follows them ("\u202e"), and every byte that
// is not part of well-formed UTF-8 ("\xff"); all else is kept, multi-byte names included. A
// backslash is kept as is, so the result is printable and visible(visible(s)) == visible(s).
std::string visible(std::string_view s);

// visible(s) if it fits in `width` columns, else its start and its (longer) end around "…"; an
// escape is never cut in two.
std::string elide_middle(std::string_view s, size_t width);

// "a, b, c" (each item visible()) for up to `limit` items; past that the first half of `limit` and
// a count, as in "0, 0, 0, 0, … 64 values", so a 64-element constant is not a line of a thousand
// characters. `what` names the items in the count.
std::string elided_list(const std::vector<std::string>& items, size_t limit,
                        std::string_view what = "values");

}  // namespace sod2::text
