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
  // Per main-graph step: its count is only the most it can do, not what a run did (step_is_bound),
  // so a time divided into it is no GOP/s.
  std::vector<char> bound;

  bool complete() const { return uncounted == 0; }
};

// Whether `node`'s count (core/ops/op_work.cpp) is an upper bound rather than what it does, by
// the ONNX spec of its control flow: an If counts its larger branch; a Loop counts its trip count
// M of iterations, the most it runs when its condition can end it sooner, that is when a `cond`
// input is given and is not a constant true, or when it is and the body's condition output is
// neither that input passed on nor a constant true (an absent `cond` makes the loop a `for`, its
// body's condition ignored); a Loop without M runs until its condition ends it; a Scan runs once
// per element of its scanned axis, exactly. A node holding a bound in a body is one too.
bool node_count_is_bound(const rt::ProgramDesc& program, int32_t graph, const rt::NodeDesc& node);

// At `values` (one per ProgramDesc::symbols entry). Execution symbols whose `bound` entry is 0
// are taken at their bound at the input symbols (execution_bounds.h), and the result says so,
// and marks bound the steps whose count reads one, besides those node_count_is_bound marks;
// `bound` may be empty (every symbol bound). Errors: a program without step work, the wrong
// number of values, an overflow.
Expected<StepWork> step_work_at(const rt::ProgramDesc& program, std::span<const int64_t> values,
                                std::span<const char> bound = {});

}  // namespace sod2::plan
