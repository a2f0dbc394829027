#include "app/cli/symbol_args.h"

#include <stdexcept>

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

SymbolRanges read_ranges_file(const std::string& path) {
  return value_or_throw(sod2::read_ranges_file(path));
}

RdpOptions rdp_options_from(const std::optional<std::string>& ranges_file,
                            const std::optional<std::string>& range_spec) {
  return value_or_throw(sod2::rdp_options_from(ranges_file, range_spec));
}

}  // namespace sod2::cli
