// The work of a compiled model (core/opt/model_work.h) and the counts its program carries per
// step (rt::ProgramDesc::step_work): per node as the op defines it, per fused step as its nodes'
// sum, and at a run's sizes as the session bound them.
#include <gtest/gtest.h>

#include <algorithm>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/program/step_work.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_node;
using testing::add_output;

Model import(const onnx::ModelProto& m) {
  const auto bytes = testing::serialize(m);
  auto model = import_onnx_bytes(bytes, "", "work model");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// x[n, 2, h, w] -> Conv 1x1 (2 -> 4, bias) -> Relu -> y: Conv does 2 * numel(y) * 2, Relu numel(y).
pipeline::CompiledModel compile_conv_relu() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n", 2, "h", "w"});
  add_float_initializer(g, "W", {4, 2, 1, 1}, {1, 0, 0, 1, 1, 1, 0.5f, -1});
  add_float_initializer(g, "B", {4}, {0, 0, 0, 0});
  add_node(g, "Conv", {"x", "W", "B"}, {"c"}, "conv");
  add_node(g, "Relu", {"c"}, {"y"}, "relu");
  add_output(g, "y", {"n", 4, "h", "w"});
  pipeline::CompileOptions o;
  for (const char* s : {"n", "h", "w"}) o.rdp.ranges[s] = {1, 16, 1};
  auto c = pipeline::compile(import(m), o);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return std::move(*c);
}

sym::Binding bind(const pipeline::CompiledModel& c, std::map<std::string, int64_t> values) {
  auto b = make_binding(c.rdp, values);
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  return *b;
}

TEST(ModelWork, CountsEachNodeAsItsOpDefinesIt) {
  const pipeline::CompiledModel c = compile_conv_relu();
  ASSERT_TRUE(c.work.complete());
  EXPECT_FALSE(c.work.involves_execution);
  const sym::Binding b = bind(c, {{"n", 2}, {"h", 3}, {"w", 5}});
  const int64_t out = 2 * 4 * 3 * 5;
  EXPECT_EQ(opt::ops_at(*c.work.node_ops[0], b), 2 * out * 2);
  EXPECT_EQ(opt::ops_at(*c.work.node_ops[1], b), out);
  EXPECT_EQ(opt::ops_at(c.work.total_ops, b), 5 * out);
}

TEST(ModelWork, AFusedStepCarriesItsNodesSumAndARunReportsItAtItsSizes) {
  const pipeline::CompiledModel c = compile_conv_relu();
  // The CPU fuses Conv + Relu: one step, the sum of both.
  ASSERT_EQ(c.program.graphs[0].nodes.size(), 1u);
  ASSERT_EQ(c.program.step_work.num_outputs(), 1u);
  auto s = rt::Session::create(c.program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{2, 2, 3, 5});
  std::fill(x.data<float>(), x.data<float>() + 60, 1.0f);
  const rt::Tensor view = x.view();
  ASSERT_TRUE((*s)->run(std::span<const rt::Tensor>(&view, 1)).ok());
  std::vector<int64_t> values;
  for (size_t k = 0; k < c.program.symbols.size(); ++k) values.push_back((*s)->symbol_value(k));
  auto work = plan::step_work_at(c.program, values);
  ASSERT_TRUE(work.ok()) << work.status().to_string();
  EXPECT_EQ(work->total, 5 * 2 * 4 * 3 * 5);
  EXPECT_TRUE(work->complete());
  EXPECT_FALSE(work->at_most);
}

TEST(ModelWork, TheCountsSurviveThePackage) {
  const pipeline::CompiledModel c = compile_conv_relu();
  auto bytes = package::serialize_package(c.program);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(*bytes));
  auto loaded = rt::load_package(*owned, owned);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  std::vector<int64_t> values(loaded->symbols.size());
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string& name = loaded->symbols[k].name;
    values[k] = name == "n" ? 1 : name == "h" ? 2 : 7;
  }
  auto work = plan::step_work_at(*loaded, values);
  ASSERT_TRUE(work.ok()) << work.status().to_string();
  EXPECT_EQ(work->total, 5 * 1 * 4 * 2 * 7);
}

// x[n] -> Greater(0) -> NonZero -> idx[1, k]; x gathered at idx -> Exp -> y[1, k]: the Exp's
// count is k, an execution symbol, bounded by n.
pipeline::CompiledModel compile_nonzero_model() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n"});
  add_float_initializer(g, "zero", {1}, {0});
  add_node(g, "Greater", {"x", "zero"}, {"mask"}, "greater");
  add_node(g, "NonZero", {"mask"}, {"idx"}, "nonzero");
  add_node(g, "Gather", {"x", "idx"}, {"picked"}, "gather");
  add_node(g, "Exp", {"picked"}, {"y"}, "exp");
  add_output(g, "y", {});
  pipeline::CompileOptions o;
  o.rdp.ranges["n"] = {1, 64, 1};
  auto c = pipeline::compile(import(m), o);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return std::move(*c);
}

TEST(ModelWork, ADataDependentCountIsExactAfterARunAndAtMostItsBoundBefore) {
  const pipeline::CompiledModel c = compile_nonzero_model();
  EXPECT_TRUE(c.work.involves_execution);
  auto s = rt::Session::create(c.program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{6});
  const float v[] = {1, -2, 0.5f, -1, 3, -4};  // 3 positive
  std::copy(v, v + 6, x.data<float>());
  const rt::Tensor view = x.view();
  ASSERT_TRUE((*s)->run(std::span<const rt::Tensor>(&view, 1)).ok());
  std::vector<int64_t> values;
  std::vector<char> bound;
  for (size_t k = 0; k < c.program.symbols.size(); ++k) {
    values.push_back((*s)->symbol_value(k));
    bound.push_back((*s)->symbol_bound(k) ? 1 : 0);
  }
  auto exact = plan::step_work_at(c.program, values, bound);
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();
  EXPECT_FALSE(exact->at_most);
  // Greater: 6, NonZero and Gather: 0, Exp: 3.
  EXPECT_EQ(exact->total, 6 + 3);
  // Before a run only the input size is known: the Exp is counted at its bound, n.
  std::fill(bound.begin(), bound.end(), 0);
  for (size_t k = 0; k < bound.size(); ++k) bound[k] = c.program.symbols[k].execution ? 0 : 1;
  auto before = plan::step_work_at(c.program, values, bound);
  ASSERT_TRUE(before.ok()) << before.status().to_string();
  EXPECT_TRUE(before->at_most);
  EXPECT_EQ(before->total, 6 + 6);
  // Only the steps whose count reads the execution symbol are bounds: the Exp, not the Greater.
  const auto& steps = c.program.graphs[0].nodes;
  ASSERT_EQ(before->bound.size(), steps.size());
  EXPECT_EQ(exact->bound, std::vector<char>(steps.size(), 0));
  for (size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE(steps[i].info.name);
    const bool reads_k = steps[i].info.op_type == "Exp";
    EXPECT_EQ(before->bound[i] != 0, reads_k && before->ops[i] > 0);
  }
}

onnx::TensorProto* add_scalar(onnx::GraphProto* g, const std::string& name, int32_t type,
                              int64_t v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  if (type == onnx::TensorProto::BOOL)
    t->add_int32_data(static_cast<int32_t>(v));
  else
    t->add_int64_data(v);
  return t;
}

// How a Loop's condition is given (ONNX Loop: M and cond inputs, the body's condition output).
enum class LoopCond {
  kAbsent,         // Loop(M, ""): a `for` loop, the body's condition ignored
  kTrueAndPassed,  // cond = true, the body passes its condition input on (Identity)
  kTrueAndTrue,    // cond = true, the body's condition output a Constant true
  kTrueComputed,   // cond = true, the body computes its condition (i < 1): may end early
  kInputComputed,  // cond a graph input: may not even start
};

// x[n] -> Loop(M = 3, cond) { v -> Relu -> v } -> y[n]: its body counts n per iteration.
pipeline::CompiledModel compile_loop(LoopCond how) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n"});
  add_scalar(g, "M", onnx::TensorProto::INT64, 3);
  std::string cond = "";
  if (how == LoopCond::kInputComputed) {
    add_input(g, "go", {}, onnx::TensorProto::BOOL);
    cond = "go";
  } else if (how != LoopCond::kAbsent) {
    add_scalar(g, "yes", onnx::TensorProto::BOOL, 1);
    cond = "yes";
  }
  auto* loop = add_node(g, "Loop", {"M", cond, "x"}, {"y"}, "the_loop");
  auto* attr = loop->add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  body->set_name("body");
  add_input(body, "i", {}, onnx::TensorProto::INT64);
  add_input(body, "cond_in", {}, onnx::TensorProto::BOOL);
  add_input(body, "v", {"n"});
  add_node(body, "Relu", {"v"}, {"v_out"}, "relu");
  switch (how) {
    case LoopCond::kTrueAndTrue: {
      auto* c = add_node(body, "Constant", {}, {"cond_out"}, "always");
      auto* value = c->add_attribute();
      value->set_name("value");
      value->set_type(onnx::AttributeProto::TENSOR);
      value->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
      value->mutable_t()->add_int32_data(1);
      break;
    }
    case LoopCond::kTrueComputed:
      add_scalar(body, "one", onnx::TensorProto::INT64, 1);
      add_node(body, "Less", {"i", "one"}, {"cond_out"}, "less");
      break;
    default: add_node(body, "Identity", {"cond_in"}, {"cond_out"}, "pass"); break;
  }
  add_output(body, "cond_out", {}, onnx::TensorProto::BOOL);
  add_output(body, "v_out", {"n"});
  add_output(g, "y", {"n"});
  pipeline::CompileOptions o;
  o.rdp.ranges["n"] = {1, 64, 1};
  auto c = pipeline::compile(import(m), o);
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return std::move(*c);
}

// A Loop is counted at its trip count times its body. That is what it does when nothing can end
// it sooner, and only the most it does when its condition can: then no GOP/s may be made of it.
TEST(ModelWork, ALoopThatCanEndEarlyIsCountedAsABound) {
  const struct {
    LoopCond how;
    bool bound;
    const char* what;
  } cases[] = {{LoopCond::kAbsent, false, "for loop"},
               {LoopCond::kTrueAndPassed, false, "condition passed on"},
               {LoopCond::kTrueAndTrue, false, "constant true condition"},
               {LoopCond::kTrueComputed, true, "computed condition"},
               {LoopCond::kInputComputed, true, "condition input"}};
  for (const auto& k : cases) {
    SCOPED_TRACE(k.what);
    const pipeline::CompiledModel c = compile_loop(k.how);
    const auto& steps = c.program.graphs[0].nodes;
    const auto loop = std::find_if(steps.begin(), steps.end(),
                                   [](const rt::NodeDesc& n) { return n.info.op_type == "Loop"; });
    ASSERT_NE(loop, steps.end());
    const auto at = static_cast<size_t>(loop - steps.begin());
    EXPECT_EQ(plan::node_count_is_bound(c.program, 0, *loop), k.bound);
    std::vector<int64_t> values(c.program.symbols.size(), 4);
    auto work = plan::step_work_at(c.program, values);
    ASSERT_TRUE(work.ok()) << work.status().to_string();
    ASSERT_EQ(work->bound.size(), steps.size());
    EXPECT_EQ(work->bound[at] != 0, k.bound);
    // Counted at its trip count where the condition input is a constant true or absent: three
    // Relus of n = 4, and the Less of the computed condition.
    if (k.how != LoopCond::kInputComputed)
      EXPECT_EQ(work->ops[at], 3 * (4 + (k.how == LoopCond::kTrueComputed ? 1 : 0)));
  }
}

// lstm_greedy's decoder is a Loop with a constant-true condition whose body computes the next
// one (greedy decoding stops at EOS) and holds Ifs: a bound wherever it is counted.
TEST(ModelWork, TheGreedyDecodersLoopIsABound) {
  auto model = import_onnx_file(std::string(SOD2_SHARED_DIR) + "/models/lstm_greedy/model.onnx");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  pipeline::CompileOptions o;
  o.rdp.ranges["src_len"] = {1, 64, 1};
  auto c = pipeline::compile(std::move(*model), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const auto& steps = c->program.graphs[0].nodes;
  size_t loops = 0;
  for (const rt::NodeDesc& n : steps) {
    if (n.info.op_type != "Loop") continue;
    ++loops;
    EXPECT_TRUE(plan::node_count_is_bound(c->program, 0, n)) << n.info.name;
  }
  EXPECT_EQ(loops, 1u);
  std::vector<int64_t> values(c->program.symbols.size(), 12);
  std::vector<char> bound(values.size(), 1);
  for (size_t k = 0; k < bound.size(); ++k) bound[k] = !c->program.symbols[k].execution;
  auto work = plan::step_work_at(c->program, values, bound);
  ASSERT_TRUE(work.ok()) << work.status().to_string();
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].info.op_type == "Loop") EXPECT_TRUE(work->bound[i]) << steps[i].info.name;
}

TEST(ModelWork, AnOpOfAnotherDomainIsLeftOutAndNamed) {
  onnx::ModelProto m = testing::make_model(17);
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n"});
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Mystery", {"r"}, {"y"}, "mystery")->set_domain("com.example");
  add_output(g, "y", {});
  pipeline::CompileOptions o;
  o.rdp.ranges["n"] = {1, 64, 1};
  o.plan = false;
  auto c = pipeline::compile(import(m), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(c->work.uncounted.size(), 1u);
  EXPECT_NE(c->work.uncounted[0].find("mystery (Mystery): an op of domain 'com.example'"),
            std::string::npos)
      << c->work.uncounted[0];
  // The Relu still counts.
  EXPECT_EQ(opt::ops_at(c->work.total_ops, bind(*c, {{"n", 7}})), 7);
}

TEST(ModelWork, StepWorkRefusesTheWrongNumberOfValues) {
  const pipeline::CompiledModel c = compile_conv_relu();
  EXPECT_FALSE(plan::step_work_at(c.program, std::vector<int64_t>{1}).ok());
  rt::ProgramDesc without = c.program;
  without.step_work = rt::ShapeProgram();
  const auto st = plan::step_work_at(without, std::vector<int64_t>(c.program.symbols.size(), 1));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.status().message().find("carries no operation counts"), std::string::npos);
}

}  // namespace
}  // namespace sod2
