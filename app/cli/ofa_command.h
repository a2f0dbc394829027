// `sod2 ofa FAMILY(.sod2|/variants.json) --budget-ms B [--duration-s S] [--load T0:T1[:THREADS]]`:
// the Dynamic-OFA demo. Runs inferences back to back on the family's variants with the manager
// holding the budget, prints a timeline and a summary, then runs the same schedule on the largest
// variant alone for comparison.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Returns the process exit status: 0 done, 1 a failure (one line on `err`).
int run_ofa(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
