// The CLI's face of core/rdp/symbol_text.h for --bind, --range and --ranges: the same parsers,
// throwing std::invalid_argument (the CLI's usage-error convention) with core's message.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/profiling/int_input_ranges.h"
#include "core/rdp/symbol_text.h"

namespace sod2::cli {

std::map<std::string, int64_t> parse_bindings(const std::string& text);
SymbolRanges parse_ranges(const std::string& text);
SymbolRanges read_ranges_file(const std::string& path);
// One symbol's sweep: NAME (its whole range) or NAME=lo:hi[:step]; `flag` names the option in
// errors ("--sym", "--sweep").
struct SweepSpec {
  std::string name;
  std::optional<int64_t> lo, hi, step;
};
SweepSpec parse_sweep_spec(const std::string& text, const std::string& flag);

// --int-range: integer inputs' values (profiling/int_input_ranges.h), bounds valued per run.
std::vector<profiling::IntInputRange> parse_int_ranges(const std::string& text);
// --input: inputs read from files (profiling/input_files.h), input name -> path.
std::map<std::string, std::string> parse_input_files(const std::string& text);

RdpOptions rdp_options_from(const std::optional<std::string>& ranges_file,
                            const std::optional<std::string>& range_spec);

}  // namespace sod2::cli
