// A program's memory plan at one binding, laid out as a session lays it out there (its bucket's
// version, a layout made at the execution symbols' sizes, or greedy by size when that is
// smaller): what the studio's package view draws and what `sod2 profile --sweep` predicts before
// the device reports the arena it ran in.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program.h"

namespace sod2::plan {

struct ProgramPlanAt {
  std::map<std::string, int64_t> values;  // every symbol (execution symbols not given: at bound)
  std::map<std::string, int64_t> bounds;  // each execution symbol's bound at these input sizes
  // -1: the whole-range plan, else plan_versions[i], or a layout made at the binding
  // (kBindingLayeringVersion, kBindingGreedyVersion).
  int32_t version = -1;
  std::vector<int64_t> sizes, offsets;  // per arena tensor
  int64_t arena_bytes = 0;
};

// `values` names every input symbol; an execution symbol absent takes its bound at the input
// sizes (runtime/program/execution_bounds.h), one given may not exceed it. `lives` are
// rt::check_program_dataflow's. Errors: an input symbol missing, outside its range or off its
// multiple, an execution symbol above its bound or below its least value (each named), a plan
// program that fails or has too few outputs.
Expected<ProgramPlanAt> program_plan_at(const rt::ProgramDesc& program,
                                        std::span<const Lifetime> lives,
                                        const std::map<std::string, int64_t>& values);

}  // namespace sod2::plan
