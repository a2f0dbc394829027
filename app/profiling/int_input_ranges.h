// The values a run feeds its integer inputs, as a person writes them in the studio's Devices dock
// (issue #23: a conformer whose `lengths` input must equal the time dim could not be profiled
// from the GUI): "lengths=time, input_ids=0:30000, k=1:seq+1". A bound is an expression of the
// model's symbols, so the range follows the sliders; "name=EXPR" is the single value EXPR.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status/status.h"
#include "core/sym/sym_expr.h"

namespace sod2::profiling {

struct IntInputRange {
  std::string input;
  sym::SymExpr lo, hi;  // values drawn from [lo, hi)
};

// Comma-separated "name=lo:hi" or "name=value" (commas and colons inside parentheses belong to
// the expression: "k=1:max(seq,2)"). Errors name the item and the column of a bad expression; an
// input named twice is an error. Empty text: no ranges.
Expected<std::vector<IntInputRange>> parse_int_input_ranges(std::string_view text);

// Each input's [lo, hi) at these symbol values. Errors name the input: a symbol with no value, or
// an empty range.
Expected<std::map<std::string, std::pair<int64_t, int64_t>>> int_input_ranges_at(
    const std::vector<IntInputRange>& ranges, const std::map<std::string, int64_t>& values);

// Both at once: what `--int-range` and the studio hand a ProfileRequest.
Expected<std::map<std::string, std::pair<int64_t, int64_t>>> int_input_ranges_from(
    std::string_view text, const std::map<std::string, int64_t>& values);

}  // namespace sod2::profiling
