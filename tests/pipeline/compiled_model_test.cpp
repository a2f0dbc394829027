// pipeline::compile decides fusion once, with the CPU's fused kernels: a candidate group the CPU
// has a kernel for runs as one node and keeps its inside values out of the arena; one it has none
// for is split, says why, and its values are planned, so the plan is the plan of what runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_node;
using testing::add_output;

// x -> Conv -> Relu -> r (a graph output) -> `op` -> Neg -> y. RDP allows two groups: Conv+Relu
// (a contraction with an epilogue) and op+Neg (elementwise), which the CPU runs as one
// FusedElementwise when it evaluates `op` (Exp), and splits when not (Celu).
Model conv_relu_then_elementwise(const char* op = "Celu") {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 2, "h", "w"});
  add_float_initializer(g, "W", {3, 2, 1, 1}, {1, 0, 0, 1, 1, 1});
  add_float_initializer(g, "B", {3}, {0.5f, -0.5f, 0});
  add_node(g, "Conv", {"x", "W", "B"}, {"c"}, "conv");
  add_node(g, "Relu", {"c"}, {"r"}, "relu");
  add_node(g, op, {"r"}, {"e"}, "exp");
  add_node(g, "Neg", {"e"}, {"y"}, "neg");
  add_output(g, "r", {1, 3, "h", "w"});
  add_output(g, "y", {1, 3, "h", "w"});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "test model");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

pipeline::CompileOptions ranges() {
  pipeline::CompileOptions o;
  o.rdp.ranges["h"] = {1, 64, 1};
  o.rdp.ranges["w"] = {1, 64, 1};
  return o;
}

NodeId node_called(const Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.num_nodes(); ++i)
    if (g.node(static_cast<NodeId>(i)).name == name) return static_cast<NodeId>(i);
  ADD_FAILURE() << "no node " << name;
  return 0;
}

// The candidate group holding the node called `name`.
size_t candidate_of(const pipeline::CompiledModel& c, const std::string& name) {
  const NodeId n = node_called(c.graph(), name);
  return static_cast<size_t>(c.candidates.group_of[static_cast<size_t>(n)]);
}

TEST(CompiledModel, FusesWhatTheCpuRunsFusedAndSplitsTheRestSayingWhy) {
  auto c = pipeline::compile(conv_relu_then_elementwise(), ranges());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const size_t conv = candidate_of(*c, "conv"), exp = candidate_of(*c, "exp");
  ASSERT_NE(conv, exp);
  EXPECT_EQ(c->candidates.groups[conv].nodes.size(), 2u);
  EXPECT_EQ(c->candidates.groups[exp].nodes.size(), 2u);
  EXPECT_EQ(c->decisions[conv].refusal, package::FusionRefusal::kNone);
  EXPECT_EQ(c->decisions[exp].refusal, package::FusionRefusal::kNotInFusedElementwise);
  EXPECT_EQ(c->decisions[exp].at_node, "exp");
  EXPECT_EQ(c->fused_groups(), 1);
  EXPECT_EQ(c->refused_groups(), 1);

  // The plan's groups: Conv+Relu, then Exp and Neg alone, each saying why.
  const opt::FusionPlan& steps = c->plan.fusion;
  ASSERT_EQ(steps.groups.size(), 3u);
  const auto& exp_alone = steps.groups[static_cast<size_t>(
      steps.group_of[static_cast<size_t>(node_called(c->graph(), "exp"))])];
  ASSERT_EQ(exp_alone.nodes.size(), 1u);
  ASSERT_EQ(exp_alone.not_fused.size(), 1u);
  EXPECT_NE(exp_alone.not_fused[0].find("runs alone"), std::string::npos) << exp_alone.not_fused[0];
  EXPECT_NE(exp_alone.not_fused[0].find("an op a fused elementwise kernel does not evaluate"),
            std::string::npos)
      << exp_alone.not_fused[0];

  // The value between Exp and Neg is planned (it is written); the one inside Conv+Relu is not.
  auto planned = [&](const std::string& value) {
    const auto& ts = c->plan.tensors.tensors;
    return std::any_of(ts.begin(), ts.end(), [&](const auto& t) { return t.name == value; });
  };
  EXPECT_TRUE(planned("e"));
  EXPECT_FALSE(planned("c"));

  // The program runs exactly those steps.
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 3u);
  EXPECT_EQ(main.nodes[0].info.op_type, "FusedConv");
  EXPECT_EQ(main.nodes[0].fused_nodes, (std::vector<std::string>{"conv", "relu"}));
  EXPECT_EQ(main.nodes[1].info.name, "exp");
  EXPECT_EQ(main.nodes[2].info.name, "neg");
}

// With an op it evaluates, the CPU runs the elementwise group as one FusedElementwise: the value
// between its ops is never written, so the plan does not hold it, and the run gives what the ops
// give one by one.
TEST(CompiledModel, AnElementwiseGroupRunsAsOneKernelWithItsInsideOutOfThePlan) {
  pipeline::CompileOptions fused = ranges();
  auto c = pipeline::compile(conv_relu_then_elementwise("Exp"), fused);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const size_t exp = candidate_of(*c, "exp");
  EXPECT_EQ(c->decisions[exp].refusal, package::FusionRefusal::kNone);
  EXPECT_EQ(c->fused_groups(), 2);
  const auto& ts = c->plan.tensors.tensors;
  EXPECT_FALSE(std::any_of(ts.begin(), ts.end(), [](const auto& t) { return t.name == "e"; }));
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 2u);
  EXPECT_EQ(main.nodes[1].info.op_type, "FusedElementwise");
  EXPECT_EQ(main.nodes[1].fused_nodes, (std::vector<std::string>{"exp", "neg"}));

  pipeline::CompileOptions unfused = ranges();
  unfused.fuse = false;
  auto u = pipeline::compile(conv_relu_then_elementwise("Exp"), unfused);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, 2, 5, 7});
  for (int i = 0; i < 70; ++i) x.data<float>()[i] = 0.1f * static_cast<float>(i % 13) - 0.6f;
  const rt::Tensor in[] = {x.view()};
  auto a = rt::Session::create(c->program, rt::KernelRegistry::standard(), {2});
  auto b = rt::Session::create(u->program, rt::KernelRegistry::standard(), {2});
  ASSERT_TRUE(a.ok() && b.ok());
  auto got = (*a)->run(in);
  auto want = (*b)->run(in);
  ASSERT_TRUE(got.ok() && want.ok());
  for (size_t o = 0; o < 2; ++o)
    for (int i = 0; i < 105; ++i)
      EXPECT_EQ((*got)[o].as<float>()[i], (*want)[o].as<float>()[i]) << o << " " << i;
}

// The program's kernels in order, as "domain:op" for sod2 ops.
std::vector<std::string> kernel_ops(const pipeline::CompiledModel& c) {
  std::vector<std::string> ops;
  for (const rt::NodeDesc& n : c.program.graphs[0].nodes)
    ops.push_back(n.info.domain.empty() ? n.info.op_type : n.info.domain + ":" + n.info.op_type);
  return ops;
}

// A contraction or normalization the CPU does not run with its neighbours is peeled off: it runs
// alone, saying why, and its elementwise epilogue still runs as one FusedElementwise.
TEST(CompiledModel, ARefusedAnchorIsPeeledAndItsEpilogueStillFuses) {
  // MatMul, then Exp (no epilogue runs it) and Neg.
  {
    onnx::ModelProto m = testing::make_model(17);
    auto* g = m.mutable_graph();
    add_input(g, "a", {2, "k"});
    add_input(g, "b", {"k", "m"});
    add_node(g, "MatMul", {"a", "b"}, {"z"}, "matmul");
    add_node(g, "Exp", {"z"}, {"e"}, "exp");
    add_node(g, "Neg", {"e"}, {"y"}, "neg");
    add_output(g, "y", {2, "m"});
    auto model = import_onnx_bytes(testing::serialize(m), "", "peel matmul");
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    pipeline::CompileOptions o;
    o.rdp.ranges["k"] = {1, 16, 1};
    o.rdp.ranges["m"] = {1, 16, 1};
    auto c = pipeline::compile(std::move(*model), o);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(kernel_ops(*c), (std::vector<std::string>{"MatMul", "sod2:FusedElementwise"}));
    const opt::FusionPlan& steps = c->plan.fusion;
    const auto& mm = steps.groups[static_cast<size_t>(
        steps.group_of[static_cast<size_t>(node_called(c->graph(), "matmul"))])];
    ASSERT_EQ(mm.not_fused.size(), 1u);
    EXPECT_NE(mm.not_fused[0].find("an op the fused epilogue does not run"), std::string::npos)
        << mm.not_fused[0];
    const auto& ts = c->plan.tensors.tensors;
    EXPECT_FALSE(std::any_of(ts.begin(), ts.end(), [](const auto& t) { return t.name == "e"; }));
  }
  // Softmax then a scale and a shift: a normalization group the CPU has no kernel for.
  {
    onnx::ModelProto m = testing::make_model(17);
    auto* g = m.mutable_graph();
    add_input(g, "x", {"n", 8});
    add_float_initializer(g, "s", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
    add_float_initializer(g, "t", {8}, {0, 1, 0, 1, 0, 1, 0, 1});
    add_node(g, "Softmax", {"x"}, {"p"}, "softmax");
    add_node(g, "Mul", {"p", "s"}, {"q"}, "scale");
    add_node(g, "Add", {"q", "t"}, {"y"}, "shift");
    add_output(g, "y", {"n", 8});
    auto model = import_onnx_bytes(testing::serialize(m), "", "peel softmax");
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    pipeline::CompileOptions o;
    o.rdp.ranges["n"] = {1, 16, 1};
    auto c = pipeline::compile(std::move(*model), o);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_EQ(kernel_ops(*c), (std::vector<std::string>{"Softmax", "sod2:FusedElementwise"}));
    auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, 8});
    for (int i = 0; i < 8; ++i) x.data<float>()[i] = 0.f;  // softmax = 1/8 each
    const rt::Tensor in[] = {x.view()};
    auto out = (*session)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    for (int i = 0; i < 8; ++i)
      EXPECT_FLOAT_EQ((*out)[0].as<float>()[i], (i + 1) / 8.f + (i % 2)) << i;
  }
}

TEST(CompiledModel, WithoutFusionEveryNodeIsAStepAndNothingIsACandidate) {
  pipeline::CompileOptions o = ranges();
  o.fuse = false;
  auto c = pipeline::compile(conv_relu_then_elementwise(), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_TRUE(c->candidates.groups.empty());
  EXPECT_EQ(c->program.graphs[0].nodes.size(), 4u);
  EXPECT_EQ(c->plan.order.steps.size(), 4u);
}

TEST(CompiledModel, ProgressSeesEveryStageAndCanCancel) {
  std::vector<std::string> stages;
  pipeline::CompileOptions o = ranges();
  o.progress = [&](double, const char* stage) {
    stages.push_back(stage);
    return Status::ok_status();
  };
  ASSERT_TRUE(pipeline::compile(conv_relu_then_elementwise(), o).ok());
  EXPECT_EQ(stages, (std::vector<std::string>{"propagating ranks and dims (RDP)", "deciding fusion",
                                              "planning memory", "building the program"}));
  o.progress = [](double, const char* stage) {
    return std::string(stage) == "planning memory" ? cancelled("stop") : Status::ok_status();
  };
  auto c = pipeline::compile(conv_relu_then_elementwise(), o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kCancelled);
}

TEST(CompiledModel, WithoutTheProgramThePlanIsTheSame) {
  pipeline::CompileOptions o = ranges();
  auto full = pipeline::compile(conv_relu_then_elementwise(), o);
  o.build_program = false;
  auto plan_only = pipeline::compile(conv_relu_then_elementwise(), o);
  ASSERT_TRUE(full.ok() && plan_only.ok());
  EXPECT_TRUE(plan_only->program.graphs.empty());
  EXPECT_EQ(plan_only->plan.order.order, full->plan.order.order);
  EXPECT_EQ(plan_only->plan.symbolic.arena_bytes, full->plan.symbolic.arena_bytes);
  auto program = pipeline::program_for(*plan_only, pipeline::Target::kCpu);
  ASSERT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("without its program"), std::string::npos);
}

TEST(CompiledModel, UpToRdpOnlyHasFactsButNoPlan) {
  pipeline::CompileOptions o = ranges();
  o.plan = false;
  auto c = pipeline::compile(conv_relu_then_elementwise(), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_FALSE(c->rdp.symbols().empty());
  EXPECT_TRUE(c->candidates.groups.empty());
  EXPECT_TRUE(c->plan.order.steps.empty());
  EXPECT_TRUE(c->program.graphs.empty());
  auto at = pipeline::plan_at(*c, {});
  ASSERT_FALSE(at.ok());
  EXPECT_NE(at.status().message().find("RDP only"), std::string::npos);
  EXPECT_FALSE(pipeline::program_for(*c, pipeline::Target::kCpu).ok());
}

TEST(CompiledModel, AMissingFileIsAnErrorNamingIt) {
  auto c = pipeline::compile_file("/nonexistent/model.onnx");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

// Identity chains on weights (what exporters write for tied or renamed parameters) are constants:
// no kernel, no arena bytes, the package shares the initializer's bytes, and the run reads them.
TEST(CompiledModel, IdentityOfAConstantIsAConstant) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 2, "h", 1});
  add_float_initializer(g, "W", {1, 2, 1, 1}, {1, 2});
  add_node(g, "Identity", {"W"}, {"w1"}, "id1");
  add_node(g, "Identity", {"w1"}, {"w2"}, "id2");
  add_node(g, "Add", {"x", "w2"}, {"y"}, "add");
  add_node(g, "Identity", {"y"}, {"z"}, "id_of_data");  // not a constant: a kernel
  add_output(g, "z", {1, 2, "h", 1});
  add_output(g, "w1", {1, 2, 1, 1});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "identity chain");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  pipeline::CompileOptions o;
  o.rdp.ranges["h"] = {1, 8, 1};
  auto c = pipeline::compile(std::move(*model), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();

  EXPECT_EQ(opt::count_kernels(c->graph()), 2);  // Add and the Identity of data
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 1u);  // the two, fused
  EXPECT_EQ(main.nodes[0].fused_nodes, (std::vector<std::string>{"add", "id_of_data"}));
  auto value_named = [&](const std::string& name) -> const rt::ValueDesc& {
    for (const rt::ValueDesc& d : main.values)
      if (d.name == name) return d;
    ADD_FAILURE() << "no value " << name;
    return main.values[0];
  };
  const int32_t w = value_named("W").constant;
  ASSERT_GE(w, 0);
  for (const char* name : {"w1", "w2"}) {
    EXPECT_EQ(value_named(name).storage, rt::ValueStorage::kConstant) << name;
    EXPECT_EQ(value_named(name).constant, w) << name;  // shared, not copied
  }
  EXPECT_EQ(value_named("z").storage, rt::ValueStorage::kArena);

  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, 2, 3, 1});
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = static_cast<float>(i);
  const rt::Tensor in[] = {x.view()};
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 2u);
  const float* z = (*out)[0].as<float>();
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(z[i], static_cast<float>(i) + (i < 3 ? 1.f : 2.f));
  EXPECT_FLOAT_EQ((*out)[1].as<float>()[0], 1.f);
  EXPECT_FLOAT_EQ((*out)[1].as<float>()[1], 2.f);
}

// A float16 initializer (ONNX keeps float16 as raw 16-bit patterns).
void add_half_initializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                          const std::vector<float>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT16);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw;
  for (float v : values) {
    const uint16_t h = rt::double_to_half(v);
    raw.append(reinterpret_cast<const char*>(&h), 2);
  }
  t->set_raw_data(raw);
}

// ResNet's block end, Conv -> Add(skip, conv) -> Relu, with the skip as the Add's first operand:
// one FusedConv computing relu(conv + bias + skip). Before, the matcher refused any activation
// after a residual Add and the three ran node by node (11 of resnet18's 20 convs).
TEST(CompiledModel, AResidualAddThenReluFusesIntoTheConvWhateverTheOperandOrder) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 2, "h", "w"});
  add_float_initializer(g, "W", {2, 2, 1, 1}, {1, 0, 0, -1});
  add_float_initializer(g, "B", {2}, {0, 0});
  add_node(g, "Conv", {"x", "W", "B"}, {"c"}, "conv");
  add_node(g, "Add", {"x", "c"}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {"y"}, "relu");
  add_output(g, "y", {1, 2, "h", "w"});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "residual block");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto c = pipeline::compile(std::move(*model), ranges());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 1u);
  EXPECT_EQ(main.nodes[0].info.op_type, "FusedConv");
  EXPECT_EQ(main.nodes[0].fused_nodes, (std::vector<std::string>{"conv", "add", "relu"}));
  const Expected<int64_t> before =
      main.nodes[0].info.attrs.get_int("residual_before_activation", -1);
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(*before, 1);

  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  // Channel 0: relu(2 x0); channel 1: relu(-x1 + x1) = 0. Relu before the Add would give
  // relu(-x1) + x1, which is not 0 where x1 < 0.
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, 2, 1, 3});
  const float xs[] = {-1, 2, 0.5f, -3, 4, -0.25f};
  std::copy(xs, xs + 6, x.data<float>());
  const rt::Tensor in[] = {x.view()};
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const float* y = static_cast<const float*>((*out)[0].data);
  const float want[] = {0, 4, 1, 0, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(y[i], want[i]) << i;
}

// DenseNet's BatchNorm -> ReLU (after a Concat, so nothing folds it into a Conv): one
// sod2:FusedBatchNormalization, computing what the two ops compute; statistics that are not
// constants keep the two nodes apart, with the typed reason.
Model batch_norm_relu(bool constant_statistics) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {2, 3, "h", "w"});
  add_float_initializer(g, "scale", {3}, {1.5f, -2, 0.5f});
  add_float_initializer(g, "bias", {3}, {0.25f, 1, -0.5f});
  add_float_initializer(g, "mean", {3}, {0.5f, -1, 2});
  if (constant_statistics) {
    add_float_initializer(g, "var", {3}, {4, 0.25f, 1});
  } else {
    add_input(g, "var", {3});
  }
  add_node(g, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"n"}, "bn");
  add_node(g, "Relu", {"n"}, {"y"}, "relu");
  add_output(g, "y", {2, 3, "h", "w"});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "batch norm relu");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

TEST(CompiledModel, BatchNormThenReluRunsAsOneKernelAsTheTwoOpsWould) {
  auto c = pipeline::compile(batch_norm_relu(true), ranges());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 1u);
  EXPECT_EQ(main.nodes[0].info.op_type, "FusedBatchNormalization");
  EXPECT_EQ(main.nodes[0].fused_nodes, (std::vector<std::string>{"bn", "relu"}));
  pipeline::CompileOptions unfused = ranges();
  unfused.fuse = false;
  auto separate = pipeline::compile(batch_norm_relu(true), unfused);
  ASSERT_TRUE(separate.ok()) << separate.status().to_string();
  ASSERT_EQ(separate->program.graphs[0].nodes.size(), 2u);

  rt::HostTensor x(rt::DType::kFloat, rt::Shape{2, 3, 3, 5});
  for (int64_t i = 0; i < x.shape().numel(); ++i)
    x.data<float>()[i] = static_cast<float>((i * 37) % 23) / 4.f - 2.5f;
  const rt::Tensor in[] = {x.view()};
  auto fused_session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {2});
  auto separate_session =
      rt::Session::create(separate->program, rt::KernelRegistry::standard(), {2});
  ASSERT_TRUE(fused_session.ok()) << fused_session.status().to_string();
  ASSERT_TRUE(separate_session.ok()) << separate_session.status().to_string();
  auto a = (*fused_session)->run(in);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  std::vector<float> got(static_cast<const float*>((*a)[0].data),
                         static_cast<const float*>((*a)[0].data) + x.shape().numel());
  auto b = (*separate_session)->run(in);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  const float* want = static_cast<const float*>((*b)[0].data);
  int zeros = 0;
  for (int64_t i = 0; i < x.shape().numel(); ++i) {
    EXPECT_NEAR(got[static_cast<size_t>(i)], want[i], 1e-5f * (1.f + std::abs(want[i]))) << i;
    zeros += got[static_cast<size_t>(i)] == 0.f;
  }
  EXPECT_GT(zeros, 0) << "the ReLU clipped something";

  auto runtime_stats = pipeline::compile(batch_norm_relu(false), ranges());
  ASSERT_TRUE(runtime_stats.ok()) << runtime_stats.status().to_string();
  ASSERT_EQ(runtime_stats->decisions.size(), runtime_stats->candidates.groups.size());
  bool refused = false;
  for (const pipeline::GroupDecision& d : runtime_stats->decisions)
    refused |= d.refusal == package::FusionRefusal::kBatchNormNotInference;
  EXPECT_TRUE(refused);
  EXPECT_EQ(runtime_stats->program.graphs[0].nodes.size(), 2u);
}

TEST(CompiledModel, AFloat16ConvNetRunsWithItsContractionsInFloat32) {
  // x -> Conv(+B) -> Relu -> ReduceMean(h,w) -> MatMul -> y, all float16: the fused Conv+Relu,
  // the mean and the MatMul run through their float32 kernels (narrow_float_kernel.h). The
  // values are exact in float16, so the result is too.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 2, "h", "w"}, onnx::TensorProto::FLOAT16);
  add_half_initializer(g, "W", {3, 2, 1, 1}, {1, 0, 0, 1, 1, 1});
  add_half_initializer(g, "B", {3}, {0.5f, -0.5f, 0});
  add_half_initializer(g, "M", {3, 2}, {1, 0, 0, 1, 1, 1});
  add_node(g, "Conv", {"x", "W", "B"}, {"c"}, "conv");
  add_node(g, "Relu", {"c"}, {"r"}, "relu");
  auto* mean = add_node(g, "ReduceMean", {"r"}, {"p"}, "mean");
  auto* axes = mean->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(2);
  axes->add_ints(3);
  testing::add_int_attr(mean, "keepdims", 0);
  add_node(g, "MatMul", {"p", "M"}, {"y"}, "fc");
  add_output(g, "y", {1, 2}, onnx::TensorProto::FLOAT16);
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "float16 conv net");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto c = pipeline::compile(std::move(*model), ranges());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  // Conv+Relu fuse as they do in float32: one kernel, the Conv's output never stored.
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 3u);
  EXPECT_EQ(main.nodes[0].info.op_type, "FusedConv");
  EXPECT_EQ(main.nodes[0].info.output_dtypes, (std::vector<rt::DType>{rt::DType::kFloat16}));
  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();

  // Channel 0 is 0, 1, 2, 3; channel 1 is all 1. Conv: x0 + 0.5, x1 - 0.5, x0 + x1; their means
  // 2, 0.5, 2.5; y = (2 + 2.5, 0.5 + 2.5).
  rt::HostTensor x(rt::DType::kFloat16, rt::Shape{1, 2, 2, 2});
  const float xs[] = {0, 1, 2, 3, 1, 1, 1, 1};
  for (int i = 0; i < 8; ++i)
    reinterpret_cast<uint16_t*>(x.bytes().data())[i] = rt::double_to_half(xs[i]);
  const rt::Tensor in[] = {x.view()};
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const rt::Tensor& y = (*out)[0];
  ASSERT_EQ(y.dtype, rt::DType::kFloat16);
  ASSERT_EQ(y.shape, (rt::Shape{1, 2}));
  const auto* bits = static_cast<const uint16_t*>(y.data);
  EXPECT_EQ(rt::half_to_float(bits[0]), 4.5f);
  EXPECT_EQ(rt::half_to_float(bits[1]), 3.0f);
  // The arena counts the float16 tensors at two bytes an element.
  EXPECT_LE((*session)->arena_bytes(), 3 * 2 * 2 * 2 * 2 + 64 * 3);
}

// q [s, h, d] and k [s, h, d] -> Transpose (1,0,2) and (1,2,0) -> MatMul -> Add r -> y
// [h, s, s]: attention's scores with the head split and K^T, plus a mask r of their shape (or,
// with `broadcast_mask`, [1, s, s], which no fused epilogue adds). With `shape_reader`, a Shape
// also reads the transposed q.
Model attention_scores(bool shape_reader = false, bool broadcast_mask = false) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "q", {"s", 2, 3});
  add_input(g, "k", {"s", 2, 3});
  add_input(g, "r", {broadcast_mask ? 1 : 2, "s", "s"});
  auto perm = [](onnx::NodeProto* n, std::vector<int64_t> p) {
    auto* a = n->add_attribute();
    a->set_name("perm");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : p) a->add_ints(v);
  };
  perm(add_node(g, "Transpose", {"q"}, {"qt"}, "tq"), {1, 0, 2});
  perm(add_node(g, "Transpose", {"k"}, {"kt"}, "tk"), {1, 2, 0});
  add_node(g, "MatMul", {"qt", "kt"}, {"scores"}, "mm");
  add_node(g, "Add", {"scores", "r"}, {"y"}, "add");
  add_output(g, "y", {2, "s", "s"});
  if (shape_reader) {
    add_node(g, "Shape", {"qt"}, {"qs"}, "shape");
    add_output(g, "qs", {3});
  }
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "test model");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// A MatMul reads its operands' Transposes in place: one FusedMatMul with a_perm / b_perm, the
// transposed copies never written or planned, the same result as the nodes one by one. Vulkan
// (whose MatMul reads operands as they are) splits the group; a Transpose whose value a Shape
// also reads stays a node of its own.
TEST(CompiledModel, AMatMulReadsItsOperandTransposesInPlace) {
  pipeline::CompileOptions o;
  o.rdp.ranges["s"] = {1, 64, 1};
  auto c = pipeline::compile(attention_scores(), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 1u);
  const rt::NodeDesc& mm = main.nodes[0];
  EXPECT_EQ(mm.info.op_type, "FusedMatMul");
  EXPECT_EQ(mm.fused_nodes, (std::vector<std::string>{"tq", "tk", "mm", "add"}));
  const rt::AttrValue* ap = mm.info.attrs.find("a_perm");
  const rt::AttrValue* bp = mm.info.attrs.find("b_perm");
  ASSERT_TRUE(ap && bp);
  EXPECT_EQ(ap->ints, (std::vector<int64_t>{1, 0, 2}));
  EXPECT_EQ(bp->ints, (std::vector<int64_t>{1, 2, 0}));
  const auto& ts = c->plan.tensors.tensors;
  EXPECT_FALSE(std::any_of(ts.begin(), ts.end(), [](const auto& t) { return t.name == "kt"; }));

  pipeline::CompileOptions unfused = o;
  unfused.fuse = false;
  auto u = pipeline::compile(attention_scores(), unfused);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  rt::HostTensor q(rt::DType::kFloat, rt::Shape{5, 2, 3}), k(rt::DType::kFloat, rt::Shape{5, 2, 3});
  rt::HostTensor r(rt::DType::kFloat, rt::Shape{2, 5, 5});
  for (int i = 0; i < 30; ++i) {
    q.data<float>()[i] = 0.1f * static_cast<float>(i % 7) - 0.3f;
    k.data<float>()[i] = 0.2f * static_cast<float>(i % 5) - 0.4f;
  }
  for (int i = 0; i < 50; ++i) r.data<float>()[i] = 0.01f * static_cast<float>(i);
  const rt::Tensor in[] = {q.view(), k.view(), r.view()};
  auto a = rt::Session::create(c->program, rt::KernelRegistry::standard(), {2});
  auto b = rt::Session::create(u->program, rt::KernelRegistry::standard(), {2});
  ASSERT_TRUE(a.ok() && b.ok());
  auto got = (*a)->run(in);
  auto want = (*b)->run(in);
  ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string();
  ASSERT_EQ((*got)[0].shape, (rt::Shape{2, 5, 5}));
  for (int i = 0; i < 50; ++i)
    EXPECT_NEAR((*got)[0].as<float>()[i], (*want)[0].as<float>()[i], 1e-6f) << i;

  pipeline::CompileOptions vulkan = o;
  vulkan.target = pipeline::Target::kVulkan;
  auto v = pipeline::compile(attention_scores(), vulkan);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  const size_t grp = candidate_of(*v, "mm");
  EXPECT_EQ(v->decisions[grp].refusal, package::FusionRefusal::kUnsupportedPrologue);
  for (const rt::NodeDesc& n : v->program.graphs[0].nodes) EXPECT_NE(n.info.op_type, "FusedMatMul");

  // A refused epilogue (the broadcast mask) is peeled off; the MatMul keeps its Transposes.
  auto p = pipeline::compile(attention_scores(false, true), o);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const rt::GraphDesc& peeled = p->program.graphs[0];
  ASSERT_EQ(peeled.nodes.size(), 2u);
  EXPECT_EQ(peeled.nodes[0].info.op_type, "FusedMatMul");
  EXPECT_EQ(peeled.nodes[0].fused_nodes, (std::vector<std::string>{"tq", "tk", "mm"}));
  EXPECT_EQ(peeled.nodes[1].info.name, "add");
  const opt::FusionGroup& mm_group = p->plan.fusion.groups[static_cast<size_t>(
      p->plan.fusion.group_of[static_cast<size_t>(node_called(p->graph(), "mm"))])];
  ASSERT_EQ(mm_group.not_fused.size(), 1u);
  EXPECT_NE(mm_group.not_fused[0].find("runs with its operand Transposes only"), std::string::npos)
      << mm_group.not_fused[0];

  auto s = pipeline::compile(attention_scores(true), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_NE(candidate_of(*s, "tq"), candidate_of(*s, "mm"));
  EXPECT_EQ(candidate_of(*s, "tk"), candidate_of(*s, "mm"));
}

// x [s, 4] -> MatMul W -> Add b -> GELU as torch exports it (Div by sqrt 2, Erf, Add 1, Mul by
// the MatMul's sum, Mul 0.5; `multiply`: Mul by 1 / sqrt 2 first, constants before the data) -> y.
// `leak`: the Erf's result is also a graph output, which the fused kernel could not give.
Model matmul_gelu(bool multiply, bool leak = false) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"s", 4});
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i % 5) - 1.f;
  add_float_initializer(g, "W", {4, 3}, w);
  add_float_initializer(g, "b", {3}, {0.25f, -0.5f, 0});
  add_float_initializer(g, "k", {}, {multiply ? 0.707106769f : 1.41421354f});
  add_float_initializer(g, "one", {}, {1.f});
  add_float_initializer(g, "half", {}, {0.5f});
  add_node(g, "MatMul", {"x", "W"}, {"mm"}, "mm");
  add_node(g, "Add", {"mm", "b"}, {"t"}, "bias");
  if (multiply) {
    add_node(g, "Mul", {"k", "t"}, {"u"}, "scale");
  } else {
    add_node(g, "Div", {"t", "k"}, {"u"}, "scale");
  }
  add_node(g, "Erf", {"u"}, {"e"}, "erf");
  add_node(g, "Add", {"one", "e"}, {"p"}, "plus1");
  add_node(g, "Mul", {"t", "p"}, {"q"}, "times_x");
  add_node(g, "Mul", {"q", "half"}, {"y"}, "half");
  add_output(g, "y", {"s", 3});
  if (leak) add_output(g, "e", {"s", 3});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "matmul gelu");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

TEST(CompiledModel, AGeluAfterAMatMulRunsInItsEpilogueAsTheFiveOpsWould) {
  pipeline::CompileOptions o;
  o.rdp.ranges["s"] = {1, 64, 1};
  for (const bool multiply : {false, true}) {
    SCOPED_TRACE(multiply ? "Mul form" : "Div form");
    auto c = pipeline::compile(matmul_gelu(multiply), o);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    const rt::GraphDesc& main = c->program.graphs[0];
    ASSERT_EQ(main.nodes.size(), 1u);
    EXPECT_EQ(main.nodes[0].info.op_type, "FusedMatMul");
    EXPECT_EQ(main.nodes[0].fused_nodes,
              (std::vector<std::string>{"mm", "bias", "scale", "erf", "plus1", "times_x", "half"}));
    const Expected<std::string> act = main.nodes[0].info.attrs.get_string("activation", "");
    ASSERT_TRUE(act.ok());
    EXPECT_EQ(*act, "GeluErf");
    const auto& ts = c->plan.tensors.tensors;
    EXPECT_FALSE(std::any_of(ts.begin(), ts.end(), [](const auto& t) { return t.name == "e"; }));

    pipeline::CompileOptions unfused = o;
    unfused.fuse = false;
    auto u = pipeline::compile(matmul_gelu(multiply), unfused);
    ASSERT_TRUE(u.ok()) << u.status().to_string();
    // Sums from -6 to 6: erf's whole range, both signs.
    rt::HostTensor x(rt::DType::kFloat, rt::Shape{37, 4});
    for (int i = 0; i < 37 * 4; ++i) x.data<float>()[i] = 0.11f * static_cast<float>(i % 23) - 1.2f;
    const rt::Tensor in[] = {x.view()};
    auto a = rt::Session::create(c->program, rt::KernelRegistry::standard(), {2});
    auto b = rt::Session::create(u->program, rt::KernelRegistry::standard(), {2});
    ASSERT_TRUE(a.ok() && b.ok());
    auto got = (*a)->run(in);
    auto want = (*b)->run(in);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string();
    ASSERT_EQ((*got)[0].shape, (rt::Shape{37, 3}));
    // The same formula; the linalg library may contract a multiply-add the math one rounds
    // twice.
    for (int i = 0; i < 37 * 3; ++i)
      EXPECT_NEAR((*got)[0].as<float>()[i], (*want)[0].as<float>()[i], 1e-6f) << i;
  }

  // The Erf's result read outside: the GELU is no epilogue, the MatMul keeps its bias alone.
  auto l = pipeline::compile(matmul_gelu(false, true), o);
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  for (const rt::NodeDesc& n : l->program.graphs[0].nodes) {
    const Expected<std::string> act = n.info.attrs.get_string("activation", "");
    EXPECT_TRUE(!act.ok() || act->empty()) << n.info.name;
  }

  // Vulkan has no shader for it: the MatMul does not take it there.
  pipeline::CompileOptions vulkan = o;
  vulkan.target = pipeline::Target::kVulkan;
  auto v = pipeline::compile(matmul_gelu(false), vulkan);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  for (const rt::NodeDesc& n : v->program.graphs[0].nodes) {
    const Expected<std::string> act = n.info.attrs.get_string("activation", "");
    EXPECT_TRUE(!act.ok() || act->empty()) << n.info.name;
  }
}

// a [2, s, 4] x b [2, 4, s] -> MatMul -> Div by sqrt 8 -> Add mask [2, 1, s] -> Softmax over
// `axis` -> y: attention's scores, scaled and masked.
Model masked_scores(int64_t axis) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "a", {2, "s", 4});
  add_input(g, "b", {2, 4, "s"});
  add_input(g, "mask", {2, 1, "s"});
  add_float_initializer(g, "k", {}, {2.828427f});
  add_node(g, "MatMul", {"a", "b"}, {"scores"}, "mm");
  add_node(g, "Div", {"scores", "k"}, {"scaled"}, "scale");
  add_node(g, "Add", {"scaled", "mask"}, {"masked"}, "mask_add");
  auto* sm = add_node(g, "Softmax", {"masked"}, {"y"}, "softmax");
  testing::add_int_attr(sm, "axis", axis);
  add_output(g, "y", {2, "s", "s"});
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "masked scores");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

TEST(CompiledModel, AttentionsScaleAndMaskRunInsideItsSoftmaxAsTheOpsWould) {
  pipeline::CompileOptions o;
  o.rdp.ranges["s"] = {1, 64, 1};
  auto c = pipeline::compile(masked_scores(-1), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const rt::GraphDesc& main = c->program.graphs[0];
  ASSERT_EQ(main.nodes.size(), 2u);
  EXPECT_EQ(main.nodes[0].info.op_type, "MatMul");
  EXPECT_EQ(main.nodes[1].info.op_type, "FusedSoftmax");
  EXPECT_EQ(main.nodes[1].fused_nodes, (std::vector<std::string>{"scale", "mask_add", "softmax"}));
  const size_t grp = candidate_of(*c, "softmax");
  EXPECT_EQ(grp, candidate_of(*c, "scale"));
  EXPECT_EQ(c->candidates.groups[grp].kind, "normalization");
  EXPECT_EQ(c->decisions[grp].refusal, package::FusionRefusal::kNone);
  const auto& ts = c->plan.tensors.tensors;
  for (const char* inside : {"scaled", "masked"})
    EXPECT_FALSE(std::any_of(ts.begin(), ts.end(), [&](const auto& t) { return t.name == inside; }))
        << inside;

  pipeline::CompileOptions unfused = o;
  unfused.fuse = false;
  auto u = pipeline::compile(masked_scores(-1), unfused);
  ASSERT_TRUE(u.ok()) << u.status().to_string();
  const int64_t s = 37;
  rt::HostTensor a(rt::DType::kFloat, rt::Shape{2, s, 4}), b(rt::DType::kFloat, rt::Shape{2, 4, s});
  rt::HostTensor mask(rt::DType::kFloat, rt::Shape{2, 1, s});
  for (int64_t i = 0; i < 2 * s * 4; ++i) {
    a.data<float>()[i] = 0.3f * static_cast<float>(i % 11) - 1.5f;
    b.data<float>()[i] = 0.2f * static_cast<float>(i % 7) - 0.6f;
  }
  for (int64_t i = 0; i < 2 * s; ++i) mask.data<float>()[i] = i % 5 == 0 ? -1e4f : 0.f;
  const rt::Tensor in[] = {a.view(), b.view(), mask.view()};
  auto fused_session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {2});
  auto unfused_session = rt::Session::create(u->program, rt::KernelRegistry::standard(), {2});
  ASSERT_TRUE(fused_session.ok() && unfused_session.ok());
  auto got = (*fused_session)->run(in);
  auto want = (*unfused_session)->run(in);
  ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string();
  ASSERT_EQ((*got)[0].shape, (rt::Shape{2, s, s}));
  // The same kernels' arithmetic (one library): the same bits.
  for (int64_t i = 0; i < 2 * s * s; ++i)
    EXPECT_EQ((*got)[0].as<float>()[i], (*want)[0].as<float>()[i]) << i;

  // Over an axis whose rows are not contiguous, or on Vulkan (no kernel for it there), the
  // Softmax runs alone after the elementwise group.
  auto across = pipeline::compile(masked_scores(1), o);
  ASSERT_TRUE(across.ok()) << across.status().to_string();
  pipeline::CompileOptions vulkan = o;
  vulkan.target = pipeline::Target::kVulkan;
  auto v = pipeline::compile(masked_scores(-1), vulkan);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  for (const pipeline::CompiledModel* cm : {&*across, &*v}) {
    EXPECT_NE(candidate_of(*cm, "softmax"), candidate_of(*cm, "mask_add"));
    for (const rt::NodeDesc& n : cm->program.graphs[0].nodes)
      EXPECT_NE(n.info.op_type, "FusedSoftmax");
  }
}

}  // namespace
}  // namespace sod2
