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

class FakeContext : public InferContext {
 public:
  // Builds a one-node graph `op_type` with one input value per fact (an empty TensorFact name
  // slot with `omitted` true leaves that input out) and `num_outputs` outputs.
  FakeContext(std::string op_type, std::vector<TensorFact> inputs, size_t num_outputs = 1,
              int64_t opset = 17)
      : graph_(std::make_unique<Graph>("test")), inputs_(std::move(inputs)), outputs_(num_outputs) {
    Node n;
    n.name = op_type + "_0";
    n.op_type = std::move(op_type);
    n.opset = opset;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      Value v;
      v.name = "in" + std::to_string(i);
      v.kind = ValueKind::kGraphInput;
      n.inputs.push_back(*graph_->add_value(v));
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      Value v;
      v.name = "out" + std::to_string(i);
      n.outputs.push_back(*graph_->add_value(v));
    }
    node_ = std::move(n);
  }

  // Omits input i (an optional input given as "").
  FakeContext& omit_input(size_t i) {
    node_.inputs[i] = kNoValue;
    return *this;
  }
  FakeContext& attr(Attribute a) {
    node_.attributes.push_back(std::move(a));
    return *this;
  }
  FakeContext& attr_i(std::string name, int64_t v) {
    Attribute a = named(std::move(name), AttributeType::kInt);
    a.i = v;
    return attr(std::move(a));
  }
  FakeContext& attr_f(std::string name, float v) {
    Attribute a = named(std::move(name), AttributeType::kFloat);
    a.f = v;
    return attr(std::move(a));
  }
  FakeContext& attr_s(std::string name, std::string v) {
    Attribute a = named(std::move(name), AttributeType::kString);
    a.s = std::move(v);
    return attr(std::move(a));
  }
  FakeContext& attr_ints(std::string name, std::vector<int64_t> v) {
    Attribute a = named(std::move(name), AttributeType::kInts);
    a.ints = std::move(v);
    return attr(std::move(a));
  }
  FakeContext& attr_floats(std::string name, std::vector<float> v) {
    Attribute a = named(std::move(name), AttributeType::kFloats);
    a.floats = std::move(v);
    return attr(std::move(a));
  }
  FakeContext& range(const std::string& symbol, int64_t lo, int64_t hi, int64_t multiple = 1) {
    (void)ranges_.set(sym::symbol(symbol), {lo, hi, multiple});
    return *this;
  }

  static Attribute named(std::string name, AttributeType type) {
    Attribute a;
    a.name = std::move(name);
    a.type = type;
    return a;
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
  std::unique_ptr<Graph> graph_;  // behind a pointer so a FakeContext can be returned by value
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
