#include "app/cli/symbol_args.h"

#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status/input_file.h"

namespace sod2::cli {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == sep) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

int64_t parse_int(const std::string& s, const std::string& item) {
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size())
    throw std::invalid_argument("'" + item + "': '" + s + "' is not an integer");
  return v;
}

sym::SymbolRange make_range(int64_t lo, int64_t hi, int64_t step, const std::string& item) {
  auto r = sym::SymbolRange::from_step(lo, hi, step);
  if (!r.ok()) throw std::invalid_argument("'" + item + "': " + r.status().message());
  return *r;
}

}  // namespace

std::map<std::string, int64_t> parse_bindings(const std::string& text) {
  std::map<std::string, int64_t> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("'" + item + "' is not NAME=VALUE");
    out[item.substr(0, eq)] = parse_int(item.substr(eq + 1), item);
  }
  return out;
}

std::unordered_map<std::string, sym::SymbolRange> parse_ranges(const std::string& text) {
  std::unordered_map<std::string, sym::SymbolRange> out;
  for (const std::string& item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("'" + item + "' is not NAME=LO:HI[:MULTIPLE]");
    const auto parts = split(item.substr(eq + 1), ':');
    if (parts.size() < 2 || parts.size() > 3)
      throw std::invalid_argument("'" + item + "' is not NAME=LO:HI[:MULTIPLE]");
    const int64_t lo = parse_int(parts[0], item), hi = parse_int(parts[1], item);
    const int64_t step = parts.size() == 3 ? parse_int(parts[2], item) : 1;
    out[item.substr(0, eq)] = make_range(lo, hi, step, item);
  }
  return out;
}

std::unordered_map<std::string, sym::SymbolRange> read_ranges_file(const std::string& path) {
  Expected<std::string> text = read_input_text(path);
  if (!text.ok()) throw std::invalid_argument("the ranges file " + text.status().message());
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) throw std::invalid_argument(path + ": is not valid JSON");
  if (doc.is_object() && doc.contains("ranges")) doc = doc["ranges"];
  if (!doc.is_object())
    throw std::invalid_argument(path + ": expected an object like {\"height\": [32, 1024, 32]}");
  std::unordered_map<std::string, sym::SymbolRange> out;
  for (const auto& [name, v] : doc.items()) {
    if (!v.is_array() || v.size() < 2 || v.size() > 3 || !v[0].is_number_integer() ||
        !v[1].is_number_integer() || (v.size() == 3 && !v[2].is_number_integer()))
      throw std::invalid_argument(path + ": '" + name + "' must be [lo, hi] or [lo, hi, step]");
    out[name] = make_range(v[0], v[1], v.size() == 3 ? v[2].get<int64_t>() : 1, path + ": " + name);
  }
  return out;
}

RdpOptions rdp_options_from(const std::optional<std::string>& ranges_file,
                            const std::optional<std::string>& range_spec) {
  RdpOptions options;
  if (ranges_file) options.ranges = read_ranges_file(*ranges_file);
  if (range_spec)
    for (auto& [name, range] : parse_ranges(*range_spec)) options.ranges[name] = range;
  return options;
}

}  // namespace sod2::cli
