// The propagation engine behind run_rdp(). Internal to core/rdp.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "core/ops/infer_context.h"
#include "core/rdp/rdp.h"

namespace sod2 {

class RdpEngine {
 public:
  RdpEngine(const Model& model, const RdpOptions& options, RdpResult* result)
      : model_(model), options_(options), result_(result) {}

  Status run();

  // --- services for NodeContext ---
  const sym::RangeMap& ranges() const { return result_->ranges_; }
  sym::SymExpr simplify(const sym::SymExpr& e) const;
  void require_equal(const sym::SymExpr& a, const sym::SymExpr& b, std::string_view why,
                     const Node& node);
  sym::SymExpr execution_symbol(const std::string& name, int64_t lo, int64_t hi,
                                const std::string& origin);
  // The bound an op's rule states for the execution symbol `e` (RdpResult::execution_bound).
  void bound_execution(const sym::SymExpr& e, const sym::SymExpr& bound);
  void diagnose(Severity severity, std::string message, const std::string& node);
  Expected<std::vector<TensorFact>> propagate_graph(const Graph& graph,
                                                    const std::vector<TensorFact>* inputs);
  TensorFact refine(TensorFact fact) const;
  // While muted (inside a body that never runs) requirements and diagnostics are dropped.
  void mute(int delta) { muted_ += delta; }

 private:
  Status init_input_symbols();
  void add_refinement(const sym::Symbol& s, const sym::SymExpr& value);
  std::string symbol_name_for(const std::string& raw);
  TensorFact declared_fact(const Value& v, bool symbols_from_params) const;
  TensorFact initializer_fact(const Tensor& t) const;
  void run_node(const Graph& graph, const Node& node, std::vector<TensorFact>& facts);
  void check_declared(const Graph& graph, const Value& value, const TensorFact& fact);
  void record_resolution(const Node& node, const std::vector<TensorFact>& facts);
  void close_execution_bounds();

  const Model& model_;
  const RdpOptions& options_;
  RdpResult* result_;
  std::set<std::string> assumption_keys_;
  std::map<std::string, sym::SymExpr> labels_;  // dim_param label -> first derived dim
  bool refined_this_pass_ = false;
  int muted_ = 0;
  Diagnostics pass_diagnostics_;
  std::vector<Assumption> pass_assumptions_;
  std::unordered_map<std::string, std::string> exec_names_;  // raw name -> symbol name
  std::set<std::string> taken_names_;
};

}  // namespace sod2
