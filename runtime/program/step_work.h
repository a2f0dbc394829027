// The operations each main-graph step does at a binding (ProgramDesc::step_work): what a profile
// divides by a step's time for its GOP/s, and a benchmark by the run's time for its roofline.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::plan {

struct StepWork {
  std::vector<int64_t> ops;  // per main-graph step; -1 where the compiler could not count it
  int64_t total = 0;         // of the counted steps
  int uncounted = 0;         // steps at -1
  // An execution symbol was taken at its bound rather than a value a run bound: the counts are
  // the most the steps do at these input sizes.
  bool at_most = false;

  bool complete() const { return uncounted == 0; }
};

// At `values` (one per ProgramDesc::symbols entry). Execution symbols whose `bound` entry is 0
// are taken at their bound at the input symbols (execution_bounds.h), and the result says so;
// `bound` may be empty (every symbol bound). Errors: a program without step work, the wrong
// number of values, an overflow.
Expected<StepWork> step_work_at(const rt::ProgramDesc& program, std::span<const int64_t> values,
                                std::span<const char> bound = {});

}  // namespace sod2::plan
