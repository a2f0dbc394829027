// The memory plan a run instantiates: the plan version's offsets, or a layout made at the
// binding (greedy without execution symbols, a layering with them), proved sound before use and
// evaluated again as each execution symbol binds.
#include <algorithm>

#include "runtime/exec/frame.h"
#include "runtime/exec/session.h"

namespace sod2::rt {

const std::vector<uint32_t>* Session::plan_slice(int32_t s) {
  constexpr size_t kPlansKept = 4;
  auto it = std::find_if(plan_slices_.begin(), plan_slices_.end(),
                         [&](const PlanSlices& c) { return c.plan == plan_; });
  if (it == plan_slices_.end()) {
    if (plan_slices_.size() == kPlansKept) plan_slices_.pop_back();
    const size_t n = program_.symbols.size();
    plan_slices_.insert(plan_slices_.begin(),
                        PlanSlices{plan_, std::vector<std::vector<uint32_t>>(n),
                                   std::vector<char>(n, 0), std::vector<char>(n, 0)});
    it = plan_slices_.begin();
  }
  PlanSlices& c = *it;
  const size_t k = static_cast<size_t>(s);
  if (k >= c.made.size()) return nullptr;
  if (!c.made[k]) {
    c.made[k] = 1;
    c.slices[k] = plan_->slice_for_input(k);
    // Most of the program: running it all costs about the same, and the slice is not kept.
    c.useful[k] = c.slices[k].size() * 4 < plan_->instructions().size() * 3;
    if (!c.useful[k]) std::vector<uint32_t>().swap(c.slices[k]);
  }
  return c.useful[k] ? &c.slices[k] : nullptr;
}

Status Session::instantiate_plan(int32_t from_step, int32_t changed_symbol) {
  const ProgramDesc& p = program_;
  // After one symbol changes, only the outputs it reaches change: its slice, on the outputs of
  // the last evaluation of the same program.
  const std::vector<uint32_t>* slice =
      changed_symbol >= 0 && plan_outputs_of_ == plan_ ? plan_slice(changed_symbol) : nullptr;
  plan_outputs_.resize(plan_->num_outputs());
  plan_outputs_of_ = nullptr;  // until the evaluation below succeeds
  if (slice)
    SOD2_RETURN_IF_ERROR(plan_->run_slice(*slice, symbol_values_, plan_outputs_, plan_scratch_));
  else
    SOD2_RETURN_IF_ERROR(plan_->run(symbol_values_, plan_outputs_, plan_scratch_));
  plan_outputs_of_ = plan_;
  plan_values_.assign(plan_outputs_.begin(), plan_outputs_.end());
  if (plan_version_ == plan::kBindingLayeringVersion)
    exec_layouts_.front().layout.apply(plan_values_);
  const int64_t old_bytes = arena_bytes_;
  arena_bytes_ = plan_values_.empty() ? 0 : plan_values_.back();
  if (arena_bytes_ < 0) return internal_error("the memory plan gives a negative arena size");
  // A package's plan is data: never let it place a tensor outside the arena, whatever the sizes.
  const size_t n = p.num_arena_tensors;
  for (size_t t = 0; t < n; ++t) {
    const int64_t size = plan_values_[t], offset = plan_values_[n + t];
    if (size < 0 || offset < 0 || offset > arena_bytes_ || size > arena_bytes_ - offset) {
      return invalid_model("the memory plan places tensor " + std::to_string(t) + " at offset " +
                           std::to_string(offset) + " with " + std::to_string(size) +
                           " bytes, outside its arena of " + std::to_string(arena_bytes_) +
                           " bytes");
    }
  }
  if (binding_greedy_) use_binding_greedy();
  if (arena_bytes_ > max_bytes_) {
    return resource_exhausted("the memory plan needs an arena of " + std::to_string(arena_bytes_) +
                              " bytes at these input sizes, above the limit of " +
                              std::to_string(max_bytes_) + " bytes per run (RunLimits::max_bytes)");
  }
  SOD2_RETURN_IF_ERROR(verify_instantiated_plan(from_step));
  // Tensors already written keep their offsets; only the bytes up to the old size matter.
  return arena_->reserve(static_cast<size_t>(arena_bytes_),
                         static_cast<size_t>(std::max<int64_t>(old_bytes, 0)));
}

void Session::choose_execution_layout() {
  // The input symbols and the version decide the layering: a binding seen lately costs a compare.
  std::vector<int64_t>& key = exec_layout_key_;
  key.assign(symbol_values_.begin(), symbol_values_.end());
  for (size_t i = 0; i < program_.symbols.size(); ++i)
    if (program_.symbols[i].execution) key[i] = 0;
  key.push_back(plan_version_);
  auto it = std::find_if(exec_layouts_.begin(), exec_layouts_.end(),
                         [&](const ChosenLayout& c) { return c.key == key; });
  if (it != exec_layouts_.end()) {
    std::rotate(exec_layouts_.begin(), it, it + 1);
  } else {
    if (exec_layouts_.size() == kExecLayoutsKept) exec_layouts_.pop_back();
    exec_layouts_.insert(exec_layouts_.begin(), ChosenLayout{key, {}});
    // A binding whose bounds overflow keeps its version, which holds at any value they take
    // (the layout is then unused).
    const Expected<bool> chosen =
        exec_layouts_.front().layout.choose(program_, *plan_, arena_life_, symbol_values_);
    (void)chosen;
  }
  if (exec_layouts_.front().layout.used()) plan_version_ = plan::kBindingLayeringVersion;
}

void Session::use_binding_greedy() {
  if (greedy_in_ != plan_values_) {
    greedy_in_ = plan_values_;
    greedy_used_ =
        plan::use_greedy_if_smaller(plan_values_, arena_life_, &greedy_layout_, &greedy_scratch_);
    greedy_out_ = plan_values_;
  } else {
    plan_values_ = greedy_out_;
  }
  if (!greedy_used_) return;
  arena_bytes_ = plan_values_.back();
  plan_version_ = plan::kBindingGreedyVersion;
}

Status Session::verify_instantiated_plan(int32_t from_step) {
  const size_t n = program_.num_arena_tensors;
  if (n == 0) return Status::ok_status();
  if (verified_from_step_ <= from_step && verified_plan_values_.size() == plan_values_.size() &&
      std::equal(plan_values_.begin(), plan_values_.end(), verified_plan_values_.begin())) {
    return Status::ok_status();
  }
  for (size_t t = 0; t < n; ++t) {
    // A tensor no node writes holds nothing, and one dead before from_step holds nothing any
    // more: either may sit anywhere. (Detection post-processing binds a symbol per NonZero near
    // the end of the graph, where most tensors are dead.)
    placed_[t] = arena_used_[t] && arena_life_[t].last_step >= from_step
                     ? plan::PlacedTensor{plan_values_[t], plan_values_[n + t], arena_life_[t]}
                     : plan::PlacedTensor{};
  }
  Status st = layout_verifier_.verify(placed_, arena_bytes_, {}, plan::kMinTensorAlignment);
  if (!st.ok()) {
    verified_plan_values_.clear();
    return invalid_model("the memory plan is unsound at these input sizes: " + st.message());
  }
  verified_plan_values_.assign(plan_values_.begin(), plan_values_.end());
  verified_from_step_ = from_step;
  return Status::ok_status();
}

void Session::index_arena_values() {
  const size_t na = program_.num_arena_tensors;
  const std::vector<ValueDesc>& values = main_->graph->values;
  values_in_arena_tensor_.assign(na + 1, 0);
  auto in_arena = [&](const ValueDesc& d) {
    return d.storage == ValueStorage::kArena && d.arena_tensor >= 0 &&
           static_cast<size_t>(d.arena_tensor) < na;
  };
  for (const ValueDesc& d : values)
    if (in_arena(d)) ++values_in_arena_tensor_[static_cast<size_t>(d.arena_tensor) + 1];
  for (size_t k = 0; k < na; ++k) values_in_arena_tensor_[k + 1] += values_in_arena_tensor_[k];
  arena_values_.assign(static_cast<size_t>(values_in_arena_tensor_[na]), 0);
  std::vector<int32_t> next(values_in_arena_tensor_.begin(), values_in_arena_tensor_.end() - 1);
  for (size_t v = 0; v < values.size(); ++v)
    if (in_arena(values[v]))
      arena_values_[static_cast<size_t>(next[static_cast<size_t>(values[v].arena_tensor)]++)] =
          static_cast<int32_t>(v);
}

Status Session::bind_execution_symbol(int32_t symbol, int64_t value, const std::string& value_name,
                                      int32_t step) {
  const size_t s = static_cast<size_t>(symbol);
  const SymbolDesc& sym = program_.symbols[s];
  if (value < sym.lo || value > sym.hi) {
    return internal_error("output '" + value_name + "' makes '" + sym.name + "' " +
                          std::to_string(value) + ", outside the bounds RDP derived (" +
                          std::to_string(sym.lo) + ".." + std::to_string(sym.hi) + ")");
  }
  if (symbol_bound_[s] && symbol_values_[s] == value) return Status::ok_status();
  // Layouts made at this binding reserve no more than the bound here (the symbols it reads are
  // bound by now). A bound that overflows bounds nothing beyond [lo, hi].
  const Expected<int64_t> bound = exec_bounds_.bound_of(program_, symbol_values_, s);
  if (bound.ok() && value > *bound) {
    return invalid_model("output '" + value_name + "' makes '" + sym.name + "' " +
                         std::to_string(value) + ", above its bound " + std::to_string(*bound) +
                         " at these input sizes (the package's execution bounds are wrong)");
  }
  symbol_values_[s] = value;
  symbol_bound_[s] = 1;
  uint8_t* before = arena_->data();
  plan_values_before_.assign(plan_values_.begin(), plan_values_.end());
  SOD2_RETURN_IF_ERROR(instantiate_plan(step, symbol));
  uint8_t* after = arena_->data();
  // Tensors already written must keep their place: the layout just proved sound says nothing
  // about bytes a tensor held at its old place. Each written tensor sits where the plan put it
  // then, and every binding since checked it stayed, so only the arena tensors whose size or
  // offset this binding changed can have moved one (SSDlite: 3-208 of 826, against 1,928 values).
  const size_t na = program_.num_arena_tensors;
  auto check = [&](size_t v) -> Status {
    const ValueDesc& d = main_->graph->values[v];
    if (!main_->ready[v] || d.storage != ValueStorage::kArena) return Status::ok_status();
    const Tensor& t = main_->tensors[v];
    const size_t k = static_cast<size_t>(d.arena_tensor);
    const int64_t old_offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(t.data) -
                                                    reinterpret_cast<uintptr_t>(before));
    if (plan_values_[na + k] != old_offset || plan_values_[k] < static_cast<int64_t>(t.bytes())) {
      return invalid_model("the memory plan moves '" + d.name + "', already written, when '" +
                           sym.name + "' becomes " + std::to_string(value));
    }
    return Status::ok_status();
  };
  if (values_in_arena_tensor_.size() != na + 1) index_arena_values();
  if (plan_values_before_.size() != plan_values_.size()) {
    for (size_t v = 0; v < main_->tensors.size(); ++v) SOD2_RETURN_IF_ERROR(check(v));
  } else {
    for (size_t k = 0; k < na; ++k) {
      if (plan_values_[k] == plan_values_before_[k] &&
          plan_values_[na + k] == plan_values_before_[na + k])
        continue;
      for (int32_t i = values_in_arena_tensor_[k]; i < values_in_arena_tensor_[k + 1]; ++i)
        SOD2_RETURN_IF_ERROR(check(static_cast<size_t>(arena_values_[static_cast<size_t>(i)])));
    }
  }
  if (before != after && before != nullptr) {
    // Rebase the views of everything already in the arena.
    for (Frame* f = main_.get(); f; f = nullptr) {
      for (size_t v = 0; v < f->tensors.size(); ++v) {
        if (!f->ready[v] || f->graph->values[v].storage != ValueStorage::kArena) continue;
        Tensor& t = f->tensors[v];
        t.data = after + (static_cast<uint8_t*>(t.data) - before);
      }
    }
  }
  return Status::ok_status();
}

}  // namespace sod2::rt
