#include "runtime/program/step_work.h"

#include "runtime/program/execution_bounds.h"

namespace sod2::plan {

Expected<StepWork> step_work_at(const rt::ProgramDesc& program, std::span<const int64_t> values,
                                std::span<const char> bound) {
  const rt::ShapeProgram& work = program.step_work;
  if (work.num_outputs() == 0)
    return not_found("the program carries no operation counts (compiled before they existed)");
  if (values.size() != program.symbols.size() || (!bound.empty() && bound.size() != values.size()))
    return invalid_argument("step work: " + std::to_string(values.size()) + " values for " +
                            std::to_string(program.symbols.size()) + " symbols");
  std::vector<int64_t> at(values.begin(), values.end());
  StepWork out;
  for (size_t k = 0; k < at.size(); ++k) {
    if (!program.symbols[k].execution || bound.empty() || bound[k]) continue;
    out.at_most = true;
  }
  if (out.at_most) {
    // Only the unbound execution symbols take their bounds; bound_all sets them all, so the
    // bound ones are put back.
    ExecutionBounds bounds;
    std::vector<int64_t> with_bounds = at;
    SOD2_RETURN_IF_ERROR(bounds.bound_all(program, with_bounds));
    for (size_t k = 0; k < at.size(); ++k)
      if (program.symbols[k].execution && !bound[k]) at[k] = with_bounds[k];
  }
  out.ops.resize(work.num_outputs());
  std::vector<int64_t> scratch(work.scratch_size());
  SOD2_RETURN_IF_ERROR(work.run(at, out.ops, scratch));
  for (int64_t ops : out.ops) {
    if (ops < 0) {
      ++out.uncounted;
      continue;
    }
    if (out.total > INT64_MAX - ops)
      return invalid_argument("step work: the total overflows at these sizes");
    out.total += ops;
  }
  return out;
}

}  // namespace sod2::plan
