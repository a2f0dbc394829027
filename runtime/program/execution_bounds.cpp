#include "runtime/program/execution_bounds.h"

#include <algorithm>
#include <string>

namespace sod2::plan {

Status check_execution_bounds_shape(const rt::ProgramDesc& program) {
  const rt::ShapeProgram& b = program.execution_bounds;
  if (b.num_outputs() != 0 &&
      (b.num_outputs() != program.symbols.size() || b.num_inputs() != program.symbols.size())) {
    return invalid_model("the execution bounds program has " + std::to_string(b.num_inputs()) +
                         " inputs and " + std::to_string(b.num_outputs()) + " outputs for " +
                         std::to_string(program.symbols.size()) + " symbols");
  }
  const auto& known = program.arena_known_steps;
  if (!known.empty() && known.size() != program.num_arena_tensors) {
    return invalid_model("the program gives " + std::to_string(known.size()) +
                         " arena known steps for " + std::to_string(program.num_arena_tensors) +
                         " arena tensors");
  }
  for (size_t t = 0; t < known.size(); ++t) {
    if (known[t] < 0)
      return invalid_model("arena tensor " + std::to_string(t) + " has a negative known step");
  }
  return Status::ok_status();
}

Status ExecutionBounds::evaluate(const rt::ProgramDesc& program, std::span<const int64_t> values) {
  const rt::ShapeProgram& b = program.execution_bounds;
  out_.resize(b.num_outputs());
  scratch_.resize(b.scratch_size());
  return b.run(values, out_, scratch_);
}

Expected<int64_t> ExecutionBounds::bound_of(const rt::ProgramDesc& program,
                                            std::span<const int64_t> values, size_t k) {
  const rt::SymbolDesc& s = program.symbols[k];
  if (program.execution_bounds.num_outputs() == 0) return s.hi;
  SOD2_RETURN_IF_ERROR(evaluate(program, values));
  return std::clamp(out_[k], s.lo, s.hi);
}

Status ExecutionBounds::bound_all(const rt::ProgramDesc& program, std::span<int64_t> values) {
  size_t executions = 0;
  for (const rt::SymbolDesc& s : program.symbols) executions += s.execution;
  // A pass settles every symbol whose bound reads only settled ones: at most one pass per
  // execution symbol, and one more that changes nothing.
  for (size_t pass = 0; pass <= executions; ++pass) {
    bool changed = false;
    if (program.execution_bounds.num_outputs() != 0)
      SOD2_RETURN_IF_ERROR(evaluate(program, values));
    for (size_t k = 0; k < program.symbols.size(); ++k) {
      const rt::SymbolDesc& s = program.symbols[k];
      if (!s.execution) continue;
      const int64_t v =
          program.execution_bounds.num_outputs() == 0 ? s.hi : std::clamp(out_[k], s.lo, s.hi);
      changed = changed || values[k] != v;
      values[k] = v;
    }
    if (!changed) return Status::ok_status();
  }
  return invalid_model("the execution symbols' bounds read each other in a cycle");
}

}  // namespace sod2::plan
