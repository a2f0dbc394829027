#include "core/text/text_table.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <utility>

namespace sod2::text {
namespace {

constexpr std::string_view kEllipsis = "…";

bool starts_code_point(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// One thing a terminal shows: a printable code point, or the escape standing for a byte or code
// point it must not be given. `raw` is its bytes in the input; `shown` what visible() prints.
struct Unit {
  std::string_view raw;
  std::string shown;
};

std::string hex_escape(const char* prefix, uint32_t v, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, static_cast<unsigned>(v));
  return buf;
}

// The length of an escape visible() wrote at the start of `s` ("\x1b", "\n", "\u202e"), 0 if
// none: such text is already visible and is one unit, so eliding it twice never cuts one.
size_t escape_at(std::string_view s) {
  if (s.size() < 2 || s[0] != '\\') return 0;
  if (s[1] == 'n' || s[1] == 'r' || s[1] == 't') return 2;
  auto hex_run = [&](size_t from, size_t n) {
    if (s.size() < from + n) return false;
    for (size_t i = from; i < from + n; ++i)
      if (!is_hex(s[i])) return false;
    return true;
  };
  if (s[1] == 'x' && hex_run(2, 2)) return 4;
  if (s[1] == 'u' && hex_run(2, 4)) return 6;
  return 0;
}

// The well-formed UTF-8 sequence at the start of `s` (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF): its length and code point; length 0 if there is none.
std::pair<size_t, uint32_t> code_point_at(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return {1, c};
  size_t n;
  uint32_t cp, lo;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, cp = c & 0x1F, lo = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, cp = c & 0x0F, lo = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, cp = c & 0x07, lo = 0x10000;
  } else {
    return {0, 0};
  }
  if (s.size() < n) return {0, 0};
  for (size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return {0, 0};
    cp = (cp << 6) | (b(i) & 0x3F);
  }
  if (cp < lo || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {0, 0};
  return {n, cp};
}

// Code points that move the cursor, end a line or reorder the text after them.
bool hidden_code_point(uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
         cp == 0x200F || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

std::vector<Unit> units_of(std::string_view s) {
  std::vector<Unit> out;
  for (size_t i = 0; i < s.size();) {
    const std::string_view rest = s.substr(i);
    if (const size_t e = escape_at(rest)) {
      out.push_back({rest.substr(0, e), std::string(rest.substr(0, e))});
      i += e;
      continue;
    }
    const auto [n, cp] = code_point_at(rest);
    if (n == 0) {
      out.push_back({rest.substr(0, 1), hex_escape("\\x", static_cast<unsigned char>(s[i]), 2)});
      i += 1;
      continue;
    }
    std::string shown;
    if (cp == '\n') {
      shown = "\\n";
    } else if (cp == '\r') {
      shown = "\\r";
    } else if (cp == '\t') {
      shown = "\\t";
    } else if (cp < 0x80 && hidden_code_point(cp)) {
      shown = hex_escape("\\x", cp, 2);
    } else if (hidden_code_point(cp)) {
      shown = hex_escape("\\u", cp, 4);
    } else {
      shown = std::string(rest.substr(0, n));
    }
    out.push_back({rest.substr(0, n), std::move(shown)});
    i += n;
  }
  return out;
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

std::string visible(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const Unit& u : units_of(s)) out += u.shown;
  return out;
}

std::string elide_middle(std::string_view s, size_t width) {
  const std::vector<Unit> units = units_of(s);
  size_t have = 0;
  for (const Unit& u : units) have += display_width(u.shown);
  std::string out;
  if (have <= width) {
    for (const Unit& u : units) out += u.shown;
    return out;
  }
  if (width == 0) return "";
  // The end gets two thirds: it carries the layer index and the op of a node name. Whole units
  // only, so an escape ("\x1b") is kept or dropped, never cut.
  const size_t head = (width - 1) / 3;
  size_t tail = width - 1 - head;
  size_t used = 0, first = 0;
  for (; first < units.size(); ++first) {
    const size_t w = display_width(units[first].shown);
    if (used + w > head) break;
    used += w;
    out += units[first].shown;
  }
  tail += head - used;  // what the head left over
  size_t last = units.size();
  for (size_t w; last > first && (w = display_width(units[last - 1].shown)) <= tail; --last)
    tail -= w;
  out += kEllipsis;
  for (size_t i = last; i < units.size(); ++i) out += units[i].shown;
  return out;
}

std::string elided_list(const std::vector<std::string>& items, size_t limit,
                        std::string_view what) {
  const bool elide = items.size() > limit;
  const size_t shown = elide ? std::max<size_t>(limit / 2, 1) : items.size();
  std::string out;
  for (size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + visible(items[i]);
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
    cells[c] = columns_[c].max_width > 0 ? elide_middle(cells[c], columns_[c].max_width)
                                         : visible(cells[c]);
  rows_.push_back({false, std::move(cells)});
}

void TextTable::add_line(std::string line) { rows_.push_back({true, {visible(line)}}); }

std::string TextTable::str() const {
  std::vector<std::string> titles;
  for (const Column& c : columns_)
    titles.push_back(c.max_width ? elide_middle(c.title, c.max_width) : visible(c.title));
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
