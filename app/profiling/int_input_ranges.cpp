#include "app/profiling/int_input_ranges.h"

#include <set>

#include "core/sym/evaluate.h"
#include "core/sym/text.h"

namespace sod2::profiling {
namespace {

// Positions of `sep` in `text` outside parentheses and quotes.
std::vector<size_t> split_points(std::string_view text, char sep) {
  std::vector<size_t> at;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        quoted = false;
      continue;
    }
    if (c == '"')
      quoted = true;
    else if (c == '(')
      ++depth;
    else if (c == ')')
      --depth;
    else if (c == sep && depth == 0)
      at.push_back(i);
  }
  return at;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t at : split_points(text, sep)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

Expected<std::vector<IntInputRange>> parse_int_input_ranges(std::string_view text) {
  std::vector<IntInputRange> out;
  if (trim(text).empty()) return out;
  std::set<std::string> seen;
  for (std::string_view raw : split(text, ',')) {
    const std::string_view item = trim(raw);
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string_view::npos || trim(item.substr(0, eq)).empty())
      return invalid_argument("integer input range \"" + std::string(item) +
                              "\": write name=lo:hi or name=value");
    IntInputRange r;
    r.input = std::string(trim(item.substr(0, eq)));
    if (!seen.insert(r.input).second)
      return invalid_argument("integer input " + r.input + " is given twice");
    const std::vector<std::string_view> bounds = split(item.substr(eq + 1), ':');
    if (bounds.size() > 2)
      return invalid_argument("integer input " + r.input + ": write lo:hi, one colon");
    auto bound = [&](std::string_view b, const char* which) -> Expected<sym::SymExpr> {
      auto e = sym::parse(trim(b));
      if (!e.ok())
        return invalid_argument("integer input " + r.input + ": the " + which + " bound \"" +
                                std::string(trim(b)) + "\": " + e.status().message());
      return e;
    };
    SOD2_ASSIGN_OR_RETURN(r.lo, bound(bounds[0], bounds.size() == 1 ? "value" : "lower"));
    if (bounds.size() == 2) {
      SOD2_ASSIGN_OR_RETURN(r.hi, bound(bounds[1], "upper"));
    } else {
      r.hi = r.lo + 1;
    }
    out.push_back(std::move(r));
  }
  return out;
}

Expected<std::map<std::string, std::pair<int64_t, int64_t>>> int_input_ranges_at(
    const std::vector<IntInputRange>& ranges, const std::map<std::string, int64_t>& values) {
  sym::Binding binding;
  for (const auto& [name, v] : values) binding[sym::symbol(name)] = v;
  std::map<std::string, std::pair<int64_t, int64_t>> out;
  for (const IntInputRange& r : ranges) {
    auto lo = sym::evaluate(r.lo, binding);
    auto hi = sym::evaluate(r.hi, binding);
    if (!lo.ok() || !hi.ok())
      return invalid_argument("integer input " + r.input + ": " +
                              (!lo.ok() ? lo.status() : hi.status()).message());
    if (*hi <= *lo)
      return invalid_argument("integer input " + r.input + ": the range " + std::to_string(*lo) +
                              ":" + std::to_string(*hi) + " is empty (lo must be below hi)");
    out[r.input] = {*lo, *hi};
  }
  return out;
}

Expected<std::map<std::string, std::pair<int64_t, int64_t>>> int_input_ranges_from(
    std::string_view text, const std::map<std::string, int64_t>& values) {
  SOD2_ASSIGN_OR_RETURN(auto ranges, parse_int_input_ranges(text));
  return int_input_ranges_at(ranges, values);
}

}  // namespace sod2::profiling
