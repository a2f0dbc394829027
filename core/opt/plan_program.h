// A symbolic plan compiled for instantiation: one ShapeProgram computes every size, every offset
// and the arena size from the symbols' values. Instantiating a plan for a binding is running that
// program: no planning search and no heap allocation (DESIGN §6, "instantiate offsets").
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/opt/symbolic_planner.h"
#include "core/status/status.h"
#include "core/sym/evaluate.h"
#include "runtime/program/shape_program.h"

namespace sod2::opt {

// One instantiated plan; buffers are sized once by PlanProgram::make_instance and reused.
class PlanInstance {
 public:
  size_t num_tensors() const { return num_tensors_; }
  int64_t size(size_t t) const { return values_[t]; }
  int64_t offset(size_t t) const { return values_[num_tensors_ + t]; }
  int64_t arena_bytes() const { return values_[2 * num_tensors_]; }

 private:
  friend class PlanProgram;
  size_t num_tensors_ = 0;
  std::vector<int64_t> values_;  // sizes, then offsets, then the arena size
  std::vector<int64_t> scratch_;
};

class PlanProgram {
 public:
  // Errors: an expression the shape compiler rejects (an overflow poison).
  static Expected<PlanProgram> compile(const SymbolicPlan& plan);

  // The program's inputs, in the order instantiate() reads them: the plan's free symbols, sorted
  // by name.
  std::span<const sym::Symbol> symbols() const { return symbols_; }
  const rt::ShapeProgram& program() const { return program_; }

  PlanInstance make_instance() const;
  // Values of symbols(), in order, from a binding; errors name a missing symbol.
  Expected<std::vector<int64_t>> inputs_from(const sym::Binding& binding) const;
  // Runs the program into `out` (from make_instance()). Allocates nothing unless it fails.
  // Errors: int64 overflow or a division by zero at these values.
  Status instantiate(std::span<const int64_t> symbol_values, PlanInstance* out) const;

 private:
  std::vector<sym::Symbol> symbols_;
  rt::ShapeProgram program_;
  size_t num_tensors_ = 0;
};

}  // namespace sod2::opt
