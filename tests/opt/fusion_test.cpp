// Fused groups on hand-built graphs: what joins, what does not and why, and the materialised
// inputs and outputs of each group.
#include <gtest/gtest.h>

#include "core/opt/fusion.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

struct Fused {
  Analysed a;
  FusionPlan plan;
};

Fused fuse_model(const onnx::ModelProto& m, RdpOptions o = range_of("n", 1, 64)) {
  Fused f{analyse(m, std::move(o)), {}};
  auto plan = fuse(f.a.graph(), f.a.rdp);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  f.plan = std::move(*plan);
  return f;
}

// Each group as "kind: node node ...".
std::vector<std::string> groups(const Fused& f) {
  std::vector<std::string> out;
  for (const FusionGroup& g : f.plan.groups) {
    std::string s = g.kind + ":";
    for (NodeId n : g.nodes) s += " " + f.a.graph().node(n).name;
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> names(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId v : ids) out.push_back(g.value(v).name);
  return out;
}

bool has_note(const Fused& f, const std::string& text) {
  for (const FusionGroup& g : f.plan.groups)
    for (const std::string& n : g.not_fused)
      if (n.find(text) != std::string::npos) return true;
  return false;
}

std::string all_notes(const Fused& f) {
  std::string s;
  for (const FusionGroup& g : f.plan.groups)
    for (const std::string& n : g.not_fused) s += n + "\n";
  return s;
}

TEST(Fusion, MatMulTakesBiasAndActivationEpilogues) {
  // fc1 -> +b1 -> Relu -> fc2 -> +b2: two contraction groups, the hidden layer never stored.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_initializer(g, "W1", {16, 64});
  add_initializer(g, "b1", {64});
  add_initializer(g, "W2", {64, 16});
  add_initializer(g, "b2", {16});
  add_node(g, "MatMul", {"x", "W1"}, {"h"}, "fc1");
  add_node(g, "Add", {"h", "b1"}, {"hb"}, "bias1");
  add_node(g, "Relu", {"hb"}, {"a"}, "act");
  add_node(g, "MatMul", {"a", "W2"}, {"o"}, "fc2");
  add_node(g, "Add", {"o", "b2"}, {"y"}, "bias2");
  add_output(g, "y");
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f),
            (std::vector<std::string>{"contraction: fc1 bias1 act", "contraction: fc2 bias2"}));
  EXPECT_EQ(f.plan.kernels_unfused, 5);
  EXPECT_EQ(names(f.a.graph(), f.plan.groups[0].inputs),
            (std::vector<std::string>{"x", "W1", "b1"}));
  EXPECT_EQ(names(f.a.graph(), f.plan.groups[0].outputs), (std::vector<std::string>{"a"}));
  EXPECT_EQ(names(f.a.graph(), f.plan.groups[1].outputs), (std::vector<std::string>{"y"}));
  EXPECT_TRUE(has_note(f, "'fc2' not fused with 'act': a group holds one contraction"))
      << all_notes(f);
}

TEST(Fusion, ErfGeluJoinsItsMatMulThoughItReadsTheInputTwice) {
  // y = 0.5 * h * (1 + erf(h / sqrt2)), h read by Div and by Mul.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_initializer(g, "W", {16, 32});
  add_float_initializer(g, "sqrt2", {}, {1.4142f});
  add_float_initializer(g, "one", {}, {1.0f});
  add_float_initializer(g, "half", {}, {0.5f});
  add_node(g, "MatMul", {"x", "W"}, {"h"}, "fc");
  add_node(g, "Div", {"h", "sqrt2"}, {"d"}, "div");
  add_node(g, "Erf", {"d"}, {"e"}, "erf");
  add_node(g, "Add", {"e", "one"}, {"p"}, "add1");
  add_node(g, "Mul", {"h", "p"}, {"q"}, "mul");
  add_node(g, "Mul", {"q", "half"}, {"y"}, "scale");
  add_output(g, "y");
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f), (std::vector<std::string>{"contraction: fc div erf add1 mul scale"}));
  EXPECT_TRUE(f.plan.groups[0].not_fused.empty()) << all_notes(f);
}

TEST(Fusion, SoftmaxTakesItsScalePrologueButNotTheMatMulsOne) {
  // scores = MatMul(q, k) / 8 + mask -> Softmax -> Cast: the scaling joins the MatMul, the
  // Softmax starts its own group (one non-elementwise op per group) and takes the Cast.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "q", {std::string("n"), int64_t{8}});
  add_input(g, "k", {int64_t{8}, std::string("n")});
  add_input(g, "mask", {int64_t{1}, std::string("n")});
  add_float_initializer(g, "eight", {}, {8.0f});
  add_node(g, "MatMul", {"q", "k"}, {"s"}, "qk");
  add_node(g, "Div", {"s", "eight"}, {"sd"}, "scale");
  add_node(g, "Add", {"sd", "mask"}, {"sm"}, "mask_add");
  add_node(g, "Softmax", {"sm"}, {"p"}, "softmax");
  add_int_attr(add_node(g, "Cast", {"p"}, {"y"}, "cast"), "to", onnx::TensorProto::FLOAT16);
  add_output(g, "y", {}, onnx::TensorProto::FLOAT16);
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f), (std::vector<std::string>{"contraction: qk scale mask_add",
                                                 "normalization: softmax cast"}));
  EXPECT_TRUE(has_note(f, "'softmax' not fused with 'mask_add'")) << all_notes(f);
}

TEST(Fusion, LayerNormTakesTheResidualAddAsPrologue) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_input(g, "r", {std::string("n"), int64_t{16}});
  add_initializer(g, "gamma", {16});
  add_initializer(g, "beta", {16});
  add_node(g, "Relu", {"x"}, {"a"}, "act");
  add_node(g, "Add", {"a", "r"}, {"s"}, "residual");
  add_node(g, "LayerNormalization", {"s", "gamma", "beta"}, {"y"}, "ln");
  add_output(g, "y");
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f), (std::vector<std::string>{"normalization: act residual ln"}));
}

TEST(Fusion, BlockersAreRecordedWithTheirReason) {
  // a = Relu(x) is a graph output; b = Relu(a) [n,1] is broadcast by c = Add(b, z) [n,16];
  // nz = NonZero(c) is EDO; w = Cast(nz) cannot join it; c2 = Sigmoid(c) reads c, which NonZero
  // also reads.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{1}});
  add_input(g, "z", {std::string("n"), int64_t{16}});
  add_node(g, "Relu", {"x"}, {"a"}, "relu_a");
  add_node(g, "Relu", {"a"}, {"b"}, "relu_b");
  add_node(g, "Add", {"b", "z"}, {"c"}, "add_c");
  add_node(g, "NonZero", {"c"}, {"nz"}, "nonzero");
  add_int_attr(add_node(g, "Cast", {"nz"}, {"w"}, "cast_w"), "to", onnx::TensorProto::INT32);
  add_node(g, "Sigmoid", {"c"}, {"c2"}, "sig");
  add_output(g, "a");
  add_output(g, "w", {}, onnx::TensorProto::INT32);
  add_output(g, "c2");
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f).size(), 6u) << ::testing::PrintToString(groups(f));
  const std::string notes = all_notes(f);
  EXPECT_TRUE(has_note(f, "'relu_b' not fused with 'relu_a': 'a' is a graph output")) << notes;
  EXPECT_TRUE(has_note(f, "'add_c' not fused with 'relu_b': 'b' [n, 1] is broadcast to [n, 16]"))
      << notes;
  EXPECT_TRUE(has_note(f, "'cast_w' not fused with 'nonzero': NonZero does not fuse")) << notes;
  EXPECT_TRUE(has_note(f, "'sig' not fused with 'add_c': 'c' is also read by 'nonzero'")) << notes;
}

TEST(Fusion, ConstantsLaunchNoKernelAndGroupsAreInTopologicalOrder) {
  Fused f = fuse_model(residual_mlp_model());
  // relu_r is read by fc1 and by the residual Add: it stays its own group.
  EXPECT_EQ(groups(f), (std::vector<std::string>{"single: relu_r", "contraction: fc1 act",
                                                 "contraction: fc2 residual"}));
  for (size_t n = 0; n < f.a.graph().num_nodes(); ++n) EXPECT_GE(f.plan.group_of[n], 0);
}

TEST(Fusion, ShapeReadersDoNotKeepAValueMaterialised) {
  // Shape(a) reads only a's shape, which RDP knows: a stays inside the Relu -> Sigmoid group.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_node(g, "Relu", {"x"}, {"a"}, "relu");
  add_node(g, "Shape", {"a"}, {"s"}, "shape");
  add_node(g, "Sigmoid", {"a"}, {"y"}, "sig");
  add_output(g, "y");
  add_output(g, "s", {}, onnx::TensorProto::INT64);
  Fused f = fuse_model(m);
  EXPECT_EQ(groups(f), (std::vector<std::string>{"elementwise: relu sig", "single: shape"}));
  EXPECT_EQ(names(f.a.graph(), f.plan.groups[0].outputs), (std::vector<std::string>{"y"}));
}

}  // namespace
}  // namespace sod2::opt
