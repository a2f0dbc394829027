#include "core/package/activation_chains.h"

#include <algorithm>

#include "core/package/kernel_fusion.h"

namespace sod2::package {

bool read_only_by(const Graph& g, ValueId v, std::vector<NodeId> readers) {
  std::vector<NodeId> got = g.value(v).consumers;
  std::sort(got.begin(), got.end());
  std::sort(readers.begin(), readers.end());
  const auto& outs = g.outputs();
  return got == readers && std::find(outs.begin(), outs.end(), v) == outs.end();
}

std::optional<ChainedActivation> match_silu(const Graph& g, std::span<const NodeId> nodes, size_t i,
                                            ValueId x) {
  if (i + 2 > nodes.size()) return std::nullopt;
  const Node& sigmoid = g.node(nodes[i]);
  const Node& mul = g.node(nodes[i + 1]);
  if (sigmoid.op_type != "Sigmoid" || !sigmoid.domain.empty() || sigmoid.inputs.size() != 1 ||
      sigmoid.inputs[0] != x || sigmoid.outputs.size() != 1)
    return std::nullopt;
  const ValueId sig = sigmoid.outputs[0];
  const bool reads_both = mul.op_type == "Mul" && mul.domain.empty() && mul.inputs.size() == 2 &&
                          mul.outputs.size() == 1 &&
                          ((mul.inputs[0] == x && mul.inputs[1] == sig) ||
                           (mul.inputs[0] == sig && mul.inputs[1] == x));
  if (!reads_both || !read_only_by(g, x, {nodes[i], nodes[i + 1]}) ||
      !read_only_by(g, sig, {nodes[i + 1]}))
    return std::nullopt;
  ChainedActivation a;
  a.name = "Silu";
  a.nodes = 2;
  a.out = mul.outputs[0];
  return a;
}

std::optional<ChainedActivation> match_gelu(const Graph& g, const RdpResult& rdp,
                                            std::span<const NodeId> nodes, size_t i, ValueId x) {
  if (i + 5 > nodes.size()) return std::nullopt;
  const Node* n[5];
  for (size_t j = 0; j < 5; ++j) {
    n[j] = &g.node(nodes[i + j]);
    if (!n[j]->domain.empty() || n[j]->outputs.size() != 1 || n[j]->outputs[0] == kNoValue)
      return std::nullopt;
  }
  // The operand of binary node `b` beside `v`, or kNoValue.
  const auto other = [](const Node& b, ValueId v) {
    if (b.inputs.size() != 2) return kNoValue;
    if (b.inputs[0] == v && b.inputs[1] != v) return b.inputs[1];
    if (b.inputs[1] == v && b.inputs[0] != v) return b.inputs[0];
    return kNoValue;
  };
  const auto scalar_is = [&](ValueId v, float want) {
    const auto c = v == kNoValue ? std::nullopt : constant_float_scalar(g, rdp, v);
    return c && *c == want;
  };
  const bool divide = n[0]->op_type == "Div";
  if ((!divide && n[0]->op_type != "Mul") || n[0]->inputs.size() != 2) return std::nullopt;
  // Div reads x first; Mul either way.
  const ValueId kv = divide ? (n[0]->inputs[0] == x ? n[0]->inputs[1] : kNoValue) : other(*n[0], x);
  const auto k = kv == kNoValue ? std::nullopt : constant_float_scalar(g, rdp, kv);
  if (!k) return std::nullopt;
  const ValueId t = n[0]->outputs[0], e = n[1]->outputs[0], p = n[2]->outputs[0],
                q = n[3]->outputs[0];
  if (n[1]->op_type != "Erf" || n[1]->inputs.size() != 1 || n[1]->inputs[0] != t)
    return std::nullopt;
  if (n[2]->op_type != "Add" || !scalar_is(other(*n[2], e), 1.f)) return std::nullopt;
  if (n[3]->op_type != "Mul" || other(*n[3], p) != x) return std::nullopt;
  if (n[4]->op_type != "Mul" || !scalar_is(other(*n[4], q), 0.5f)) return std::nullopt;
  if (!read_only_by(g, x, {nodes[i], nodes[i + 3]}) || !read_only_by(g, t, {nodes[i + 1]}) ||
      !read_only_by(g, e, {nodes[i + 2]}) || !read_only_by(g, p, {nodes[i + 3]}) ||
      !read_only_by(g, q, {nodes[i + 4]}))
    return std::nullopt;
  ChainedActivation a;
  a.name = "GeluErf";
  a.alpha = *k;
  a.beta = divide ? 1.f : 0.f;
  a.nodes = 5;
  a.out = n[4]->outputs[0];
  return a;
}

}  // namespace sod2::package
