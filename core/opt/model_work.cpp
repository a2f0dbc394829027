#include "core/opt/model_work.h"

#include <cmath>
#include <cstdio>

#include "core/ir/data_type.h"
#include "core/ops/op_registry.h"

namespace sod2::opt {
namespace {

using sym::SymExpr;

// Subgraphs nest only as deep as the import allowed; this bounds the recursion anyway.
constexpr int kMaxBodyDepth = 64;

std::optional<SymExpr> node_work(const Graph& graph, const Node& node, const RdpResult& rdp,
                                 int depth, std::string* why);

std::optional<SymExpr> body_work(const Graph& body, const RdpResult& rdp, int depth) {
  if (depth > kMaxBodyDepth || !rdp.has_facts(body)) return std::nullopt;
  SymExpr sum(0);
  for (const Node& n : body.nodes()) {
    const std::optional<SymExpr> w = node_work(body, n, rdp, depth, nullptr);
    if (!w) return std::nullopt;
    sum = sum + *w;
  }
  return sum;
}

std::optional<SymExpr> node_work(const Graph& graph, const Node& node, const RdpResult& rdp,
                                 int depth, std::string* why) {
  const OpSpec* spec = find_op_spec(node);
  if (!spec || !spec->work) {
    if (why)
      *why = node.domain.empty() ? "no work rule for this op"
                                 : "an op of domain '" + node.domain + "'";
    return std::nullopt;
  }
  auto facts = [&](const std::vector<ValueId>& ids) {
    std::vector<const TensorFact*> out;
    out.reserve(ids.size());
    for (ValueId id : ids) out.push_back(id == kNoValue ? nullptr : &rdp.fact(graph, id));
    return out;
  };
  WorkView view{node, facts(node.inputs), facts(node.outputs),
                [&rdp, depth](const Graph& body) { return body_work(body, rdp, depth + 1); }};
  std::optional<SymExpr> w = spec->work(view);
  if (w && w->is_overflow()) w.reset();
  if (!w && why)
    *why = node.subgraphs().empty() ? "a dim it needs is unknown"
                                    : "its body's work or its trip count is unknown";
  return w;
}

}  // namespace

ModelWork count_work(const Model& model, const RdpResult& rdp) {
  ModelWork out;
  const Graph& graph = *model.graph;
  out.node_ops.resize(graph.num_nodes());
  for (size_t i = 0; i < graph.num_nodes(); ++i) {
    const Node& node = graph.nodes()[i];
    std::string why;
    out.node_ops[i] = node_work(graph, node, rdp, 0, &why);
    if (out.node_ops[i])
      out.total_ops = out.total_ops + *out.node_ops[i];
    else
      out.uncounted.push_back(node.name + " (" + node.op_type + "): " + why);
  }
  out.involves_execution = rdp.involves_execution(out.total_ops);
  return out;
}

std::optional<sym::SymExpr> group_ops(const ModelWork& work, const FusionGroup& group) {
  SymExpr sum(0);
  for (NodeId id : group.nodes) {
    const auto i = static_cast<size_t>(id);
    if (i >= work.node_ops.size() || !work.node_ops[i]) return std::nullopt;
    sum = sum + *work.node_ops[i];
  }
  return sum;
}

std::optional<sym::SymExpr> group_bytes(const Graph& graph, const RdpResult& rdp,
                                        const FusionGroup& group) {
  SymExpr sum(0);
  for (const std::vector<ValueId>* list : {&group.inputs, &group.outputs}) {
    for (ValueId id : *list) {
      if (id == kNoValue) continue;
      const TensorFact& f = rdp.fact(graph, id);
      const std::optional<SymExpr> n = f.numel();
      const size_t size = data_type_size(f.dtype);
      if (!n || size == 0) return std::nullopt;
      sum = sum + *n * static_cast<int64_t>(size);
    }
  }
  return sum;
}

std::optional<int64_t> ops_at(const sym::SymExpr& ops, const sym::Binding& binding) {
  const Expected<int64_t> v = sym::evaluate(ops, binding);
  if (!v.ok()) return std::nullopt;
  return *v;
}

std::string human_ops(double ops) {
  static const char* const kUnits[] = {"OP", "kOP", "MOP", "GOP", "TOP", "POP"};
  int u = 0;
  while (std::fabs(ops) >= 1000.0 && u < 5) {
    ops /= 1000.0;
    ++u;
  }
  char buf[48];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%.0f %s", ops, kUnits[u]);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", ops, kUnits[u]);
  return buf;
}

}  // namespace sod2::opt
