// An InferContext for testing one shape rule at a time: inputs are given facts, outputs are
// captured, requirements and warnings are recorded, execution symbols are named like the engine's.
#pragma once

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ops/infer_context.h"
#include "core/ops/op_registry.h"
#include "core/sym/prover.h"
#include "core/sym/text.h"

namespace sod2::testing {

// Attributes by type: ai("axis", 1), af("alpha", 0.5f), as("mode", "linear"), ais, afs, astrs.
inline Attribute named_attr(std::string name, AttributeType type) {
  Attribute a;
  a.name = std::move(name);
  a.type = type;
  return a;
}
inline Attribute ai(std::string name, int64_t v) {
  Attribute a = named_attr(std::move(name), AttributeType::kInt);
  a.i = v;
  return a;
}
inline Attribute af(std::string name, float v) {
  Attribute a = named_attr(std::move(name), AttributeType::kFloat);
  a.f = v;
  return a;
}
inline Attribute as(std::string name, std::string v) {
  Attribute a = named_attr(std::move(name), AttributeType::kString);
  a.s = std::move(v);
  return a;
}
inline Attribute ais(std::string name, std::vector<int64_t> v) {
  Attribute a = named_attr(std::move(name), AttributeType::kInts);
  a.ints = std::move(v);
  return a;
}
inline Attribute afs(std::string name, std::vector<float> v) {
  Attribute a = named_attr(std::move(name), AttributeType::kFloats);
  a.floats = std::move(v);
  return a;
}
inline Attribute astrs(std::string name, std::vector<std::string> v) {
  Attribute a = named_attr(std::move(name), AttributeType::kStrings);
  a.strings = std::move(v);
  return a;
}

class FakeContext : public InferContext {
 public:
  // Builds a one-node graph `op_type` with one input value per fact (an empty TensorFact name
  // slot with `omitted` true leaves that input out) and `num_outputs` outputs.
  FakeContext(std::string op_type, std::vector<TensorFact> inputs, size_t num_outputs = 1,
              int64_t opset = 17)
      : own_graph_(std::make_unique<Graph>("test")),
        graph_(own_graph_.get()),
        inputs_(std::move(inputs)),
        outputs_(num_outputs) {
    Node n;
    n.name = op_type + "_0";
    n.op_type = std::move(op_type);
    n.opset = opset;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Value v;
      v.name = "in" + std::to_string(i);
      v.kind = ValueKind::kGraphInput;
      n.inputs.push_back(*own_graph_->add_value(v));
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      Value v;
      v.name = "out" + std::to_string(i);
      n.outputs.push_back(*own_graph_->add_value(v));
    }
    node_ = std::move(n);
  }

  // Runs node `id` of `graph` (which must outlive this), so rules can follow its producers; the
  // facts are those of its inputs.
  FakeContext(const Graph& graph, NodeId id, std::vector<TensorFact> inputs)
      : graph_(&graph),
        node_(graph.node(id)),
        inputs_(std::move(inputs)),
        outputs_(node_.outputs.size()) {}

  // Omits input i (an optional input given as "").
  FakeContext& omit_input(size_t i) {
    node_.inputs[i] = kNoValue;
    return *this;
  }
  // Makes input i a float initializer of the graph: rules that read constants (Resize scales)
  // see the floats, which facts carry only when integral. This and constant_input() need the
  // context's own one-node graph.
  FakeContext& initializer(size_t i, const std::vector<float>& values) {
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    const ValueId id = node_.inputs[i];
    own_graph_->add_initializer(Tensor(own_graph_->value(id).name, DataType::kFloat,
                                       {static_cast<int64_t>(values.size())}, std::move(bytes)),
                                id);
    return *this;
  }
  // Makes input i the output of a Constant node with these `value_floats`.
  FakeContext& constant_input(size_t i, std::vector<float> values) {
    const ValueId id = node_.inputs[i];
    Node c;
    c.name = "const" + std::to_string(i);
    c.op_type = "Constant";
    c.attributes.push_back(afs("value_floats", std::move(values)));
    c.outputs = {id};
    own_graph_->value(id).kind = ValueKind::kNodeOutput;
    own_graph_->value(id).producer = own_graph_->add_node(std::move(c));
    return *this;
  }
  FakeContext& attr(Attribute a) {
    node_.attributes.push_back(std::move(a));
    return *this;
  }
  FakeContext& attr_i(std::string name, int64_t v) { return attr(ai(std::move(name), v)); }
  FakeContext& attr_f(std::string name, float v) { return attr(af(std::move(name), v)); }
  FakeContext& attr_s(std::string name, std::string v) {
    return attr(as(std::move(name), std::move(v)));
  }
  FakeContext& attr_ints(std::string name, std::vector<int64_t> v) {
    return attr(ais(std::move(name), std::move(v)));
  }
  FakeContext& attr_floats(std::string name, std::vector<float> v) {
    return attr(afs(std::move(name), std::move(v)));
  }
  FakeContext& range(const std::string& symbol, int64_t lo, int64_t hi, int64_t multiple = 1) {
    (void)ranges_.set(sym::symbol(symbol), {lo, hi, multiple});
    return *this;
  }

  static Attribute named(std::string name, AttributeType type) {
    return named_attr(std::move(name), type);
  }

  // Runs the registered rule for this op at this opset.
  Status run() {
    const OpSpec* spec = OpRegistry::standard().find(node_.op_type, node_.opset);
    if (!spec) return not_found("no spec for " + node_.op_type);
    if (!spec->rule) return not_found("no rule for " + node_.op_type);
    return spec->rule(*this);
  }

  const TensorFact& out(size_t i = 0) const { return outputs_[i]; }
  std::string out_str(size_t i = 0) const { return outputs_[i].to_string(); }

  // --- InferContext ---
  const Node& node() const override { return node_; }
  const Graph& graph() const override { return *graph_; }
  const TensorFact& input(size_t i) const override {
    static const TensorFact kUnknown;
    return has_input(i) && i < inputs_.size() ? inputs_[i] : kUnknown;
  }
  void set_output(size_t i, TensorFact fact) override {
    if (i < outputs_.size()) outputs_[i] = std::move(fact);
  }
  const sym::RangeMap& ranges() const override { return ranges_; }
  sym::SymExpr simplify(const sym::SymExpr& e) const override { return sym::simplify(e, ranges_); }
  void require_equal(const sym::SymExpr& a, const sym::SymExpr& b, std::string_view why) override {
    requirements.push_back(a.to_string() + " == " + b.to_string());
  }
  sym::SymExpr execution_dim(size_t output, size_t dim, int64_t lo, int64_t hi) override {
    return execution_symbol("out" + std::to_string(output) + ".d" + std::to_string(dim), lo, hi);
  }
  sym::SymExpr execution_symbol(std::string_view suffix, int64_t lo, int64_t hi) override {
    const sym::Symbol s = sym::symbol(node_.name + "." + std::string(suffix));
    (void)ranges_.set(s, {lo, hi, 1});
    return s;
  }
  void warn(std::string message) override { warnings.push_back(std::move(message)); }
  Expected<std::vector<TensorFact>> infer_subgraph(const Graph&, const std::vector<TensorFact>&,
                                                   bool) override {
    return unsupported("FakeContext does not propagate subgraphs");
  }

  std::vector<std::string> requirements;
  std::vector<std::string> warnings;

 private:
  // Behind a pointer so a FakeContext can be returned by value; null for a node of a given graph.
  std::unique_ptr<Graph> own_graph_;
  const Graph* graph_;  // own_graph_ or the given graph
  Node node_;
  std::vector<TensorFact> inputs_;
  std::vector<TensorFact> outputs_;
  sym::RangeMap ranges_;
};

// Facts from text: dims("batch, 3, ?") and values.
inline sym::SymExpr e(const std::string& text) { return *sym::parse(text); }
inline TensorFact fact(DataType dt, const std::string& dims_text) {
  TensorFact f;
  f.dtype = dt;
  DimList dims;
  std::string cur;
  auto flush = [&] {
    size_t b = cur.find_first_not_of(' '), en = cur.find_last_not_of(' ');
    if (b == std::string::npos) return;
    std::string t = cur.substr(b, en - b + 1);
    dims.push_back(t == "?" ? Dim{} : Dim{e(t)});
  };
  int depth = 0;
  for (char c : dims_text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      flush();
      cur.clear();
    } else {
      cur += c;
    }
  }
  flush();
  f.dims = dims;
  return f;
}
inline TensorFact ffact(const std::string& dims) { return fact(DataType::kFloat, dims); }
inline TensorFact ints(std::vector<std::string> values, bool scalar = false) {
  std::vector<sym::SymExpr> v;
  for (const auto& s : values) v.push_back(e(s));
  return TensorFact::with_value(DataType::kInt64, v, scalar);
}

}  // namespace sod2::testing
