#include "core/opt/plan_program.h"

#include <algorithm>

#include "core/sym/shape_compiler.h"
#include "core/sym/transform.h"

namespace sod2::opt {

Expected<PlanProgram> PlanProgram::compile(const SymbolicPlan& plan) {
  PlanProgram p;
  p.num_tensors_ = plan.sizes.size();
  std::vector<sym::SymExpr> outputs;
  outputs.reserve(2 * p.num_tensors_ + 1);
  outputs.insert(outputs.end(), plan.sizes.begin(), plan.sizes.end());
  outputs.insert(outputs.end(), plan.offsets.begin(), plan.offsets.end());
  outputs.push_back(plan.arena_bytes);
  // The free symbols of everything: the arena's and the sizes' cover the offsets' (every offset
  // is built from sizes), but collecting from all keeps that an observation, not an assumption.
  std::vector<sym::Symbol> symbols;
  for (const sym::SymExpr& e : outputs) {
    for (const sym::Symbol& s : sym::free_symbols(e)) {
      if (std::find(symbols.begin(), symbols.end(), s) == symbols.end()) symbols.push_back(s);
    }
  }
  std::sort(symbols.begin(), symbols.end(),
            [](const sym::Symbol& a, const sym::Symbol& b) { return a.name() < b.name(); });
  SOD2_ASSIGN_OR_RETURN(p.program_, sym::compile_shape_program(outputs, symbols));
  p.symbols_ = std::move(symbols);
  return p;
}

PlanInstance PlanProgram::make_instance() const {
  PlanInstance inst;
  inst.num_tensors_ = num_tensors_;
  inst.values_.assign(program_.num_outputs(), 0);
  inst.scratch_.assign(program_.scratch_size(), 0);
  return inst;
}

Expected<std::vector<int64_t>> PlanProgram::inputs_from(const sym::Binding& binding) const {
  std::vector<int64_t> values;
  values.reserve(symbols_.size());
  for (const sym::Symbol& s : symbols_) {
    auto it = binding.find(s);
    if (it == binding.end()) return not_found("the plan needs a value for '" + s.name() + "'");
    values.push_back(it->second);
  }
  return values;
}

Status PlanProgram::instantiate(std::span<const int64_t> symbol_values, PlanInstance* out) const {
  return program_.run(symbol_values, out->values_, out->scratch_);
}

}  // namespace sod2::opt
