// Inputs for `sod2 run` without test data: random tensors of the bound shapes (ORT's bench fills
// them the same way: floats uniform in [-1, 1), ints in [lo, hi), default [0, 2), bools fair), or
// the exact inputs `ort_bench.js --save-inputs DIR` wrote (DIR/inputs.json + raw .bin files).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::profiling {

// Dims of every input from the program's input dims and `bind` (symbol name -> value).
// Errors: a symbol an input needs is not bound (named).
Expected<std::vector<rt::Shape>> bound_input_shapes(const rt::ProgramDesc& program,
                                                    const std::map<std::string, int64_t>& bind);

// "batch=1,seq=128": how profiles and the store spell a binding (sorted by symbol).
std::string bindings_text(const std::map<std::string, int64_t>& bind);

// `int_ranges`: input name -> [lo, hi).
std::vector<rt::HostTensor> random_inputs(
    const rt::ProgramDesc& program, const std::vector<rt::Shape>& shapes,
    const std::map<std::string, std::pair<int64_t, int64_t>>& int_ranges, uint32_t seed);

// Reads DIR/inputs.json and its files, in the program's input order. Errors: a missing input,
// a type or size that does not match (named).
Expected<std::vector<rt::HostTensor>> read_saved_inputs(const rt::ProgramDesc& program,
                                                        const std::string& dir);

}  // namespace sod2::profiling
