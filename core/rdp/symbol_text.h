// The text forms of input-symbol values and ranges every front end accepts (--bind, --range,
// --ranges, the studio's bindings bar and dialogs): parsed once, here, with errors that name the
// item, so the CLI and the studio agree on what a binding means.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "core/sym/ranges.h"

namespace sod2 {

using SymbolRanges = std::unordered_map<std::string, sym::SymbolRange>;

// "batch=1,seq=128" → {batch: 1, seq: 128}. Errors name the item that is not NAME=INTEGER.
Expected<std::map<std::string, int64_t>> parse_bindings(std::string_view text);

// "h=32:1024:32,batch=1:16" → ranges; the multiple defaults to 1.
Expected<SymbolRanges> parse_ranges(std::string_view text);

// A JSON file: {"height": [32, 1024, 32], ...}, or an object with such a map under "ranges"
// (a models.json entry). A symbol may also be {"range": [32, 1024, 32], "default": 320}: the
// size views start at. Errors name the file, the symbol and the problem.
Expected<SymbolRanges> read_ranges_file(const std::string& path);

// The "default" of each symbol of a ranges file that gives one (checked to be one of its
// values); the rest of the file is checked as read_ranges_file does.
Expected<std::map<std::string, int64_t>> read_range_defaults(const std::string& path);

// The ranges of a ranges file, then a range text overriding per symbol: what every analysis
// front end hands to RDP.
Expected<RdpOptions> rdp_options_from(const std::optional<std::string>& ranges_file,
                                      const std::optional<std::string>& range_text);

}  // namespace sod2
