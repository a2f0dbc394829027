// The interface a shape rule sees: the node, the facts of its inputs, somewhere to put the facts of
// its outputs, and the engine's services (proofs under the declared ranges, equalities the model
// requires, fresh execution symbols, subgraph propagation). RDP implements it; rules never see the
// engine.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/tensor_fact.h"
#include "core/status/status.h"
#include "core/sym/ranges.h"
#include "core/sym/sym_expr.h"

namespace sod2 {

enum class Tri { kTrue, kFalse, kUnknown };

class InferContext {
 public:
  virtual ~InferContext() = default;

  virtual const Node& node() const = 0;
  virtual const Graph& graph() const = 0;
  int64_t opset() const { return node().opset; }
  size_t num_inputs() const { return node().inputs.size(); }
  size_t num_outputs() const { return node().outputs.size(); }
  bool has_input(size_t i) const { return i < num_inputs() && node().inputs[i] != kNoValue; }
  bool has_output(size_t i) const { return i < num_outputs() && node().outputs[i] != kNoValue; }

  // An omitted or absent input reads as the unknown fact.
  virtual const TensorFact& input(size_t i) const = 0;
  virtual void set_output(size_t i, TensorFact fact) = 0;

  // --- attributes (nullopt when absent or of another type) ---
  std::optional<int64_t> attr_int(std::string_view name) const;
  int64_t attr_int(std::string_view name, int64_t fallback) const;
  std::optional<float> attr_float(std::string_view name) const;
  std::optional<std::vector<int64_t>> attr_ints(std::string_view name) const;
  std::optional<std::vector<float>> attr_floats(std::string_view name) const;
  std::optional<std::string> attr_string(std::string_view name) const;
  const Tensor* attr_tensor(std::string_view name) const;
  const Graph* attr_graph(std::string_view name) const;

  // Input values when every element is a constant integer.
  std::optional<std::vector<int64_t>> input_ints(size_t i) const;

  // --- reasoning under the declared symbol ranges ---
  virtual const sym::RangeMap& ranges() const = 0;
  Tri prove_eq(const sym::SymExpr& a, const sym::SymExpr& b) const;
  Tri prove_le(const sym::SymExpr& a, const sym::SymExpr& b) const;
  Tri prove_lt(const sym::SymExpr& a, const sym::SymExpr& b) const;
  virtual sym::SymExpr simplify(const sym::SymExpr& e) const = 0;

  // The model needs a == b (broadcast operands, MatMul inner dims, Concat non-axis dims...).
  // The engine proves it, refines an execution symbol, records an assumption, or reports a
  // contradiction naming this node.
  virtual void require_equal(const sym::SymExpr& a, const sym::SymExpr& b,
                             std::string_view why) = 0;

  // A fresh execution symbol for a dim known only at run time, named `<node>.out<o>.d<d>`
  // (or `<node>.<suffix>`), with bounds [lo, hi]. The same call on a later pass returns the same
  // symbol, so propagation stays deterministic.
  virtual sym::SymExpr execution_dim(size_t output, size_t dim, int64_t lo, int64_t hi) = 0;
  virtual sym::SymExpr execution_symbol(std::string_view suffix, int64_t lo, int64_t hi) = 0;

  // The same, for a dim the op's spec bounds by `bound`, an expression of the node's input dims
  // and values (NonZero: numel of its input). The constant range is [lo, upper end of `bound`
  // under the ranges]; the engine also keeps `bound` itself, so that a plan reported at a binding
  // sizes the dim by the bound's value there rather than at the top of the ranges. `bound` must
  // hold at every binding: a rule that knows none passes nullopt (range [lo, kDefaultMaxDim]).
  sym::SymExpr bounded_execution_dim(size_t output, size_t dim, int64_t lo,
                                     const std::optional<sym::SymExpr>& bound);
  sym::SymExpr bounded_execution_symbol(std::string_view suffix, int64_t lo,
                                        const std::optional<sym::SymExpr>& bound);
  // Records `bound` for the execution symbol `e` that execution_dim/execution_symbol returned
  // (nothing when `e` is no longer a symbol: RDP refined it). Contexts without an engine (rule
  // tests) may ignore it.
  virtual void bound_execution(const sym::SymExpr& e, const sym::SymExpr& bound) {
    (void)e;
    (void)bound;
  }

  virtual void warn(std::string message) = 0;

  // Propagates `body` with `inputs` bound to its graph inputs (outer-scope values read the facts
  // the engine already has) and returns the facts of its outputs. A body that provably never runs
  // (the untaken branch of an If with a known condition) is propagated with `reachable` false:
  // its values get facts for the views, but its requirements and warnings are ignored.
  virtual Expected<std::vector<TensorFact>> infer_subgraph(const Graph& body,
                                                           const std::vector<TensorFact>& inputs,
                                                           bool reachable = true) = 0;
};

}  // namespace sod2
