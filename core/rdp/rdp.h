// Rank and Dimension Propagation (DESIGN §4): every value of every graph gets a TensorFact —
// rank, dims as SymExprs over input symbols and execution symbols, and values of small integer
// tensors — forward through the op rules, backward through the equalities the model needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/model.h"
#include "core/ops/tensor_fact.h"
#include "core/status/diagnostic.h"
#include "core/status/status.h"
#include "core/sym/ranges.h"
#include "core/sym/transform.h"

namespace sod2 {

struct RdpOptions {
  // Ranges of input symbols (by name). Symbols without one get `default_range` and a warning.
  std::unordered_map<std::string, sym::SymbolRange> ranges;
  sym::SymbolRange default_range{1, 65536, 1};
};

// An equality the model needs that the prover could not show for the whole range: used for
// propagation, checked when inputs are bound.
struct Assumption {
  sym::SymExpr lhs;
  sym::SymExpr rhs;
  std::string node;
  std::string why;
  std::string to_string() const { return lhs.to_string() + " == " + rhs.to_string(); }
};

enum class SymbolKind { kInput, kExecution };

struct SymbolInfo {
  sym::Symbol symbol;
  SymbolKind kind;
  std::string origin;  // "input image dim 2", "node NonZero_17 output 0 dim 1"
  bool has_declared_range = false;
};

class RdpResult {
 public:
  const TensorFact& fact(const Graph& graph, ValueId id) const;
  bool has_facts(const Graph& graph) const { return facts_.count(&graph) != 0; }

  const std::vector<SymbolInfo>& symbols() const { return symbols_; }
  const SymbolInfo* symbol_info(const sym::Symbol& s) const;
  bool is_execution_symbol(const sym::Symbol& s) const;
  // Whether a dim involves an execution symbol.
  bool involves_execution(const sym::SymExpr& e) const;
  const sym::RangeMap& ranges() const { return ranges_; }
  const std::vector<Assumption>& assumptions() const { return assumptions_; }
  const Diagnostics& diagnostics() const { return diagnostics_; }
  // Execution symbols RDP replaced by an expression of older symbols.
  const sym::Substitution& refinements() const { return refinements_; }
  // An execution symbol's upper-bound expression, from its op's spec (NonZero: numel of the
  // input; TopK: the axis dim; NonMaxSuppression: batch x classes x min(max boxes, boxes)...):
  // the symbol never exceeds it at any binding. Older execution symbols in it are replaced by
  // their own bounds where the expression grows with them, so it is usually over input symbols
  // only. nullopt when the op's rule knows no bound. ranges() keeps the constant range: the
  // bound's upper end over the whole declared ranges.
  std::optional<sym::SymExpr> execution_bound(const sym::Symbol& s) const;
  // The bound as the rule stated it, over the node's input dims: it may mention older execution
  // symbols, and is then tighter than execution_bound() once those are bound.
  std::optional<sym::SymExpr> direct_execution_bound(const sym::Symbol& s) const;
  // For an ISVDOS node: whether every value input was resolved (its output shape is static).
  bool resolved(const Node& node) const;
  int passes() const { return passes_; }

 private:
  friend class RdpEngine;
  std::unordered_map<const Graph*, std::vector<TensorFact>> facts_;
  std::unordered_map<const Node*, bool> resolved_;
  std::vector<SymbolInfo> symbols_;
  std::unordered_map<const void*, size_t> symbol_index_;
  sym::RangeMap ranges_;
  std::vector<Assumption> assumptions_;
  Diagnostics diagnostics_;
  sym::Substitution refinements_;
  // Keyed by the symbol's node, like symbol_index_.
  std::unordered_map<const void*, sym::SymExpr> direct_bounds_, closed_bounds_;
  int passes_ = 0;
};

// Never fails on a valid model: what cannot be known stays unknown, with diagnostics. Fails only
// on bad options (an invalid range).
Expected<RdpResult> run_rdp(const Model& model, const RdpOptions& options = {});

}  // namespace sod2
