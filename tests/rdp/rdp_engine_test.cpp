// The engine on small hand-built models: assumptions, refinements, contradictions, control flow,
// unknown ops and declared-shape checks.
#include <gtest/gtest.h>

#include <limits>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/rdp/binding.h"
#include "core/rdp/rdp.h"
#include "core/rdp/rdp_summary.h"

namespace sod2 {
namespace {

using namespace sod2::testing;

struct Analysed {
  Model model;
  RdpResult rdp;
  const TensorFact& fact(const std::string& name) const {
    return rdp.fact(*model.graph, model.graph->find(name));
  }
};

Analysed analyse(const onnx::ModelProto& m, RdpOptions options = {}) {
  auto model = import_onnx_bytes(serialize(m), "", "test.onnx");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  auto rdp = run_rdp(*model, options);
  EXPECT_TRUE(rdp.ok()) << rdp.status().to_string();
  return {std::move(*model), std::move(*rdp)};
}

bool has_diagnostic(const RdpResult& r, const std::string& text, Severity sev) {
  for (const Diagnostic& d : r.diagnostics())
    if (d.severity == sev && d.message.find(text) != std::string::npos) return true;
  return false;
}

onnx::TensorProto* add_i64(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> v,
                           bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return t;
}

TEST(RdpEngine, UnprovenEqualityBecomesAnAssumptionCheckedAtBinding) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("a")});
  add_input(g, "y", {std::string("b")});
  add_node(g, "Add", {"x", "y"}, {"z"}, "adder");
  add_output(g, "z");
  RdpOptions o;
  o.ranges["a"] = {2, 64, 1};
  o.ranges["b"] = {2, 64, 1};
  Analysed r = analyse(m, o);
  ASSERT_EQ(r.rdp.assumptions().size(), 1u);
  EXPECT_EQ(r.rdp.assumptions()[0].to_string(), "a == b");
  EXPECT_EQ(r.rdp.assumptions()[0].node, "adder");
  EXPECT_EQ(r.fact("z").to_string(), "[a]");
  EXPECT_TRUE(make_binding(r.rdp, {{"a", 5}, {"b", 5}}).ok());
  auto bad = make_binding(r.rdp, {{"a", 5}, {"b", 6}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("a == b"), std::string::npos);
  EXPECT_NE(bad.status().message().find("adder"), std::string::npos);
}

TEST(RdpEngine, ContradictionIsAnErrorNamingTheNode) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{3}});
  add_input(g, "y", {int64_t{4}});
  add_node(g, "MatMul", {"x", "y"}, {"z"}, "mm");
  add_output(g, "z");
  Analysed r = analyse(m);
  bool found = false;
  for (const Diagnostic& d : r.rdp.diagnostics())
    found = found || (d.severity == Severity::kError && d.node == "mm" &&
                      d.message.find("contradiction") != std::string::npos);
  EXPECT_TRUE(found);
}

TEST(RdpEngine, ExecutionSymbolIsRefinedByAnEqualityTheModelNeeds) {
  // NonZero's index matrix concatenated with a [1, n] tensor along axis 0: its count must be n.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "mask", {std::string("n")});
  add_input(g, "t", {int64_t{1}, std::string("n")}, onnx::TensorProto::INT64);
  add_node(g, "NonZero", {"mask"}, {"nz"}, "nonzero");
  add_int_attr(add_node(g, "Concat", {"nz", "t"}, {"out"}, "concat"), "axis", 0);
  add_output(g, "out");
  RdpOptions o;
  o.ranges["n"] = {2, 100, 1};
  Analysed r = analyse(m, o);
  EXPECT_EQ(r.fact("nz").to_string(), "[1, n]");  // refined: the count is n
  EXPECT_EQ(r.fact("out").to_string(), "[2, n]");
  EXPECT_TRUE(r.rdp.assumptions().empty());
  EXPECT_EQ(r.rdp.refinements().size(), 1u);
}

TEST(RdpEngine, ShapeArithmeticCarriesThroughValues) {
  // Shape → Gather → Mul → Unsqueeze → Concat → Reshape: [b, s, 8] viewed as [b, 2*s, 4].
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("b"), std::string("s"), int64_t{8}});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "i0", {0}, true);
  add_i64(g, "i1", {1}, true);
  add_i64(g, "two", {2}, true);
  add_i64(g, "ax", {0});
  add_i64(g, "four", {4});
  add_node(g, "Gather", {"shape", "i0"}, {"d0"});
  add_node(g, "Gather", {"shape", "i1"}, {"d1"});
  add_node(g, "Mul", {"d1", "two"}, {"d1x2"});
  add_node(g, "Unsqueeze", {"d0", "ax"}, {"u0"});
  add_node(g, "Unsqueeze", {"d1x2", "ax"}, {"u1"});
  add_int_attr(add_node(g, "Concat", {"u0", "u1", "four"}, {"target"}), "axis", 0);
  add_node(g, "Reshape", {"x", "target"}, {"y"}, "reshape");
  add_output(g, "y");
  Analysed r = analyse(m);
  EXPECT_EQ(r.fact("target").to_string(), "[3] = (b, 2*s, 4)");
  EXPECT_EQ(r.fact("y").to_string(), "[b, 2*s, 4]");
  const Node& reshape =
      r.model.graph->node(r.model.graph->value(r.model.graph->find("y")).producer);
  EXPECT_TRUE(r.rdp.resolved(reshape));
}

TEST(RdpEngine, TorchPadExportResolvesThroughAMatrixOfPads) {
  // torch 1.13's F.pad(x, (0, 0, 0, pw, 0, ph)) on a window of 7 (Swin's), exported as: the
  // amounts from Shape/Gather/Mod/Sub, a Concat padded with ConstantOfShape zeros, Reshape to
  // [-1, 2], rows reversed by a step -1 Slice, Transpose, Reshape back, Cast, Pad. Every dim of
  // the padded [1, 56, 56, 8] must be a constant, with no execution symbol left.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{1}, int64_t{56}, int64_t{50}, int64_t{8}});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "i1", {1}, true);
  add_i64(g, "i2", {2}, true);
  add_i64(g, "seven", {7}, true);
  add_i64(g, "zero", {0});
  add_i64(g, "ax", {0});
  add_i64(g, "eight", {8}, true);
  add_i64(g, "rows", {-1, 2});
  add_i64(g, "flat", {-1});
  add_i64(g, "starts", {-1});
  add_i64(g, "ends", {std::numeric_limits<int64_t>::min() + 1});
  add_i64(g, "steps", {-1});
  for (const char* d : {"h", "w"}) {
    const std::string s = d;
    add_node(g, "Gather", {"shape", s == "h" ? "i1" : "i2"}, {s});
    add_int_attr(add_node(g, "Mod", {s, "seven"}, {s + "_mod"}), "fmod", 0);
    add_node(g, "Sub", {"seven", s + "_mod"}, {s + "_sub"});
    add_int_attr(add_node(g, "Mod", {s + "_sub", "seven"}, {s + "_pad"}), "fmod", 0);
    add_node(g, "Unsqueeze", {s + "_pad", "ax"}, {s + "_u"});
  }
  add_int_attr(add_node(g, "Concat", {"zero", "zero", "zero", "w_u", "zero", "h_u"}, {"torch"}),
               "axis", 0);
  add_node(g, "Shape", {"torch"}, {"torch_len"});
  add_node(g, "Gather", {"torch_len", "zero"}, {"n"});
  add_node(g, "Sub", {"eight", "n"}, {"missing"});
  add_node(g, "ConstantOfShape", {"missing"}, {"zeros"});
  add_int_attr(add_node(g, "Concat", {"torch", "zeros"}, {"all"}), "axis", 0);
  add_node(g, "Reshape", {"all", "rows"}, {"pairs"});
  add_node(g, "Slice", {"pairs", "starts", "ends", "ax", "steps"}, {"reversed"});
  auto* t = add_node(g, "Transpose", {"reversed"}, {"by_side"});
  auto* perm = t->add_attribute();
  perm->set_name("perm");
  perm->set_type(onnx::AttributeProto::INTS);
  perm->add_ints(1);
  perm->add_ints(0);
  add_node(g, "Reshape", {"by_side", "flat"}, {"onnx_pads"});
  add_node(g, "Pad", {"x", "onnx_pads"}, {"y"}, "pad");
  add_output(g, "y");
  Analysed r = analyse(m);
  EXPECT_EQ(r.fact("pairs").to_string(), "[4, 2] = (0, 0, 0, 6, 0, 0, 0, 0)");
  EXPECT_EQ(r.fact("onnx_pads").to_string(), "[8] = (0, 0, 0, 0, 0, 0, 6, 0)");
  EXPECT_EQ(r.fact("y").to_string(), "[1, 56, 56, 8]");
  for (const SymbolInfo& s : r.rdp.symbols()) EXPECT_NE(s.kind, SymbolKind::kExecution) << s.origin;
}

TEST(RdpEngine, ReshapeToARequestNotProvablyPositiveIsBoundedByItsInput) {
  // Reshape(x, [mod(n, 7)]): a request of 0 copies n, so the dim is an execution symbol, but
  // never more than max(request, n, numel) = n <= 100, not the default bound of any dim.
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "seven", {7});
  add_int_attr(add_node(g, "Mod", {"shape", "seven"}, {"request"}), "fmod", 0);
  add_node(g, "Reshape", {"x", "request"}, {"y"}, "reshape");
  add_output(g, "y");
  RdpOptions options;
  options.ranges["n"] = sym::SymbolRange{1, 100, 1};
  Analysed r = analyse(m, options);
  const TensorFact& y = r.fact("y");
  ASSERT_TRUE(y.dims && y.dims->size() == 1 && (*y.dims)[0]);
  const sym::SymExpr d = *(*y.dims)[0];
  ASSERT_TRUE(r.rdp.involves_execution(d)) << d.to_string();
  EXPECT_LE(sym::bounds(d, r.rdp.ranges()).hi, 100) << d.to_string();
}

TEST(RdpEngine, NeededEqualityTrueOnlyForSomeBindingsIsAnAssumption) {
  // 2*ceildiv(h,32) vs ceildiv(h,16): equal for some h only (DESIGN §4's example).
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("h")});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "c31", {31});
  add_i64(g, "c15", {15});
  add_i64(g, "c32", {32});
  add_i64(g, "c16", {16});
  add_i64(g, "c2", {2});
  add_node(g, "Add", {"shape", "c31"}, {"p32"});
  add_node(g, "Div", {"p32", "c32"}, {"q32"});
  add_node(g, "Mul", {"q32", "c2"}, {"n1"});
  add_node(g, "Add", {"shape", "c15"}, {"p16"});
  add_node(g, "Div", {"p16", "c16"}, {"n2"});
  add_node(g, "ConstantOfShape", {"n1"}, {"t1"});
  add_node(g, "ConstantOfShape", {"n2"}, {"t2"});
  add_node(g, "Add", {"t1", "t2"}, {"sum"}, "needs_equal");
  add_output(g, "sum");
  RdpOptions o;
  o.ranges["h"] = {32, 1024, 1};
  Analysed r = analyse(m, o);
  ASSERT_EQ(r.rdp.assumptions().size(), 1u)
      << r.fact("t1").to_string() << " " << r.fact("t2").to_string();
  EXPECT_EQ(r.rdp.assumptions()[0].node, "needs_equal");
  EXPECT_TRUE(make_binding(r.rdp, {{"h", 64}}).ok());   // 2*2 == 4
  EXPECT_FALSE(make_binding(r.rdp, {{"h", 48}}).ok());  // 2*2 != 3
}

onnx::GraphProto branch(const std::string& name, const std::string& op,
                        std::vector<int64_t> shape) {
  onnx::GraphProto b;
  b.set_name(name);
  auto* t = b.add_initializer();
  t->set_name(name + "_shape");
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(shape.size()));
  for (int64_t v : shape) t->add_int64_data(v);
  add_node(&b, op, {"x", name + "_shape"}, {name + "_out"});
  add_output(&b, name + "_out");
  return b;
}

void add_if(onnx::GraphProto* g, const onnx::GraphProto& then_g, const onnx::GraphProto& else_g) {
  auto* n = add_node(g, "If", {"cond"}, {"y"}, "branch");
  auto* a = n->add_attribute();
  a->set_name("then_branch");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = then_g;
  auto* b = n->add_attribute();
  b->set_name("else_branch");
  b->set_type(onnx::AttributeProto::GRAPH);
  *b->mutable_g() = else_g;
}

TEST(RdpEngine, IfMergesEqualBranchesAndMintsASymbolForDifferentOnes) {
  for (bool same : {true, false}) {
    auto m = make_model();
    auto* g = m.mutable_graph();
    add_input(g, "x", {int64_t{4}, int64_t{6}});
    add_input(g, "cond", {}, onnx::TensorProto::BOOL);
    add_if(g, branch("t", "Reshape", {6, 4}), branch("e", "Reshape", {same ? 6 : 3, same ? 4 : 8}));
    add_output(g, "y");
    Analysed r = analyse(m);
    if (same) {
      EXPECT_EQ(r.fact("y").to_string(), "[6, 4]");
    } else {
      EXPECT_EQ(r.fact("y").to_string(), "[branch.out0.d0, branch.out0.d1]");
      EXPECT_TRUE(r.rdp.involves_execution(*(*r.fact("y").dims)[0]));
      const auto b = sym::bounds(*(*r.fact("y").dims)[1], r.rdp.ranges());
      EXPECT_EQ(b.hi, 8);
    }
  }
}

TEST(RdpEngine, LoopStacksScanOutputsAndGeneralisesGrowingState) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {int64_t{1}, int64_t{5}});
  add_i64(g, "trips", {7}, true);
  auto* cond = g->add_initializer();
  cond->set_name("cond");
  cond->set_data_type(onnx::TensorProto::BOOL);
  cond->add_int32_data(1);
  onnx::GraphProto body;
  body.set_name("body");
  add_input(&body, "i", {}, onnx::TensorProto::INT64);
  add_input(&body, "c", {}, onnx::TensorProto::BOOL);
  add_input(&body, "acc", {int64_t{1}, std::string("")});
  add_node(&body, "Identity", {"c"}, {"c_out"});
  add_int_attr(add_node(&body, "Concat", {"acc", "x"}, {"acc_out"}), "axis", 1);
  add_node(&body, "Relu", {"x"}, {"scan"});
  add_output(&body, "c_out", {}, onnx::TensorProto::BOOL);
  add_output(&body, "acc_out");
  add_output(&body, "scan");
  auto* loop = add_node(g, "Loop", {"trips", "cond", "x"}, {"final", "stacked"}, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = body;
  add_output(g, "final");
  add_output(g, "stacked");
  Analysed r = analyse(m);
  EXPECT_EQ(r.fact("stacked").to_string(), "[7, 1, 5]");
  EXPECT_EQ(r.fact("final").to_string(), "[1, loop.carried0.d1]");
}

TEST(RdpEngine, UnknownOpsGiveUnknownFactsAndADiagnostic) {
  auto m = make_model();
  auto* o = m.add_opset_import();
  o->set_domain("com.example");
  o->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  add_node(g, "Mystery", {"x"}, {"y"}, "mystery")->set_domain("com.example");
  add_node(g, "Relu", {"y"}, {"z"});
  add_output(g, "z");
  Analysed r = analyse(m);
  EXPECT_FALSE(r.fact("y").rank_known());
  EXPECT_FALSE(r.fact("z").rank_known());
  EXPECT_TRUE(has_diagnostic(r.rdp, "com.example::Mystery", Severity::kWarning));
  const RdpSummary s = summarize_rdp(r.model, r.rdp);
  EXPECT_EQ(s.values_total, 2);
  EXPECT_EQ(s.rank_unknown, 2);
}

TEST(RdpEngine, DeclaredShapesAreCheckedNotTrusted) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{4}});
  add_node(g, "Relu", {"x"}, {"y"}, "relu");
  auto* vi = g->add_value_info();
  vi->set_name("y");
  set_tensor_type(vi, onnx::TensorProto::FLOAT, {std::string("n"), int64_t{5}});
  add_output(g, "y", {std::string("n"), int64_t{5}});
  Analysed r = analyse(m);
  EXPECT_EQ(r.fact("y").to_string(), "[n, 4]");
  EXPECT_TRUE(has_diagnostic(r.rdp, "declared as 5 but RDP derives 4", Severity::kWarning));
}

TEST(RdpEngine, OverflowingShapeArithmeticBecomesUnknownNotWrong) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n")});
  add_node(g, "Shape", {"x"}, {"shape"});
  add_i64(g, "huge", {int64_t{1} << 62});
  add_node(g, "Mul", {"shape", "huge"}, {"big"});
  add_node(g, "Mul", {"big", "huge"}, {"bigger"});
  add_node(g, "ConstantOfShape", {"bigger"}, {"y"});
  add_output(g, "y");
  Analysed r = analyse(m);
  ASSERT_TRUE(r.fact("y").rank_known());
  const Dim& d = (*r.fact("y").dims)[0];
  // Either unknown or an execution symbol; never a wrapped-around number.
  EXPECT_TRUE(!d || r.rdp.involves_execution(*d)) << r.fact("y").to_string();
}

TEST(RdpEngine, InputsWithoutRangesGetTheDefaultAndAWarning) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), std::string("")});
  add_node(g, "Relu", {"x"}, {"y"});
  add_output(g, "y");
  Analysed r = analyse(m);
  EXPECT_EQ(r.fact("y").to_string(), "[n, x.d1]");
  EXPECT_TRUE(has_diagnostic(r.rdp, "no range declared for n, x.d1", Severity::kWarning));
  auto bad = make_binding(r.rdp, {{"n", 0}, {"x.d1", 3}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("outside its range"), std::string::npos);
  auto missing = make_binding(r.rdp, {{"n", 2}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("unbound input symbols: x.d1"), std::string::npos);
}

}  // namespace
}  // namespace sod2
