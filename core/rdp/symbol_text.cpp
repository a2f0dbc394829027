#include "core/rdp/symbol_text.h"

#include <charconv>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status/input_file.h"

namespace sod2 {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

Expected<int64_t> parse_int(std::string_view s, std::string_view item) {
  int64_t v = 0;
  const char* end = s.data() + s.size();
  // A leading '+' is what people type; from_chars does not take it.
  const char* begin = !s.empty() && s.front() == '+' ? s.data() + 1 : s.data();
  const auto [ptr, ec] = std::from_chars(begin, end, v);
  if (s.empty() || begin == end || ec != std::errc() || ptr != end)
    return invalid_argument("'" + std::string(item) + "': '" + std::string(s) +
                            "' is not an integer" +
                            (ec == std::errc::result_out_of_range ? " that fits in int64" : ""));
  return v;
}

Expected<sym::SymbolRange> make_range(int64_t lo, int64_t hi, int64_t step, std::string_view item) {
  auto r = sym::SymbolRange::from_step(lo, hi, step);
  if (!r.ok()) return invalid_argument("'" + std::string(item) + "': " + r.status().message());
  return *r;
}

}  // namespace

Expected<std::map<std::string, int64_t>> parse_bindings(std::string_view text) {
  std::map<std::string, int64_t> out;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.rfind('=');
    if (eq == std::string_view::npos || eq == 0)
      return invalid_argument("'" + std::string(item) + "' is not NAME=VALUE");
    SOD2_ASSIGN_OR_RETURN(int64_t v, parse_int(item.substr(eq + 1), item));
    out[std::string(item.substr(0, eq))] = v;
  }
  return out;
}

Expected<SymbolRanges> parse_ranges(std::string_view text) {
  SymbolRanges out;
  for (std::string_view item : split(text, ',')) {
    if (item.empty()) continue;
    const auto eq = item.rfind('=');
    const auto parts = eq == std::string_view::npos ? std::vector<std::string_view>{}
                                                    : split(item.substr(eq + 1), ':');
    if (eq == std::string_view::npos || eq == 0 || parts.size() < 2 || parts.size() > 3)
      return invalid_argument("'" + std::string(item) + "' is not NAME=LO:HI[:MULTIPLE]");
    SOD2_ASSIGN_OR_RETURN(int64_t lo, parse_int(parts[0], item));
    SOD2_ASSIGN_OR_RETURN(int64_t hi, parse_int(parts[1], item));
    int64_t step = 1;
    if (parts.size() == 3) {
      SOD2_ASSIGN_OR_RETURN(step, parse_int(parts[2], item));
    }
    SOD2_ASSIGN_OR_RETURN(sym::SymbolRange range, make_range(lo, hi, step, item));
    out[std::string(item.substr(0, eq))] = range;
  }
  return out;
}

namespace {

// One symbol of a ranges file: [lo, hi], [lo, hi, step], or {"range": [...], "default": v}.
struct RangeEntry {
  sym::SymbolRange range;
  std::optional<int64_t> typical;
};

Expected<RangeEntry> range_entry(const std::string& path, const std::string& name,
                                 const nlohmann::json& entry) {
  const std::string what = path + ": '" + name + "'";
  const nlohmann::json* v = &entry;
  std::optional<int64_t> typical;
  if (entry.is_object()) {
    for (const auto& [key, value] : entry.items())
      if (key != "range" && key != "default")
        return invalid_argument(what + " has an unknown key '" + key +
                                "' (expected \"range\" and optionally \"default\")");
    if (!entry.contains("range")) return invalid_argument(what + " has no \"range\"");
    v = &entry["range"];
    if (entry.contains("default")) {
      if (!entry["default"].is_number_integer())
        return invalid_argument(what + ": \"default\" must be an integer");
      typical = entry["default"].get<int64_t>();
    }
  }
  if (!v->is_array() || v->size() < 2 || v->size() > 3 || !(*v)[0].is_number_integer() ||
      !(*v)[1].is_number_integer() || (v->size() == 3 && !(*v)[2].is_number_integer()))
    return invalid_argument(what +
                            " must be [lo, hi], [lo, hi, step] or {\"range\": [...], "
                            "\"default\": N}");
  const int64_t lo = (*v)[0].get<int64_t>(), hi = (*v)[1].get<int64_t>();
  const int64_t step = v->size() == 3 ? (*v)[2].get<int64_t>() : 1;
  SOD2_ASSIGN_OR_RETURN(sym::SymbolRange range, make_range(lo, hi, step, path + ": " + name));
  if (typical && (*typical < lo || *typical > hi || (*typical - lo) % step != 0))
    return invalid_argument(what + ": default " + std::to_string(*typical) +
                            " is not one of its values (" + std::to_string(lo) + ".." +
                            std::to_string(hi) + " in steps of " + std::to_string(step) + ")");
  return RangeEntry{range, typical};
}

Expected<nlohmann::json> ranges_document(const std::string& path) {
  Expected<std::string> text = read_input_text(path);
  if (!text.ok()) return invalid_argument("the ranges file " + text.status().message());
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_discarded()) return invalid_argument(path + ": is not valid JSON");
  if (doc.is_object() && doc.contains("ranges")) doc = doc["ranges"];
  if (!doc.is_object())
    return invalid_argument(path + ": expected an object like {\"height\": [32, 1024, 32]}");
  return doc;
}

}  // namespace

Expected<SymbolRanges> read_ranges_file(const std::string& path) {
  SOD2_ASSIGN_OR_RETURN(nlohmann::json doc, ranges_document(path));
  SymbolRanges out;
  for (const auto& [name, v] : doc.items()) {
    SOD2_ASSIGN_OR_RETURN(RangeEntry e, range_entry(path, name, v));
    out[name] = e.range;
  }
  return out;
}

Expected<std::map<std::string, int64_t>> read_range_defaults(const std::string& path) {
  SOD2_ASSIGN_OR_RETURN(nlohmann::json doc, ranges_document(path));
  std::map<std::string, int64_t> out;
  for (const auto& [name, v] : doc.items()) {
    SOD2_ASSIGN_OR_RETURN(RangeEntry e, range_entry(path, name, v));
    if (e.typical) out[name] = *e.typical;
  }
  return out;
}

Expected<RdpOptions> rdp_options_from(const std::optional<std::string>& ranges_file,
                                      const std::optional<std::string>& range_text) {
  RdpOptions options;
  if (ranges_file) {
    SOD2_ASSIGN_OR_RETURN(options.ranges, read_ranges_file(*ranges_file));
  }
  if (range_text) {
    SOD2_ASSIGN_OR_RETURN(SymbolRanges overrides, parse_ranges(*range_text));
    for (auto& [name, range] : overrides) options.ranges[name] = range;
  }
  return options;
}

}  // namespace sod2
