// Which values the arena holds, their sizes as SymExprs, and their lifetimes in an order.
#include <gtest/gtest.h>

#include <utility>

#include "core/opt/lifetimes.h"
#include "core/opt/tensor_sizes.h"
#include "golden_models.h"

namespace sod2::opt {
namespace {

using namespace sod2::testing;

std::vector<std::string> names(const TensorSet& set) {
  std::vector<std::string> out;
  for (const ArenaTensor& t : set.tensors) out.push_back(t.name);
  return out;
}

const ArenaTensor& tensor(const TensorSet& set, const std::string& name) {
  for (const ArenaTensor& t : set.tensors)
    if (t.name == name) return t;
  ADD_FAILURE() << "no arena tensor " << name;
  return set.tensors.front();
}

TEST(AlignBytes, RoundsUpToSixtyFourBytes) {
  EXPECT_EQ(align_bytes(0).constant_value(), 0);
  EXPECT_EQ(align_bytes(1).constant_value(), 64);
  EXPECT_EQ(align_bytes(64).constant_value(), 64);
  EXPECT_EQ(align_bytes(65).constant_value(), 128);
  const sym::SymExpr n = sym::symbol("n");
  EXPECT_EQ(align_bytes(64 * n).to_string(), "64*n");
  // floordiv(16n+63, 64) is canonically floordiv(n+3, 4): the same ceiling, divided through.
  EXPECT_EQ(align_bytes(16 * n).to_string(), "64*floordiv(n+3,4)");
}

TEST(TensorSizes, NodeOutputsAreSizedAsNumelTimesElementSizeAligned) {
  Analysed a = analyse(nonzero_model(), range_of("n", 1, 100));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  EXPECT_EQ(names(set), (std::vector<std::string>{"s", "nz", "t", "y"}));
  EXPECT_EQ(tensor(set, "s").bytes.to_string(), "64*floordiv(n+3,4)");
  EXPECT_EQ(tensor(set, "nz").bytes.to_string(), "64*floordiv(nonzero.out0.d1+3,4)");
  EXPECT_TRUE(tensor(set, "t").graph_output);
  EXPECT_FALSE(tensor(set, "s").graph_output);
  EXPECT_TRUE(set.off_arena.empty());
}

TEST(TensorSizes, RangesThatProveAlignmentDropTheRounding) {
  Analysed a = analyse(nonzero_model(), range_of("n", 4, 64, 4));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  EXPECT_EQ(tensor(set, "s").bytes.to_string(), "16*n");
}

TEST(TensorSizes, GraphInputsInitializersAndConstantsStayOutOfTheArena) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_initializer(g, "w", {16});
  auto* c = add_node(g, "Constant", {}, {"k"}, "const_k");
  auto* attr = c->add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  attr->mutable_t()->add_dims(16);
  for (int i = 0; i < 16; ++i) attr->mutable_t()->add_float_data(1.0f);
  auto* c2 = add_node(g, "Constant", {}, {"k_out"}, "const_out");
  *c2->add_attribute() = *attr;
  add_node(g, "Add", {"x", "w"}, {"a"}, "add_w");
  add_node(g, "Add", {"a", "k"}, {"y"}, "add_k");
  add_output(g, "y");
  add_output(g, "x", {std::string("n"), int64_t{16}});  // an input passed through
  add_output(g, "k_out");                               // a Constant that is an output
  Analysed a = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  // A Constant that is a graph output stays in the package too: the runtime returns a view of
  // the package's bytes (planning it an arena slot no value uses made the plan shown differ
  // from the one run, ONNX's test_constant).
  EXPECT_EQ(names(set), (std::vector<std::string>{"a", "y"}));
  EXPECT_EQ(set.package_constants, 2);
  EXPECT_EQ(set.index_of(a.graph().find("k_out")), -1);
  EXPECT_EQ(set.index_of(a.graph().find("x")), -1);
  EXPECT_EQ(set.index_of(a.graph().find("w")), -1);
  EXPECT_EQ(set.index_of(a.graph().find("a")), 0);
}

TEST(TensorSizes, ValuesWithoutAFixedSizeAreLeftOutWithAReason) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_node(g, "SequenceConstruct", {"x", "x"}, {"seq"}, "make_seq");
  add_int_attr(add_node(g, "Cast", {"x"}, {"str"}, "to_string"), "to", onnx::TensorProto::STRING);
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  add_output(g, "y");
  Analysed a = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  EXPECT_EQ(names(set), (std::vector<std::string>{"y"}));
  ASSERT_EQ(set.off_arena.size(), 2u);
  EXPECT_EQ(set.off_arena[0].name, "seq");
  EXPECT_NE(set.off_arena[0].reason.find("sequence"), std::string::npos) << set.off_arena[0].reason;
  EXPECT_EQ(set.off_arena[1].name, "str");
  EXPECT_NE(set.off_arena[1].reason.find("string"), std::string::npos) << set.off_arena[1].reason;
}

std::vector<NodeId> source_order(const Analysed& a) { return *a.graph().topological_order(); }

// x[n,16] -> Relu a -> Reshape r [16n] -> Unsqueeze u [1,16n] -> Relu y (output); u is an
// output too, and x -> Flatten fx -> Relu z (output): a view of a graph input.
onnx::ModelProto views_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"flat", -1}, {"axis0", 0}}) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(value);
  }
  add_node(g, "Relu", {"x"}, {"a"}, "relu_a");
  add_node(g, "Reshape", {"a", "flat"}, {"r"}, "reshape");
  add_node(g, "Unsqueeze", {"r", "axis0"}, {"u"}, "unsqueeze");
  add_node(g, "Relu", {"u"}, {"y"}, "relu_y");
  add_node(g, "Flatten", {"x"}, {"fx"}, "flatten_x");
  add_node(g, "Relu", {"fx"}, {"z"}, "relu_z");
  add_output(g, "y");
  add_output(g, "u");
  add_output(g, "z");
  return m;
}

TEST(TensorSizes, AViewOfAnArenaTensorIsThatTensor) {
  Analysed a = analyse(views_model(), range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  // r and u are a's bytes; fx views the caller's x, which the arena does not hold.
  EXPECT_EQ(names(set), (std::vector<std::string>{"a", "y", "fx", "z"}));
  const ArenaTensor& t = tensor(set, "a");
  EXPECT_EQ(t.views, (std::vector<ValueId>{a.graph().find("r"), a.graph().find("u")}));
  EXPECT_TRUE(t.graph_output);  // through u
  EXPECT_EQ(set.index_of(a.graph().find("u")), set.index_of(a.graph().find("a")));
  EXPECT_TRUE(set.writes_tensor(a.graph().find("a")));
  EXPECT_FALSE(set.writes_tensor(a.graph().find("u")));
  EXPECT_TRUE(tensor(set, "fx").views.empty());
}

TEST(TensorSizes, DropoutIsAViewWhereItCannotDropElements) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_input(g, "training", {}, onnx::TensorProto::BOOL);
  auto scalar = [&](const std::string& name, int32_t type, uint8_t byte) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    t->set_raw_data(std::string(type == onnx::TensorProto::BOOL ? 1 : 4, static_cast<char>(byte)));
  };
  scalar("on", onnx::TensorProto::BOOL, 1);
  scalar("off", onnx::TensorProto::BOOL, 0);
  scalar("zero", onnx::TensorProto::FLOAT, 0);
  add_node(g, "Relu", {"x"}, {"a"}, "relu_a");
  add_node(g, "Dropout", {"a"}, {"d1"}, "inference");
  add_node(g, "Dropout", {"a", "", "off"}, {"d2"}, "training_off");
  add_node(g, "Dropout", {"a", "zero", "on"}, {"d3"}, "ratio_zero");  // PyTorch's Swin
  add_node(g, "Dropout", {"a", "", "on"}, {"t1"}, "training_on");
  add_node(g, "Dropout", {"a", "zero", "training"}, {"d4"}, "ratio_zero_any_mode");
  add_node(g, "Dropout", {"a", "", "training"}, {"t2"}, "training_given");
  add_node(g, "Sum", {"d1", "d2", "d3", "d4", "t1", "t2"}, {"y"}, "sum");
  add_output(g, "y");
  Analysed an = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(an.graph(), an.rdp);
  EXPECT_EQ(names(set), (std::vector<std::string>{"a", "t1", "t2", "y"}));
  const Graph& gr = an.graph();
  EXPECT_EQ(tensor(set, "a").views,
            (std::vector<ValueId>{gr.find("d1"), gr.find("d2"), gr.find("d3"), gr.find("d4")}));
}

TEST(Lifetimes, AViewsReadersKeepItsTensorAlive) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_node(g, "Relu", {"x"}, {"a"}, "relu_a");
  add_node(g, "Identity", {"a"}, {"v"}, "identity");
  add_node(g, "Relu", {"x"}, {"b"}, "relu_b");
  add_node(g, "Add", {"b", "v"}, {"y"}, "add");
  add_output(g, "y");
  Analysed an = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(an.graph(), an.rdp);
  ASSERT_EQ(names(set), (std::vector<std::string>{"a", "b", "y"}));
  auto lives = tensor_lifetimes(an.graph(), source_order(an), set);
  ASSERT_TRUE(lives.ok()) << lives.status().to_string();
  // a is read by Identity at step 1, and its view v by Add at step 3.
  EXPECT_EQ(*lives, (std::vector<Lifetime>{{0, 3}, {2, 3}, {3, 3}}));
}

TEST(Lifetimes, RunFromProducerToLastReaderAndOutputsToTheEnd) {
  Analysed a = analyse(residual_mlp_model(), range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  ASSERT_EQ(names(set), (std::vector<std::string>{"r", "h", "g", "c", "y"}));
  auto lives = tensor_lifetimes(a.graph(), source_order(a), set);
  ASSERT_TRUE(lives.ok()) << lives.status().to_string();
  EXPECT_EQ(*lives, (std::vector<Lifetime>{{0, 4}, {1, 2}, {2, 3}, {3, 4}, {4, 4}}));
}

TEST(Lifetimes, AnUnreadOutputLivesDuringItsStepOnly) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  auto* k = g->add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::INT64);
  k->add_dims(1);
  k->add_int64_data(1);
  add_node(g, "TopK", {"x", "k"}, {"values", "indices"}, "topk");
  add_node(g, "Relu", {"values"}, {"y"}, "relu");
  add_node(g, "Relu", {"y"}, {"z"}, "relu2");
  add_output(g, "z");
  Analysed a = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  auto lives = tensor_lifetimes(a.graph(), source_order(a), set);
  ASSERT_TRUE(lives.ok());
  EXPECT_EQ((*lives)[static_cast<size_t>(set.index_of(a.graph().find("indices")))],
            (Lifetime{0, 0}));
  EXPECT_EQ((*lives)[static_cast<size_t>(set.index_of(a.graph().find("values")))],
            (Lifetime{0, 1}));
}

onnx::GraphProto reading_branch(const std::string& name, const std::string& op) {
  onnx::GraphProto b;
  b.set_name(name);
  add_node(&b, op, {"v"}, {name + "_out"});
  add_output(&b, name + "_out");
  return b;
}

TEST(Lifetimes, ReadsInsideIfBranchesKeepTheOuterTensorAliveUntilTheIf) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  add_input(g, "cond", {}, onnx::TensorProto::BOOL);
  add_node(g, "Relu", {"x"}, {"v"}, "make_v");
  add_node(g, "Relu", {"x"}, {"w"}, "make_w");
  add_node(g, "Relu", {"w"}, {"w2"}, "use_w");
  auto* n = add_node(g, "If", {"cond"}, {"y"}, "branch");
  for (const auto& [attr, body] : {std::pair{"then_branch", reading_branch("t", "Relu")},
                                   std::pair{"else_branch", reading_branch("e", "Neg")}}) {
    auto* a = n->add_attribute();
    a->set_name(attr);
    a->set_type(onnx::AttributeProto::GRAPH);
    *a->mutable_g() = body;
  }
  add_output(g, "y");
  add_output(g, "w2");
  Analysed a = analyse(m, range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  auto lives = tensor_lifetimes(a.graph(), source_order(a), set);
  ASSERT_TRUE(lives.ok());
  EXPECT_EQ((*lives)[static_cast<size_t>(set.index_of(a.graph().find("v")))], (Lifetime{0, 3}));
  EXPECT_EQ((*lives)[static_cast<size_t>(set.index_of(a.graph().find("y")))], (Lifetime{3, 3}));
  EXPECT_EQ((*lives)[static_cast<size_t>(set.index_of(a.graph().find("w2")))], (Lifetime{2, 3}));
}

TEST(Lifetimes, AnOrderThatReadsBeforeWritingIsAnErrorNamingBothNodes) {
  Analysed a = analyse(chain_model(), range_of("n", 1, 8));
  TensorSet set = arena_tensors(a.graph(), a.rdp);
  auto lives = tensor_lifetimes(a.graph(), std::vector<NodeId>{1, 0, 2}, set);
  ASSERT_FALSE(lives.ok());
  EXPECT_NE(lives.status().message().find("'relu_b' before 'relu_a'"), std::string::npos)
      << lives.status().message();
  EXPECT_FALSE(tensor_lifetimes(a.graph(), std::vector<NodeId>{0, 0, 2}, set).ok());
  EXPECT_FALSE(tensor_lifetimes(a.graph(), std::vector<NodeId>{0, 1}, set).ok());
}

}  // namespace
}  // namespace sod2::opt
