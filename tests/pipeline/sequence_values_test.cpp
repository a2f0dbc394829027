// ONNX's sequence and optional values end to end: import (their element types), RDP, the plan
// (never in the arena), the program and its package, and the session (sequences shared, not
// copied, through Loop state and SequenceMap; a sequence never reaching a tensor kernel; the
// run's memory limit holding for a sequence that keeps growing).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/tensor/sequence.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_int_attr;
using testing::add_node;
using testing::add_output;

void set_sequence_type(onnx::ValueInfoProto* vi, int32_t elem) {
  vi->mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(elem);
}

void add_sequence_input(onnx::GraphProto* g, const std::string& name, int32_t elem) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_sequence_type(vi, elem);
}

void add_sequence_output(onnx::GraphProto* g, const std::string& name, int32_t elem) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_sequence_type(vi, elem);
}

void add_int64_initializer(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                           std::vector<int64_t> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
}

Expected<pipeline::CompiledModel> compile(const onnx::ModelProto& m,
                                          std::map<std::string, sym::SymbolRange> ranges = {}) {
  const auto bytes = testing::serialize(m);
  SOD2_ASSIGN_OR_RETURN(Model model, import_onnx_bytes(bytes, "", "sequence test"));
  pipeline::CompileOptions o;
  for (auto& [name, r] : ranges) o.rdp.ranges[name] = r;
  return pipeline::compile(std::move(model), o);
}

std::unique_ptr<rt::Session> session_of(const rt::ProgramDesc& p, rt::RunLimits limits = {}) {
  rt::SessionOptions o;
  o.threads = 1;
  o.limits = limits;
  auto s = rt::Session::create(p, rt::KernelRegistry::standard(), o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

rt::HostTensor floats(rt::Shape shape, float first) {
  rt::HostTensor h(rt::DType::kFloat, shape);
  for (int64_t i = 0; i < shape.numel(); ++i) h.data<float>()[i] = first + static_cast<float>(i);
  return h;
}

TEST(SequenceValues, SplitInsertEraseAndConcatComputeTheSpecsValues) {
  // x [4, 2] split into rows, [100, 101] inserted at the front, the last row erased, the rest
  // joined again along axis 0: [[100, 101], x0, x1, x2]; and the sequence's length, 4.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n", 2});
  add_float_initializer(g, "front", {1, 2}, {100, 101});
  add_int64_initializer(g, "zero", {}, {0});
  add_int64_initializer(g, "last", {}, {-1});
  add_node(g, "SplitToSequence", {"x"}, {"rows"}, "split");  // keepdims: rows are [1, 2]
  add_node(g, "SequenceInsert", {"rows", "front", "zero"}, {"inserted"}, "insert");
  add_node(g, "SequenceErase", {"inserted", "last"}, {"erased"}, "erase");
  add_int_attr(add_node(g, "ConcatFromSequence", {"erased"}, {"y"}, "concat"), "axis", 0);
  add_node(g, "SequenceLength", {"erased"}, {"len"}, "length");
  add_output(g, "y", {});
  add_output(g, "len", {}, onnx::TensorProto::INT64);
  auto c = compile(m, {{"n", {1, 16, 1}}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  // The sequences are never in the arena: their sizes are the elements'.
  for (const rt::ValueDesc& d : c->program.graphs[0].values) {
    if (d.name == "rows" || d.name == "inserted" || d.name == "erased") {
      EXPECT_EQ(d.type, rt::ValueType::kSequence) << d.name;
      EXPECT_EQ(d.storage, rt::ValueStorage::kHeap) << d.name;
      EXPECT_EQ(d.dtype, rt::DType::kFloat) << d.name;
      // What a package view shows for it.
      EXPECT_EQ(d.dims.rfind("sequence of", 0), 0u) << d.name << ": " << d.dims;
    }
  }
  auto s = session_of(c->program);
  ASSERT_TRUE(s);
  const rt::HostTensor x = floats({4, 2}, 0);
  const rt::Tensor in[] = {x.view()};
  auto out = s->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const rt::Tensor& y = (*out)[0];
  ASSERT_EQ(y.shape, (rt::Shape{4, 2}));
  const std::vector<float> want = {100, 101, 0, 1, 2, 3, 4, 5};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(y.as<float>()[i], want[i]) << i;
  EXPECT_EQ(*(*out)[1].as<int64_t>(), 4);
}

// Loop body: seq_out = SequenceInsert(seq_in, Unsqueeze(Cast(iter))) (a float [1] per step).
void add_counting_loop(onnx::GraphProto* g, const std::string& trips, const std::string& seq_in,
                       const std::string& seq_out) {
  auto* loop = add_node(g, "Loop", {trips, "", seq_in}, {seq_out}, "loop");
  auto* a = loop->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  add_input(body, "i", {}, onnx::TensorProto::INT64);
  add_input(body, "cond_in", {}, onnx::TensorProto::BOOL);
  auto* s = body->add_input();
  s->set_name("s_in");
  set_sequence_type(s, onnx::TensorProto::FLOAT);
  add_int64_initializer(body, "axes", {1}, {0});
  add_int_attr(add_node(body, "Cast", {"i"}, {"fi"}, "cast"), "to", onnx::TensorProto::FLOAT);
  add_node(body, "Unsqueeze", {"fi", "axes"}, {"item"}, "unsqueeze");
  add_node(body, "SequenceInsert", {"s_in", "item"}, {"s_out"}, "insert");
  add_node(body, "Identity", {"cond_in"}, {"cond_out"}, "cond");
  add_output(body, "cond_out", {}, onnx::TensorProto::BOOL);
  auto* so = body->add_output();
  so->set_name("s_out");
  set_sequence_type(so, onnx::TensorProto::FLOAT);
}

TEST(SequenceValues, ALoopCarriesASequenceItGrows) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "trips", {}, onnx::TensorProto::INT64);
  add_node(g, "SequenceEmpty", {}, {"empty"}, "empty");
  add_counting_loop(g, "trips", "empty", "grown");
  add_int_attr(add_node(g, "ConcatFromSequence", {"grown"}, {"y"}, "concat"), "axis", 0);
  add_output(g, "y", {});
  auto c = compile(m);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto s = session_of(c->program);
  ASSERT_TRUE(s);
  for (int64_t trips : {5, 2, 5}) {  // again and again: state and buffers are reused
    rt::HostTensor t(rt::DType::kInt64, rt::Shape{});
    *t.data<int64_t>() = trips;
    const rt::Tensor in[] = {t.view()};
    auto out = s->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ((*out)[0].shape, (rt::Shape{trips}));
    for (int64_t i = 0; i < trips; ++i) EXPECT_EQ((*out)[0].as<float>()[i], static_cast<float>(i));
  }
}

TEST(SequenceValues, ASequenceGrowingPastTheRunsMemoryLimitIsAnError) {
  // Each step inserts 4 bytes into a sequence that shares the earlier ones: the limit counts
  // the sequence's bytes, so 1,000 steps under a 2,000-byte limit stop with an error.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "trips", {}, onnx::TensorProto::INT64);
  add_node(g, "SequenceEmpty", {}, {"empty"}, "empty");
  add_counting_loop(g, "trips", "empty", "grown");
  add_node(g, "SequenceLength", {"grown"}, {"len"}, "length");
  add_output(g, "len", {}, onnx::TensorProto::INT64);
  auto c = compile(m);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  rt::RunLimits limits;
  limits.max_bytes = 2000;
  auto s = session_of(c->program, limits);
  ASSERT_TRUE(s);
  rt::HostTensor t(rt::DType::kInt64, rt::Shape{});
  *t.data<int64_t>() = 1000;
  const rt::Tensor in[] = {t.view()};
  auto out = s->run(in);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("RunLimits::max_bytes"), std::string::npos)
      << out.status().to_string();
  *t.data<int64_t>() = 10;
  auto ok = s->run(in);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*(*ok)[0].as<int64_t>(), 10);
}

TEST(SequenceValues, ASequenceOfMoreThanItsCapIsAnErrorBeforeItIsMade) {
  // Splitting 2^21 floats into one-element pieces would make 2 million elements of bookkeeping.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"n"});
  add_node(g, "SplitToSequence", {"x"}, {"pieces"}, "split");
  add_node(g, "SequenceLength", {"pieces"}, {"len"}, "length");
  add_output(g, "len", {}, onnx::TensorProto::INT64);
  auto c = compile(m, {{"n", {1, int64_t{1} << 22, 1}}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto s = session_of(c->program);
  ASSERT_TRUE(s);
  const rt::HostTensor small(rt::DType::kFloat, rt::Shape{3});
  const rt::Tensor few[] = {small.view()};
  auto ok = s->run(few);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(*(*ok)[0].as<int64_t>(), 3);
  const rt::HostTensor big(rt::DType::kFloat, rt::Shape{int64_t{1} << 21});
  const rt::Tensor many[] = {big.view()};
  auto refused = s->run(many);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("one sequence may hold"), std::string::npos)
      << refused.status().to_string();
}

TEST(SequenceValues, SequenceMapRunsItsBodyPerElementWithTensorsPassedWhole) {
  // y[i] = xs[i] + b, from a caller's sequence (not owned by a shared_ptr: the session copies
  // its element list to keep it), through a package written and loaded again.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_sequence_input(g, "xs", onnx::TensorProto::FLOAT);
  add_input(g, "b", {1});
  auto* map = add_node(g, "SequenceMap", {"xs", "b"}, {"ys"}, "map");
  auto* a = map->add_attribute();
  a->set_name("body");
  a->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = a->mutable_g();
  body->set_name("body");
  add_input(body, "x", {"k"});
  add_input(body, "bb", {1});
  add_node(body, "Add", {"x", "bb"}, {"y"}, "add");
  add_output(body, "y", {"k"});
  add_sequence_output(g, "ys", onnx::TensorProto::FLOAT);
  auto c = compile(m);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  ASSERT_EQ(c->program.inputs[0].type, rt::ValueType::kSequence);
  auto bytes = package::serialize_package(c->program);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto loaded = rt::load_package(*bytes, nullptr);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->inputs[0].type, rt::ValueType::kSequence);
  EXPECT_EQ(loaded->inputs[0].dtype, rt::DType::kFloat);
  const rt::GraphDesc& main = loaded->graphs[0];
  EXPECT_EQ(main.values[static_cast<size_t>(main.outputs[0])].type, rt::ValueType::kSequence);

  auto s = session_of(*loaded);
  ASSERT_TRUE(s);
  rt::Sequence xs(rt::DType::kFloat);  // on the stack, like an app's
  xs.push_back(std::make_shared<const rt::HostTensor>(floats({3}, 0)));
  xs.push_back(std::make_shared<const rt::HostTensor>(floats({1}, 10)));
  const rt::HostTensor b = floats({1}, 0.5f);
  rt::Tensor seq_in;
  seq_in.dtype = rt::DType::kFloat;
  seq_in.sequence = &xs;
  const rt::Tensor in[] = {seq_in, b.view()};
  auto out = s->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const rt::Sequence* ys = (*out)[0].sequence;
  ASSERT_NE(ys, nullptr);
  ASSERT_EQ(ys->size(), 2u);
  EXPECT_EQ(ys->at(0).shape(), (rt::Shape{3}));
  EXPECT_EQ(ys->at(0).data<float>()[2], 2.5f);
  EXPECT_EQ(ys->at(1).data<float>()[0], 10.5f);

  // A tensor where the model takes a sequence, and the reverse, are errors naming the input.
  const rt::Tensor wrong[] = {b.view(), b.view()};
  auto bad = s->run(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'xs' must be a sequence"), std::string::npos)
      << bad.status().to_string();
  const rt::Tensor reversed[] = {seq_in, seq_in};
  auto bad2 = s->run(reversed);
  ASSERT_FALSE(bad2.ok());
  EXPECT_NE(bad2.status().message().find("'b' must be a tensor"), std::string::npos)
      << bad2.status().to_string();
}

TEST(SequenceValues, OptionalsHoldAValueOrNothing) {
  // Optional() of nothing has no element; Optional(x) holds x, which OptionalGetElement gives
  // back.
  onnx::ModelProto m = testing::make_model(18);
  auto* g = m.mutable_graph();
  add_input(g, "x", {2});
  auto* none = add_node(g, "Optional", {}, {"none"}, "none");
  auto* type = none->add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  add_node(g, "OptionalHasElement", {"none"}, {"has_none"}, "has_none");
  add_node(g, "Optional", {"x"}, {"some"}, "some");
  add_node(g, "OptionalHasElement", {"some"}, {"has_some"}, "has_some");
  add_node(g, "OptionalGetElement", {"some"}, {"got"}, "get");
  add_output(g, "has_none", {}, onnx::TensorProto::BOOL);
  add_output(g, "has_some", {}, onnx::TensorProto::BOOL);
  add_output(g, "got", {2});
  auto c = compile(m);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto s = session_of(c->program);
  ASSERT_TRUE(s);
  const rt::HostTensor x = floats({2}, 7);
  const rt::Tensor in[] = {x.view()};
  auto out = s->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_FALSE(*(*out)[0].as<bool>());
  EXPECT_TRUE(*(*out)[1].as<bool>());
  EXPECT_EQ((*out)[2].as<float>()[1], 8.f);
}

TEST(SequenceValues, ASequenceNeverReachesAKernelThatReadsTensors) {
  // The file declares the Identity of a sequence to be a float tensor and feeds it to Relu:
  // the session refuses to hand the sequence to Relu, naming both.
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {2});
  add_node(g, "SequenceConstruct", {"x", "x"}, {"seq"}, "construct");
  add_node(g, "Identity", {"seq"}, {"lie"}, "identity");
  auto* vi = g->add_value_info();
  vi->set_name("lie");
  testing::set_tensor_type(vi, onnx::TensorProto::FLOAT, {2});
  add_node(g, "Relu", {"lie"}, {"y"}, "relu");
  add_output(g, "y", {2});
  auto c = compile(m);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto s = session_of(c->program);
  ASSERT_TRUE(s);
  const rt::HostTensor x = floats({2}, 1);
  const rt::Tensor in[] = {x.view()};
  auto out = s->run(in);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("is a sequence, but Relu takes tensors"), std::string::npos)
      << out.status().to_string();
}

}  // namespace
}  // namespace sod2
