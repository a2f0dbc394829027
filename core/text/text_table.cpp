#include "core/text/text_table.h"

#include <algorithm>
#include <cstdio>

namespace sod2::text {
namespace {

constexpr std::string_view kEllipsis = "…";

bool starts_code_point(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

// The byte offset where the code point numbered `n` starts (s.size() past the last one).
size_t byte_of_code_point(std::string_view s, size_t n) {
  for (size_t i = 0; i < s.size(); ++i)
    if (starts_code_point(s[i]) && n-- == 0) return i;
  return s.size();
}

}  // namespace

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string signed_percent(double percent) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%+.1f%%", percent);
  return buf;
}

std::string percent_change(double from, double to) {
  return from > 0 ? signed_percent(100.0 * (to - from) / from) : "-";
}

size_t display_width(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), starts_code_point));
}

std::string elide_middle(std::string_view s, size_t width) {
  const size_t have = display_width(s);
  if (have <= width) return std::string(s);
  if (width == 0) return "";
  // The end gets two thirds: it carries the layer index and the op of a node name.
  const size_t head = (width - 1) / 3;
  const size_t tail = width - 1 - head;
  return std::string(s.substr(0, byte_of_code_point(s, head))) + std::string(kEllipsis) +
         std::string(s.substr(byte_of_code_point(s, have - tail)));
}

std::string elided_list(const std::vector<std::string>& items, size_t limit,
                        std::string_view what) {
  const bool elide = items.size() > limit;
  const size_t shown = elide ? std::max<size_t>(limit / 2, 1) : items.size();
  std::string out;
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + items[i];
  if (elide)
    out += ", " + std::string(kEllipsis) + " " + std::to_string(items.size()) + " " +
           std::string(what);
  return out;
}

TextTable::TextTable(std::vector<Column> columns, std::string indent)
    : columns_(std::move(columns)), indent_(std::move(indent)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(columns_.size());
  for (size_t c = 0; c < cells.size(); ++c)
    if (columns_[c].max_width > 0) cells[c] = elide_middle(cells[c], columns_[c].max_width);
  rows_.push_back({false, std::move(cells)});
}

void TextTable::add_line(std::string line) { rows_.push_back({true, {std::move(line)}}); }

std::string TextTable::str() const {
  std::vector<std::string> titles;
  for (const Column& c : columns_)
    titles.push_back(c.max_width ? elide_middle(c.title, c.max_width) : c.title);
  std::vector<size_t> width(columns_.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c)
      width[c] = std::max(width[c], display_width(cells[c]));
  };
  if (header_) measure(titles);
  for (const Row& r : rows_)
    if (!r.is_line) measure(r.cells);

  std::string out;
  auto print = [&](const std::vector<std::string>& cells) {
    std::string line = indent_;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string gap(width[c] - display_width(cells[c]), ' ');
      if (c > 0) line += "  ";
      line += columns_[c].align == Align::kRight ? gap + cells[c] : cells[c] + gap;
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  };
  if (header_) print(titles);
  for (const Row& r : rows_) {
    if (r.is_line) {
      out += r.cells.front() + "\n";
    } else {
      print(r.cells);
    }
  }
  return out;
}

}  // namespace sod2::text
