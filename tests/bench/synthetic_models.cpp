#include "tests/bench/synthetic_models.h"

#include <string>
#include <vector>

namespace sod2::bench {
namespace {

struct Builder {
  onnx::GraphProto* g;
  int64_t counter = 0;
  std::string scope;  // "/encoder/layers.3/attention/", as torch's exporter names nodes

  std::string node(const std::string& op, std::vector<std::string> in, int n_out = 1) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(scope + op + "_" + std::to_string(counter));
    for (auto& i : in) n->add_input(i);
    std::string first;
    for (int k = 0; k < n_out; ++k) {
      std::string out = "v" + std::to_string(counter) + "_" + std::to_string(k);
      n->add_output(out);
      if (k == 0) first = out;
    }
    ++counter;
    return first;
  }
  void attr_i(const std::string& name, int64_t v) {
    auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  void attr_ints(const std::string& name, std::vector<int64_t> v) {
    auto* a = g->mutable_node(g->node_size() - 1)->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  std::string init_i64(const std::string& name, std::vector<int64_t> v, bool scalar = false) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return name;
  }
  std::string init_f32(const std::string& name, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    t->set_raw_data(std::string(static_cast<size_t>(n) * 4, '\0'));
    return name;
  }
};

}  // namespace

onnx::ModelProto transformer_like(int64_t nodes) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("synthetic");
  auto* in = g->add_input();
  in->set_name("x");
  auto* t = in->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param("batch");
  t->mutable_shape()->add_dim()->set_dim_param("seq");
  t->mutable_shape()->add_dim()->set_dim_value(64);

  Builder b{g};
  const std::string w = b.init_f32("w", {64, 64});
  const std::string gamma = b.init_f32("gamma", {64});
  const std::string i0 = b.init_i64("i0", {0}, true), i1 = b.init_i64("i1", {1}, true);
  const std::string ax0 = b.init_i64("ax0", {0});
  const std::string heads = b.init_i64("heads", {4}), hd = b.init_i64("hd", {16});
  const std::string flat = b.init_i64("flat", {64});
  std::string x = "x";
  for (int64_t layer = 0; b.counter < nodes; ++layer) {
    const std::string prefix = "/encoder/layers." + std::to_string(layer) + "/";
    b.scope = prefix + "attention/";
    // Shape arithmetic exporters emit for every view change.
    const std::string shape = b.node("Shape", {x});
    const std::string d0 = b.node("Unsqueeze", {b.node("Gather", {shape, i0}), ax0});
    const std::string d1 = b.node("Unsqueeze", {b.node("Gather", {shape, i1}), ax0});
    const std::string target = b.node("Concat", {d0, d1, heads, hd});
    b.attr_i("axis", 0);
    const std::string q = b.node("MatMul", {x, w});
    const std::string qh = b.node("Transpose", {b.node("Reshape", {q, target})});
    b.attr_ints("perm", {0, 2, 1, 3});
    const std::string kt = b.node("Transpose", {qh});
    b.attr_ints("perm", {0, 1, 3, 2});
    const std::string att = b.node("Softmax", {b.node("MatMul", {qh, kt})});
    b.attr_i("axis", -1);
    const std::string ctx = b.node("Transpose", {b.node("MatMul", {att, qh})});
    b.attr_ints("perm", {0, 2, 1, 3});
    const std::string back = b.node("Concat", {d0, d1, flat});
    b.attr_i("axis", 0);
    const std::string merged = b.node("Reshape", {ctx, back});
    b.scope = prefix + "norm/";
    x = b.node("LayerNormalization", {b.node("Add", {merged, x}), gamma});
    b.attr_i("axis", -1);
  }
  auto* out = g->add_output();
  out->set_name(x);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m;
}

}  // namespace sod2::bench
