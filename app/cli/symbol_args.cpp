#include "app/cli/symbol_args.h"

#include <charconv>
#include <stdexcept>
#include <vector>

#include "app/profiling/input_files.h"
#include "app/profiling/int_input_ranges.h"

namespace sod2::cli {
namespace {

template <typename T>
T value_or_throw(Expected<T> e) {
  if (!e.ok()) throw std::invalid_argument(e.status().message());
  return std::move(e).value();
}

}  // namespace

std::map<std::string, int64_t> parse_bindings(const std::string& text) {
  return value_or_throw(sod2::parse_bindings(text));
}

SymbolRanges parse_ranges(const std::string& text) {
  return value_or_throw(sod2::parse_ranges(text));
}

std::vector<profiling::IntInputRange> parse_int_ranges(const std::string& text) {
  auto ranges = profiling::parse_int_input_ranges(text);
  if (!ranges.ok()) throw std::invalid_argument("--int-range: " + ranges.status().message());
  return std::move(*ranges);
}

std::map<std::string, std::string> parse_input_files(const std::string& text) {
  auto files = profiling::parse_input_files(text);
  if (!files.ok()) throw std::invalid_argument("--input: " + files.status().message());
  return std::move(*files);
}

SymbolRanges read_ranges_file(const std::string& path) {
  return value_or_throw(sod2::read_ranges_file(path));
}

RdpOptions rdp_options_from(const std::optional<std::string>& ranges_file,
                            const std::optional<std::string>& range_spec) {
  return value_or_throw(sod2::rdp_options_from(ranges_file, range_spec));
}

namespace {

int64_t parse_int(const std::string& text, const std::string& what, const std::string& flag) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty())
    throw std::invalid_argument(flag + ": " + what + " '" + text + "' is not a whole number");
  return v;
}

}  // namespace

SweepSpec parse_sweep_spec(const std::string& text, const std::string& flag) {
  SweepSpec s;
  const size_t eq = text.find('=');
  s.name = text.substr(0, eq);
  if (s.name.empty()) throw std::invalid_argument(flag + ": expected NAME or NAME=lo:hi[:step]");
  if (eq == std::string::npos) return s;
  std::vector<std::string> parts;
  std::string rest = text.substr(eq + 1);
  for (size_t at = 0;;) {
    const size_t colon = rest.find(':', at);
    parts.push_back(rest.substr(at, colon == std::string::npos ? std::string::npos : colon - at));
    if (colon == std::string::npos) break;
    at = colon + 1;
  }
  if (parts.size() < 2 || parts.size() > 3)
    throw std::invalid_argument(flag + ": expected NAME=lo:hi[:step], got '" + text + "'");
  s.lo = parse_int(parts[0], "lo", flag);
  s.hi = parse_int(parts[1], "hi", flag);
  if (parts.size() == 3) {
    s.step = parse_int(parts[2], "step", flag);
    if (*s.step < 1) throw std::invalid_argument(flag + ": the step must be at least 1");
  }
  return s;
}

}  // namespace sod2::cli
