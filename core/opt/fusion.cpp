#include "core/opt/fusion.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <queue>

#include "core/ops/constant_nodes.h"
#include "core/ops/op_registry.h"
#include "core/opt/fusion_rules.h"
#include "core/sym/prover.h"

namespace sod2::opt {

bool same_shape(const TensorFact& a, const TensorFact& b, const sym::RangeMap& ranges) {
  if (!a.dims || !b.dims || a.dims->size() != b.dims->size()) return false;
  for (size_t i = 0; i < a.dims->size(); ++i) {
    const Dim& x = (*a.dims)[i];
    const Dim& y = (*b.dims)[i];
    if (!x || !y) return false;
    if (!(*x == *y) && sym::prove_eq(*x, *y, ranges) != sym::Proof::kTrue) return false;
  }
  return true;
}

namespace {

// Each group's inputs (read from outside it) and outputs (read outside it, graph outputs, or
// read by nobody), from the final membership.
void fill_group_io(const Graph& g, FusionPlan* plan) {
  std::vector<char> is_output(g.num_values(), 0);
  for (ValueId v : g.outputs()) is_output[static_cast<size_t>(v)] = 1;
  for (FusionGroup& grp : plan->groups) {
    grp.inputs.clear();
    grp.outputs.clear();
    const int32_t id = plan->group_of[static_cast<size_t>(grp.nodes.front())];
    auto add = [](std::vector<ValueId>* list, ValueId v) {
      if (std::find(list->begin(), list->end(), v) == list->end()) list->push_back(v);
    };
    for (NodeId x : grp.nodes) {
      const Node& node = g.node(x);
      for (const auto* ins : {&node.inputs, &node.implicit_inputs}) {
        for (ValueId v : *ins) {
          if (v == kNoValue) continue;
          const Value& value = g.value(v);
          if (value.producer == kNoNode ||
              plan->group_of[static_cast<size_t>(value.producer)] != id)
            add(&grp.inputs, v);
        }
      }
      for (ValueId v : node.outputs) {
        if (v == kNoValue) continue;
        bool outside = is_output[static_cast<size_t>(v)] || g.value(v).consumers.empty();
        for (NodeId y : g.value(v).consumers) {
          outside = outside || (plan->group_of[static_cast<size_t>(y)] != id &&
                                op_class_of(g.node(y)) != OpClass::kISDO);
        }
        if (outside) add(&grp.outputs, v);
      }
    }
  }
}

class Fuser {
 public:
  Fuser(const Graph& graph, const RdpResult& rdp) : g_(graph), rdp_(rdp) {}

  Expected<FusionPlan> run() {
    SOD2_ASSIGN_OR_RETURN(order_, g_.topological_order());
    const size_t n = g_.num_nodes();
    pos_.assign(n, 0);
    for (size_t i = 0; i < order_.size(); ++i)
      pos_[static_cast<size_t>(order_[i])] = static_cast<int32_t>(i);
    parent_.resize(n);
    std::iota(parent_.begin(), parent_.end(), 0);
    members_.assign(n, {});
    anchor_.assign(n, -1);
    notes_.assign(n, {});
    for (size_t i = 0; i < n; ++i) {
      members_[i] = {static_cast<NodeId>(i)};
      const FusionRole r = role(static_cast<NodeId>(i));
      // A quantization node joins only a contraction's group, whose anchor stays the contraction.
      if (r != FusionRole::kElementwise && r != FusionRole::kQuantization)
        anchor_[i] = static_cast<NodeId>(i);
    }
    // Two passes over each node's inputs: an input read twice by the group (x in GELU's
    // x * (1 + erf(x / sqrt 2)) / 2) can only join once the other reader has.
    for (NodeId c : order_) {
      if (is_constant_node(g_, g_.node(c))) continue;
      for (int pass = 0; pass < 2; ++pass)
        for (ValueId v : g_.node(c).inputs) consider(v, c);
    }
    fold_quantized_joins();
    return build();
  }

 private:
  FusionRole role(NodeId n) const { return fusion_role(g_.node(n)); }
  const TensorFact& fact(ValueId v) const { return rdp_.fact(g_, v); }
  int32_t find(int32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }

  // Whether the node's output shape follows from input shapes alone, as fusion needs.
  bool shape_static(NodeId n) const {
    const OpClass c = op_class_of(g_.node(n));
    return c == OpClass::kISDOS || (c == OpClass::kISVDOS && rdp_.resolved(g_.node(n)));
  }

  // Why p was not fused into c's group; dropped at the end if they did join later.
  struct Note {
    NodeId producer;
    std::string text;
  };
  void note(NodeId c, const std::string& text) {
    const NodeId p = g_.value(current_value_).producer;
    auto& list = notes_[static_cast<size_t>(c)];
    for (Note& n : list) {
      if (n.producer == p) {
        n.text = text;  // the latest reason
        return;
      }
    }
    list.push_back({p, text});
  }

  void consider(ValueId v, NodeId c) {
    if (v == kNoValue) return;
    const Value& value = g_.value(v);
    if (value.kind != ValueKind::kNodeOutput || value.producer == kNoNode) return;
    current_value_ = v;
    const NodeId p = value.producer;
    if (is_constant_node(g_, g_.node(p))) return;
    const int32_t gp = find(p), gc = find(c);
    if (gp == gc) return;  // already together (a value read twice by one node)
    const std::string who = "'" + g_.node(p).name + "'";
    const FusionRole rp = role(p), rc = role(c);
    if (transpose_operand(v, p, c, gp, gc)) {
      if (!joins_alone(v, c, gc, who)) return;
      const NodeId anchor = anchor_[static_cast<size_t>(gc)];
      merge(gp, gc);
      anchor_[static_cast<size_t>(find(c))] = anchor;  // the MatMul, not the Transpose
      return;
    }
    if (rp == FusionRole::kQuantization || rc == FusionRole::kQuantization) {
      if (!quantization_edge(v, p, c, gp)) {
        if (rc != FusionRole::kOpaque)
          note(c, who + ": " + g_.node(rp == FusionRole::kQuantization ? p : c).op_type +
                      " fuses only into an int8 group (Conv/MatMul/Gemm, Add, MaxPool)");
        return;
      }
      if (!joins_alone(v, c, gc, who)) return;
      return merge(gp, gc);
    }
    if (rc == FusionRole::kOpaque) return;  // an opaque consumer is its own kernel: no news
    if (rp == FusionRole::kOpaque)
      return note(c, who + ": " + g_.node(p).op_type + " does not fuse");
    if (!shape_static(p) || !shape_static(c)) {
      const NodeId bad = shape_static(p) ? c : p;
      return note(
          c, who + ": '" + g_.node(bad).name + "' is " + op_class_name(op_class_of(g_.node(bad))) +
                 (op_class_of(g_.node(bad)) == OpClass::kISVDOS ? " with unresolved value inputs"
                                                                : ""));
    }
    // A QDQ group (a residual join's DequantizeLinears...) stays out of a normalization's or
    // reduction's group, which no int8 kernel runs: it may then join the convolution before it
    // (fold_quantized_joins), where a ResNet's last join before its GlobalAveragePool ran as
    // five nodes one by one.
    if ((rc == FusionRole::kNormalization || rc == FusionRole::kReduction) && quantized(gp))
      return note(c, who + ": a QDQ group does not fuse into a " +
                         std::string(fusion_role_name(rc)) + " (no int8 kernel runs one)");
    if (!joins_alone(v, c, gc, who)) return;
    const NodeId ap = anchor_[static_cast<size_t>(gp)], ac = anchor_[static_cast<size_t>(gc)];
    if (ap >= 0 && ac >= 0)
      return note(c, who + ": a group holds one " + std::string(fusion_role_name(role(ac))) +
                         " and '" + g_.node(ap).name + "' is another non-elementwise op");
    if (ac >= 0 && role(ac) == FusionRole::kContraction)
      return note(c, who + ": a contraction takes no prologue");
    // Shapes: every elementwise node of the result computes the anchor's input or output shape,
    // or, without an anchor, one shared shape.
    if (rc == FusionRole::kElementwise) {
      if (!same_shape(fact(v), fact(g_.node(c).outputs[0]), rdp_.ranges()))
        return note(c, who + ": '" + value.name + "' " + fact(v).to_string() + " is broadcast to " +
                           fact(g_.node(c).outputs[0]).to_string());
    } else if (v != g_.node(c).inputs[0]) {
      return note(
          c, who + ": '" + value.name + "' is not the data input of '" + g_.node(c).name + "'");
    }
    if (creates_cycle(gp, gc))
      return note(c, who + ": fusing would create a cycle through another group");
    merge(gp, gc);
  }

  // Whether v may disappear into c's group: it is no graph output and nobody outside reads it
  // (else notes why not).
  bool joins_alone(ValueId v, NodeId c, int32_t gc, const std::string& who) {
    const Value& value = g_.value(v);
    if (std::find(g_.outputs().begin(), g_.outputs().end(), v) != g_.outputs().end()) {
      note(c, who + ": '" + value.name + "' is a graph output");
      return false;
    }
    for (NodeId reader : value.consumers) {
      // An ISDO reader (Shape, Size) needs only v's shape, which RDP knows: it does not keep v
      // materialised.
      if (op_class_of(g_.node(reader)) == OpClass::kISDO) continue;
      if (find(reader) != gc) {
        note(c, who + ": '" + value.name + "' is also read by '" + g_.node(reader).name + "'");
        return false;
      }
    }
    return true;
  }

  // A Transpose read only as a MatMul's A or B, leaving each matrix addressable by a GEMM
  // (gemm_readable_perm): the MatMul's group takes it as a
  // prologue and the kernel reads the Transpose's input through the permutation (FusedMatMul's
  // a_perm / b_perm), so the transposed copy is never written. Attention's head splits and K^T
  // are such Transposes.
  bool transpose_operand(ValueId v, NodeId p, NodeId c, int32_t gp, int32_t gc) {
    const Node& pn = g_.node(p);
    const Node& cn = g_.node(c);
    if (pn.op_type != "Transpose" || !pn.domain.empty() || pn.inputs.size() != 1 ||
        pn.outputs.size() != 1 || cn.op_type != "MatMul" || !cn.domain.empty() ||
        cn.inputs.size() != 2 || (cn.inputs[0] == v) == (cn.inputs[1] == v))
      return false;
    // Read by the MatMul alone: a Shape of the transposed value would need it materialised.
    if (g_.value(v).consumers.size() != 1) return false;
    // The Transpose alone, into the MatMul's group before any epilogue joined it (at most the
    // other operand's Transpose is there).
    if (members_[static_cast<size_t>(gp)].size() != 1 || anchor_[static_cast<size_t>(gc)] != c)
      return false;
    for (NodeId x : members_[static_cast<size_t>(gc)])
      if (x != c && g_.node(x).op_type != "Transpose") return false;
    return gemm_readable_perm(g_, rdp_, pn).has_value() && !creates_cycle(gp, gc);
  }

  // Whether group g holds a DequantizeLinear or QuantizeLinear.
  bool quantized(int32_t g) const {
    const auto& m = members_[static_cast<size_t>(g)];
    return std::any_of(m.begin(), m.end(),
                       [&](NodeId x) { return role(x) == FusionRole::kQuantization; });
  }

  bool is_max_pool(NodeId n) const {
    const Node& node = g_.node(n);
    return node.domain.empty() && node.op_type == "MaxPool" && node.outputs.size() == 1;
  }

  // QDQ (the form int8 quantisers write): a DequantizeLinear of a Conv/MatMul/Gemm operand is the
  // contraction's prologue, and a QuantizeLinear of the contraction group's result its end; the
  // DequantizeLinears of an elementwise Add (a residual join) start an elementwise group that a
  // QuantizeLinear ends, and so may a MaxPool's. Whether the group then runs as one int8 kernel
  // is the target's call (kernel_fusion.h).
  bool quantization_edge(ValueId v, NodeId p, NodeId c, int32_t gp) {
    const Node& pn = g_.node(p);
    const Node& cn = g_.node(c);
    const int32_t gc = find(c);
    if (pn.op_type == "DequantizeLinear" && role(c) == FusionRole::kContraction) {
      for (size_t i = 0; i < cn.inputs.size() && i < 3; ++i)
        if (cn.inputs[i] == v) return !creates_cycle(gp, gc);
      return false;
    }
    if (pn.op_type == "DequantizeLinear" && cn.op_type == "Add" && cn.domain.empty() &&
        anchor_[static_cast<size_t>(gc)] < 0)
      return !creates_cycle(gp, gc);
    // MaxPool between a DequantizeLinear and a QuantizeLinear of the same parameters is a MaxPool
    // of the 8-bit values (both conversions are monotone and undo each other).
    if (pn.op_type == "DequantizeLinear" && is_max_pool(c) && cn.inputs[0] == v &&
        members_[static_cast<size_t>(gc)].size() == 1)
      return !creates_cycle(gp, gc);
    if (cn.op_type != "QuantizeLinear" || cn.inputs.empty() || cn.inputs[0] != v) return false;
    const NodeId ap = anchor_[static_cast<size_t>(gp)];
    if (ap >= 0)
      return (role(ap) == FusionRole::kContraction || is_max_pool(ap)) && !creates_cycle(gp, gc);
    // An elementwise group: one that starts from DequantizeLinear (a QDQ Add), or a float one
    // whose result is quantized (a squeeze-excite's Mul): the fused kernel writes 8 bits.
    return !creates_cycle(gp, gc);
  }

  // A QDQ residual join (DequantizeLinears → Add → ... , a group without an anchor) one of whose
  // DequantizeLinears reads the QuantizeLinear that ends a contraction's group joins that group:
  // the int8 kernel then adds the residual to its 8-bit result in its store, so that result is
  // never written and read back. Visiting each edge once in topological order cannot find this
  // (the DequantizeLinear between them is visited before the Add), hence a pass afterwards. Where
  // both operands are such results (a ResNet's downsampling block), the later contraction joins:
  // the earlier one's result is then a plain residual input.
  void fold_quantized_joins() {
    for (NodeId c : order_) {
      const Node& add = g_.node(c);
      if (add.op_type != "Add" || !add.domain.empty() || add.inputs.size() != 2) continue;
      const int32_t gj = find(c);
      if (anchor_[static_cast<size_t>(gj)] >= 0) continue;
      int32_t best = -1;
      NodeId best_end = kNoNode;
      for (ValueId v : add.inputs) {
        const NodeId d = v == kNoValue ? kNoNode : g_.value(v).producer;
        if (d == kNoNode || find(d) != gj || g_.node(d).op_type != "DequantizeLinear" ||
            g_.node(d).inputs.empty() || g_.node(d).inputs[0] == kNoValue)
          continue;
        const ValueId q = g_.node(d).inputs[0];
        const NodeId end = g_.value(q).producer;
        if (end == kNoNode || g_.node(end).op_type != "QuantizeLinear") continue;
        const int32_t gq = find(end);
        const NodeId anchor = anchor_[static_cast<size_t>(gq)];
        if (gq == gj || anchor < 0 || role(anchor) != FusionRole::kContraction) continue;
        // The contraction's result must vanish into the join: read by this DequantizeLinear alone.
        const auto& readers = g_.value(q).consumers;
        if (readers.size() != 1 || readers[0] != d ||
            std::find(g_.outputs().begin(), g_.outputs().end(), q) != g_.outputs().end())
          continue;
        if (best_end == kNoNode ||
            pos_[static_cast<size_t>(end)] > pos_[static_cast<size_t>(best_end)]) {
          best = gq;
          best_end = end;
        }
      }
      if (best < 0 || creates_cycle(best, gj)) continue;
      merge(best, gj);
    }
  }

  // Whether some node outside groups a and b is reachable from them and reaches them.
  bool creates_cycle(int32_t a, int32_t b) {
    std::vector<NodeId> set = members_[a];
    set.insert(set.end(), members_[b].begin(), members_[b].end());
    int32_t hi = 0;
    for (NodeId x : set) hi = std::max(hi, pos_[static_cast<size_t>(x)]);
    auto inside = [&](NodeId x) {
      int32_t r = find(x);
      return r == a || r == b;
    };
    std::vector<char> seen(g_.num_nodes(), 0);
    std::queue<NodeId> q;
    auto push_successors = [&](NodeId x) {
      for (ValueId v : g_.node(x).outputs) {
        if (v == kNoValue) continue;
        for (NodeId y : g_.value(v).consumers) {
          if (inside(y) || seen[static_cast<size_t>(y)] || pos_[static_cast<size_t>(y)] > hi)
            continue;
          seen[static_cast<size_t>(y)] = 1;
          q.push(y);
        }
      }
    };
    for (NodeId x : set) push_successors(x);
    while (!q.empty()) {
      const NodeId x = q.front();
      q.pop();
      for (ValueId v : g_.node(x).outputs) {
        if (v == kNoValue) continue;
        for (NodeId y : g_.value(v).consumers)
          if (inside(y)) return true;
      }
      push_successors(x);
    }
    return false;
  }

  void merge(int32_t a, int32_t b) {
    const NodeId anchor = anchor_[static_cast<size_t>(a)] >= 0 ? anchor_[static_cast<size_t>(a)]
                                                               : anchor_[static_cast<size_t>(b)];
    parent_[a] = b;
    members_[b].insert(members_[b].end(), members_[a].begin(), members_[a].end());
    members_[a].clear();
    anchor_[static_cast<size_t>(b)] = anchor;
  }

  Expected<FusionPlan> build() {
    FusionPlan plan;
    const size_t n = g_.num_nodes();
    plan.group_of.assign(n, -1);
    // Groups ordered by a topological sort of the group graph, ties by their first node.
    std::vector<int32_t> root_index(n, -1);
    std::vector<int32_t> roots;
    for (NodeId x : order_) {
      if (is_constant_node(g_, g_.node(x))) continue;
      ++plan.kernels_unfused;
      const int32_t r = find(x);
      if (root_index[static_cast<size_t>(r)] < 0) {
        root_index[static_cast<size_t>(r)] = static_cast<int32_t>(roots.size());
        roots.push_back(r);
      }
    }
    const size_t k = roots.size();
    std::vector<std::vector<int32_t>> succ(k);
    std::vector<int32_t> indeg(k, 0);
    for (NodeId x : order_) {
      if (is_constant_node(g_, g_.node(x))) continue;
      const int32_t gx = root_index[static_cast<size_t>(find(x))];
      for (ValueId v : g_.node(x).outputs) {
        if (v == kNoValue) continue;
        for (NodeId y : g_.value(v).consumers) {
          const int32_t gy = root_index[static_cast<size_t>(find(y))];
          if (gy != gx) {
            succ[static_cast<size_t>(gx)].push_back(gy);
            ++indeg[static_cast<size_t>(gy)];
          }
        }
      }
    }
    std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
    for (size_t i = 0; i < k; ++i)
      if (indeg[i] == 0) ready.push(static_cast<int32_t>(i));
    std::vector<int32_t> group_order;
    while (!ready.empty()) {
      const int32_t i = ready.top();
      ready.pop();
      group_order.push_back(i);
      for (int32_t j : succ[static_cast<size_t>(i)])
        if (--indeg[static_cast<size_t>(j)] == 0) ready.push(j);
    }
    if (group_order.size() != k) return internal_error("fused groups form a cycle");

    for (int32_t i : group_order) {
      const int32_t r = roots[static_cast<size_t>(i)];
      FusionGroup grp;
      grp.nodes = members_[static_cast<size_t>(r)];
      std::sort(grp.nodes.begin(), grp.nodes.end(), [&](NodeId a, NodeId b) {
        return pos_[static_cast<size_t>(a)] < pos_[static_cast<size_t>(b)];
      });
      const NodeId anchor = anchor_[static_cast<size_t>(r)];
      grp.kind = grp.nodes.size() == 1 ? "single"
                 : anchor >= 0         ? fusion_role_name(role(anchor))
                                       : "elementwise";
      const auto id = static_cast<int32_t>(plan.groups.size());
      for (NodeId x : grp.nodes) plan.group_of[static_cast<size_t>(x)] = id;
      for (NodeId x : grp.nodes) {
        for (const Note& note : notes_[static_cast<size_t>(x)]) {
          if (find(note.producer) != r)
            grp.not_fused.push_back("'" + g_.node(x).name + "' not fused with " + note.text);
        }
      }
      plan.groups.push_back(std::move(grp));
    }
    fill_group_io(g_, &plan);
    return plan;
  }

  const Graph& g_;
  const RdpResult& rdp_;
  std::vector<NodeId> order_;
  std::vector<int32_t> pos_;
  std::vector<int32_t> parent_;
  std::vector<std::vector<NodeId>> members_;
  std::vector<NodeId> anchor_;  // per root: the group's non-elementwise node, or -1
  std::vector<std::vector<Note>> notes_;
  ValueId current_value_ = kNoValue;
};

}  // namespace

std::optional<std::vector<int64_t>> gemm_readable_perm(const Graph& graph, const RdpResult& rdp,
                                                       const Node& t) {
  if (t.op_type != "Transpose" || !t.domain.empty() || t.inputs.size() != 1 ||
      t.inputs[0] == kNoValue)
    return std::nullopt;
  const TensorFact& f = rdp.fact(graph, t.inputs[0]);
  if (f.dtype != DataType::kFloat || !f.dims || f.dims->size() < 2) return std::nullopt;
  const int64_t r = static_cast<int64_t>(f.dims->size());
  std::vector<int64_t> perm;
  if (const Attribute* a = t.attribute("perm"); a && !a->ints.empty()) perm = a->ints;
  for (int64_t i = r - 1; perm.empty() && i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != r) return std::nullopt;
  if (perm[static_cast<size_t>(r - 1)] != r - 1 && perm[static_cast<size_t>(r - 2)] != r - 1)
    return std::nullopt;
  return perm;
}

Expected<FusionPlan> fuse(const Graph& graph, const RdpResult& rdp) {
  return Fuser(graph, rdp).run();
}

namespace {

// A node alone, saying why when `because` is not empty.
FusionGroup alone(const Graph& graph, NodeId n, const std::string& because) {
  FusionGroup single;
  single.nodes = {n};
  single.kind = "single";
  if (!because.empty())
    single.not_fused.push_back("'" + graph.node(n).name + "' runs alone: " + because);
  return single;
}

// `out.groups` made into a plan: each node's group and each group's inputs and outputs.
FusionPlan finish(const Graph& graph, FusionPlan out) {
  out.group_of.assign(graph.num_nodes(), -1);
  for (size_t i = 0; i < out.groups.size(); ++i)
    for (NodeId n : out.groups[i].nodes)
      out.group_of[static_cast<size_t>(n)] = static_cast<int32_t>(i);
  fill_group_io(graph, &out);
  return out;
}

// The nodes `from` reads, directly or through others of them, among those `member` accepts (a
// group's): a flag per NodeId; `from` itself is not flagged.
template <class Member>
std::vector<char> members_read_by(const Graph& graph, NodeId from, Member member) {
  std::vector<char> reads(graph.num_nodes(), 0);
  std::vector<NodeId> stack{from};
  while (!stack.empty()) {
    const NodeId n = stack.back();
    stack.pop_back();
    for (ValueId v : graph.node(n).inputs) {
      const NodeId p = v == kNoValue ? kNoNode : graph.value(v).producer;
      if (p == kNoNode || reads[static_cast<size_t>(p)] || !member(p)) continue;
      reads[static_cast<size_t>(p)] = 1;
      stack.push_back(p);
    }
  }
  return reads;
}

// The plan with each group of two or more nodes that has a reason (because[i] not empty) handed
// to split(i, group, reason, groups), which appends what replaces it and returns true, or
// returns false to keep it as it is; in the plan's order (each split keeps its nodes'
// topological order), then finish()ed.
template <class Split>
FusionPlan replace_groups(const Graph& graph, const FusionPlan& plan,
                          std::span<const std::string> because, Split split) {
  FusionPlan out;
  out.kernels_unfused = plan.kernels_unfused;
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    const FusionGroup& grp = plan.groups[i];
    const bool asked = grp.nodes.size() > 1 && i < because.size() && !because[i].empty();
    if (!asked || !split(i, grp, because[i], out.groups)) out.groups.push_back(grp);
  }
  return finish(graph, std::move(out));
}

}  // namespace

FusionPlan restrict_fusion(const Graph& graph, const FusionPlan& plan,
                           std::span<const std::string> split_because) {
  return replace_groups(graph, plan, split_because,
                        [&](size_t, const FusionGroup& grp, const std::string& why,
                            std::vector<FusionGroup>& groups) {
                          for (NodeId n : grp.nodes) groups.push_back(alone(graph, n, why));
                          return true;
                        });
}

std::optional<std::array<FusionGroup, 2>> quantized_join_sides(const Graph& graph,
                                                               const FusionGroup& grp) {
  // Most groups have no such QuantizeLinear: found without a per-node table (groups are small).
  auto member = [&](NodeId n) {
    return std::find(grp.nodes.begin(), grp.nodes.end(), n) != grp.nodes.end();
  };
  NodeId end = kNoNode;
  for (NodeId n : grp.nodes) {
    const Node& node = graph.node(n);
    if (node.op_type != "QuantizeLinear" || node.outputs.size() != 1 || node.outputs[0] == kNoValue)
      continue;
    const auto& readers = graph.value(node.outputs[0]).consumers;
    if (std::any_of(readers.begin(), readers.end(), member)) {
      end = n;
      break;
    }
  }
  if (end == kNoNode) return std::nullopt;
  // The first side: the QuantizeLinear and the group's nodes it reads, directly or not.
  std::vector<char> first = members_read_by(graph, end, member);
  first[static_cast<size_t>(end)] = 1;
  FusionPlan sides;
  sides.groups.resize(2);
  sides.groups[0].kind = grp.kind;
  sides.groups[1].kind = "elementwise";
  for (NodeId n : grp.nodes) sides.groups[first[static_cast<size_t>(n)] ? 0 : 1].nodes.push_back(n);
  if (sides.groups[1].nodes.empty()) return std::nullopt;
  for (FusionGroup& side : sides.groups)
    if (side.nodes.size() == 1) side.kind = "single";
  sides = finish(graph, std::move(sides));
  return std::array<FusionGroup, 2>{std::move(sides.groups[0]), std::move(sides.groups[1])};
}

FusionPlan split_quantized_joins(const Graph& graph, const FusionPlan& plan,
                                 std::span<const std::string> split_because) {
  return replace_groups(
      graph, plan, split_because,
      [&](size_t, const FusionGroup& grp, const std::string& why,
          std::vector<FusionGroup>& groups) {
        auto sides = quantized_join_sides(graph, grp);
        if (!sides) return false;
        const NodeId end = (*sides)[0].nodes.back();
        (*sides)[0].not_fused = grp.not_fused;
        (*sides)[0].not_fused.push_back("'" + graph.node(end).name +
                                        "' not fused with the residual join after it: " + why);
        for (FusionGroup& side : *sides) groups.push_back(std::move(side));
        return true;
      });
}

FusionPlan peel_anchors(const Graph& graph, const FusionPlan& plan,
                        std::span<const std::string> peel_because) {
  // Nodes of one side of the anchor: one "elementwise" group when they all are and there are
  // two or more, else each alone (saying why when it is not elementwise).
  auto add_side = [&](const FusionGroup& grp, std::vector<NodeId> side, const std::string& why,
                      std::vector<FusionGroup>& groups) {
    const bool elementwise = std::all_of(side.begin(), side.end(), [&](NodeId n) {
      return fusion_role(graph.node(n)) == FusionRole::kElementwise;
    });
    if (elementwise && side.size() > 1) {
      FusionGroup g;
      g.nodes = std::move(side);
      g.kind = "elementwise";
      g.not_fused = grp.not_fused;
      groups.push_back(std::move(g));
      return;
    }
    for (NodeId n : side) groups.push_back(alone(graph, n, elementwise ? "" : why));
  };
  auto peel = [&](size_t i, const FusionGroup& grp, const std::string& why,
                  std::vector<FusionGroup>& groups) {
    // The anchor: the group's contraction, else its one node that is not elementwise (an
    // elementwise node of its epilogue that reads only outside values may come first in the
    // order, and a MatMul's operand Transposes do).
    auto first = std::find_if(grp.nodes.begin(), grp.nodes.end(), [&](NodeId n) {
      return fusion_role(graph.node(n)) == FusionRole::kContraction;
    });
    if (first == grp.nodes.end())
      first = std::find_if(grp.nodes.begin(), grp.nodes.end(), [&](NodeId n) {
        return fusion_role(graph.node(n)) != FusionRole::kElementwise;
      });
    const NodeId a = first == grp.nodes.end() ? grp.nodes.front() : *first;
    // Its prologue: the group's nodes it reads, directly or through others of them.
    const std::vector<char> feeds = members_read_by(graph, a, [&](NodeId p) {
      return plan.group_of[static_cast<size_t>(p)] == static_cast<int32_t>(i);
    });
    std::vector<NodeId> prologue, epilogue, operands;
    const Node& anchor = graph.node(a);
    for (NodeId n : grp.nodes) {
      if (n == a) continue;
      // A MatMul keeps the Transposes it reads in place (they feed it directly).
      const Node& node = graph.node(n);
      const bool operand = anchor.op_type == "MatMul" && node.op_type == "Transpose" &&
                           node.outputs.size() == 1 &&
                           std::find(anchor.inputs.begin(), anchor.inputs.end(), node.outputs[0]) !=
                               anchor.inputs.end();
      (operand ? operands : feeds[static_cast<size_t>(n)] ? prologue : epilogue).push_back(n);
    }
    add_side(grp, std::move(prologue), why, groups);
    if (operands.empty()) {
      groups.push_back(alone(graph, a, why));
    } else {
      FusionGroup g;
      g.nodes = std::move(operands);
      g.nodes.push_back(a);
      g.kind = grp.kind;
      g.not_fused.push_back("'" + anchor.name + "' runs with its operand Transposes only: " + why);
      groups.push_back(std::move(g));
    }
    add_side(grp, std::move(epilogue), why, groups);
    return true;
  };
  return replace_groups(graph, plan, peel_because, peel);
}

std::optional<FusionGroup> join_with_normalization(const Graph& graph, const FusionPlan& plan,
                                                   size_t i) {
  const FusionGroup& grp = plan.groups[i];
  if (grp.outputs.size() != 1) return std::nullopt;
  for (NodeId n : grp.nodes)
    if (fusion_role(graph.node(n)) != FusionRole::kElementwise) return std::nullopt;
  const ValueId v = grp.outputs[0];
  const auto& outs = graph.outputs();
  if (std::find(outs.begin(), outs.end(), v) != outs.end()) return std::nullopt;
  NodeId reader = kNoNode;
  for (NodeId c : graph.value(v).consumers) {
    if (op_class_of(graph.node(c)) == OpClass::kISDO) continue;
    if (reader != kNoNode && reader != c) return std::nullopt;
    reader = c;
  }
  if (reader == kNoNode || fusion_role(graph.node(reader)) != FusionRole::kNormalization)
    return std::nullopt;
  const int32_t own = plan.group_of[static_cast<size_t>(reader)];
  if (own < 0 || plan.groups[static_cast<size_t>(own)].nodes.size() != 1) return std::nullopt;
  for (ValueId in : graph.node(reader).inputs)
    if (in != kNoValue && in != v) return std::nullopt;
  FusionGroup joined;
  joined.nodes = grp.nodes;
  joined.nodes.push_back(reader);
  joined.kind = "normalization";
  joined.not_fused = grp.not_fused;
  joined.inputs = grp.inputs;
  for (ValueId out : graph.node(reader).outputs)
    if (out != kNoValue) joined.outputs.push_back(out);
  return joined;
}

FusionPlan join_normalizations(const Graph& graph, const FusionPlan& plan,
                               std::span<const std::optional<FusionGroup>> joined) {
  std::vector<char> dropped(plan.groups.size(), 0);
  for (size_t i = 0; i < joined.size() && i < plan.groups.size(); ++i)
    if (joined[i])
      dropped[static_cast<size_t>(plan.group_of[static_cast<size_t>(joined[i]->nodes.back())])] = 1;
  FusionPlan out;
  out.kernels_unfused = plan.kernels_unfused;
  // At the elementwise group's place: the normalization read only its output, so nothing between
  // the two in the order reads it.
  for (size_t i = 0; i < plan.groups.size(); ++i) {
    if (dropped[i]) continue;
    out.groups.push_back(i < joined.size() && joined[i] ? *joined[i] : plan.groups[i]);
  }
  return finish(graph, std::move(out));
}

}  // namespace sod2::opt
