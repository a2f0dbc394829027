// InferContext for one node during a propagation pass. Internal to core/rdp.
#pragma once

#include "core/rdp/rdp_engine.h"

namespace sod2 {

class NodeContext : public InferContext {
 public:
  NodeContext(RdpEngine& engine, const Graph& graph, const Node& node,
              const std::vector<TensorFact>& facts)
      : engine_(engine), graph_(graph), node_(node), facts_(facts), outputs_(node.outputs.size()) {}

  const Node& node() const override { return node_; }
  const Graph& graph() const override { return graph_; }
  const TensorFact& input(size_t i) const override {
    static const TensorFact kUnknown;
    if (!has_input(i)) return kUnknown;
    return facts_[static_cast<size_t>(node_.inputs[i])];
  }
  void set_output(size_t i, TensorFact fact) override {
    if (i < outputs_.size()) outputs_[i] = std::move(fact);
  }
  const sym::RangeMap& ranges() const override { return engine_.ranges(); }
  sym::SymExpr simplify(const sym::SymExpr& e) const override { return engine_.simplify(e); }
  void require_equal(const sym::SymExpr& a, const sym::SymExpr& b, std::string_view why) override {
    engine_.require_equal(a, b, why, node_);
  }
  sym::SymExpr execution_dim(size_t output, size_t dim, int64_t lo, int64_t hi) override {
    return engine_.execution_symbol(
        node_.name + ".out" + std::to_string(output) + ".d" + std::to_string(dim), lo, hi,
        "node " + node_.name + " output " + std::to_string(output) + " dim " + std::to_string(dim));
  }
  sym::SymExpr execution_symbol(std::string_view suffix, int64_t lo, int64_t hi) override {
    return engine_.execution_symbol(node_.name + "." + std::string(suffix), lo, hi,
                                    "node " + node_.name + " (" + std::string(suffix) + ")");
  }
  void bound_execution(const sym::SymExpr& e, const sym::SymExpr& bound) override {
    engine_.bound_execution(e, bound);
  }
  void warn(std::string message) override {
    engine_.diagnose(Severity::kWarning, std::move(message), node_.name);
  }
  Expected<std::vector<TensorFact>> infer_subgraph(const Graph& body,
                                                   const std::vector<TensorFact>& inputs,
                                                   bool reachable) override {
    if (reachable) return engine_.propagate_graph(body, &inputs);
    engine_.mute(+1);
    auto result = engine_.propagate_graph(body, &inputs);
    engine_.mute(-1);
    return result;
  }

  std::vector<TensorFact>& outputs() { return outputs_; }

 private:
  RdpEngine& engine_;
  const Graph& graph_;
  const Node& node_;
  const std::vector<TensorFact>& facts_;
  std::vector<TensorFact> outputs_;
};

}  // namespace sod2
