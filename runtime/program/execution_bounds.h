// Execution symbols' bounds at one binding (ProgramDesc::execution_bounds, DESIGN §5). The
// compiler writes each as an expression of the other symbols (NonZero's count <= numel of its
// input, TopK's = k); one may read an older execution symbol, whose own bound then stands in for
// it until it is bound. The session checks every value a node binds against it, and lays a
// binding out with every execution symbol at it (binding_layout.h); reports do the same.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::plan {

// Whether `program`'s execution bounds and arena known steps fit it: no bounds program, or one
// over the symbols with one output per symbol; no known steps, or one per arena tensor, each >= 0.
Status check_execution_bounds_shape(const rt::ProgramDesc& program);

// Keeps its working buffers between calls.
class ExecutionBounds {
 public:
  // The bound of symbol `k` (an execution symbol) at `values` (one per symbol): the program's
  // output clamped to the symbol's [lo, hi], or hi without a bounds program. Errors: the program
  // overflows at these values.
  Expected<int64_t> bound_of(const rt::ProgramDesc& program, std::span<const int64_t> values,
                             size_t k);
  // Sets every execution symbol of `values` to its bound at the input symbols `values` holds,
  // the symbols a bound reads at their own bounds. Errors: an overflow, or bounds that do not
  // settle within one pass per execution symbol (they read each other in a cycle).
  Status bound_all(const rt::ProgramDesc& program, std::span<int64_t> values);

 private:
  Status evaluate(const rt::ProgramDesc& program, std::span<const int64_t> values);
  std::vector<int64_t> out_, scratch_;
};

}  // namespace sod2::plan
