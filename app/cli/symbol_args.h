// Parsing of the symbol options every analysis command shares: --bind, --range, --ranges.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/rdp/rdp.h"
#include "core/sym/ranges.h"

namespace sod2::cli {

// "batch=1,seq=128" → {batch: 1, seq: 128}. Throws std::invalid_argument naming the bad item.
std::map<std::string, int64_t> parse_bindings(const std::string& text);

// "h=32:1024:32,batch=1:16" → ranges; the multiple defaults to 1.
std::unordered_map<std::string, sym::SymbolRange> parse_ranges(const std::string& text);

// A JSON file: {"height": [32, 1024, 32], ...}, or an object with such a map under "ranges"
// (a models.json entry). Throws std::invalid_argument naming the file and the problem.
std::unordered_map<std::string, sym::SymbolRange> read_ranges_file(const std::string& path);

// The ranges of --ranges FILE, then --range overriding per symbol: what every analysis command
// hands to RDP. Throws std::invalid_argument like the parsers above.
RdpOptions rdp_options_from(const std::optional<std::string>& ranges_file,
                            const std::optional<std::string>& range_spec);

}  // namespace sod2::cli
