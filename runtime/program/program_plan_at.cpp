#include "runtime/program/program_plan_at.h"

#include "runtime/program/binding_layout.h"
#include "runtime/program/execution_bounds.h"

namespace sod2::plan {

Expected<ProgramPlanAt> program_plan_at(const rt::ProgramDesc& p, std::span<const Lifetime> lives,
                                        const std::map<std::string, int64_t>& values) {
  std::vector<int64_t> inputs(p.symbols.size(), 0);
  ProgramPlanAt at;
  for (size_t k = 0; k < p.symbols.size(); ++k) {
    const rt::SymbolDesc& s = p.symbols[k];
    if (s.execution) continue;
    auto it = values.find(s.name);
    if (it == values.end()) return invalid_argument("no value for symbol '" + s.name + "'");
    const int64_t v = it->second;
    if (v < s.lo || v > s.hi)
      return invalid_argument("'" + s.name + "' = " + std::to_string(v) + " is outside its range " +
                              std::to_string(s.lo) + ".." + std::to_string(s.hi));
    if (s.multiple > 1 && v % s.multiple != 0)
      return invalid_argument("'" + s.name + "' = " + std::to_string(v) + " is not a multiple of " +
                              std::to_string(s.multiple));
    inputs[k] = v;
  }
  // An execution symbol not given takes its bound at these input sizes (what the plan reserves);
  // one given may not exceed it, as a run's node never does.
  std::vector<int64_t> bounds = inputs;
  ExecutionBounds bounder;
  if (!bounder.bound_all(p, bounds).ok()) {
    for (size_t k = 0; k < p.symbols.size(); ++k)
      if (p.symbols[k].execution) bounds[k] = p.symbols[k].hi;
  }
  for (size_t k = 0; k < p.symbols.size(); ++k) {
    const rt::SymbolDesc& s = p.symbols[k];
    if (!s.execution) continue;
    int64_t v = bounds[k];
    at.bounds[s.name] = bounds[k];
    if (auto it = values.find(s.name); it != values.end()) {
      v = it->second;
      if (v > bounds[k])
        return invalid_argument("'" + s.name + "' = " + std::to_string(v) + " is above its bound " +
                                std::to_string(bounds[k]) +
                                " at these input sizes (the most this execution symbol can be)");
      if (v < s.lo)
        return invalid_argument("'" + s.name + "' = " + std::to_string(v) + " is below " +
                                std::to_string(s.lo) + ", the least this execution symbol can be");
    }
    inputs[k] = v;
  }
  for (size_t k = 0; k < p.symbols.size(); ++k) at.values[p.symbols[k].name] = inputs[k];
  const rt::ShapeProgram* program = &p.plan_program;
  if (!p.version_of_cell.empty()) {
    const size_t cell = p.plan_grid.cell_of(inputs);
    if (cell < p.version_of_cell.size() && p.version_of_cell[cell] >= 0) {
      at.version = p.version_of_cell[cell];
      program = &p.plan_versions[static_cast<size_t>(at.version)];
    }
  }
  const size_t n = p.num_arena_tensors;
  std::vector<int64_t> out(program->num_outputs(), 0);
  std::vector<int64_t> scratch(program->scratch_size(), 0);
  if (out.size() < 2 * n + 1)
    return invalid_model("the plan program has " + std::to_string(out.size()) + " outputs for " +
                         std::to_string(n) + " arena tensors");
  SOD2_RETURN_IF_ERROR(program->run(inputs, out, scratch));
  if (execution_layout_applies(p) && lives.size() == n) {
    ExecutionLayout layout;
    const Expected<bool> used = layout.choose(p, *program, lives, inputs);
    if (used.ok() && *used) {
      layout.apply(out);
      at.version = kBindingLayeringVersion;
    }
  }
  if (binding_layout_applies(p) && lives.size() == n) {
    GreedyLayout greedy;
    std::vector<int64_t> greedy_scratch;
    if (use_greedy_if_smaller(std::span<int64_t>(out.data(), 2 * n + 1), lives, &greedy,
                              &greedy_scratch))
      at.version = kBindingGreedyVersion;
  }
  at.sizes.assign(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n));
  at.offsets.assign(out.begin() + static_cast<std::ptrdiff_t>(n),
                    out.begin() + static_cast<std::ptrdiff_t>(2 * n));
  at.arena_bytes = out[2 * n];
  return at;
}

}  // namespace sod2::plan
