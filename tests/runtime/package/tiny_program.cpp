#include "tiny_program.h"

#include <cstring>

namespace sod2::testing {
namespace {

using rt::DType;
using rt::ShapeInstruction;
using rt::ShapeOp;
using rt::ValueStorage;

rt::ValueDesc value(const char* name, DType dtype, ValueStorage storage, int32_t index = -1) {
  rt::ValueDesc v;
  v.name = name;
  v.dtype = dtype;
  v.storage = storage;
  if (storage == ValueStorage::kConstant) v.constant = index;
  if (storage == ValueStorage::kArena) v.arena_tensor = index;
  if (storage == ValueStorage::kOuterScope) v.outer_value = index;
  return v;
}

rt::NodeDesc node(const char* name, const char* op, std::vector<int32_t> in,
                  std::vector<int32_t> out) {
  rt::NodeDesc n;
  n.info.name = name;
  n.info.op_type = op;
  n.info.opset = 17;
  for (int32_t v : in) {
    n.info.input_present.push_back(v >= 0);
    n.info.input_dtypes.push_back(v >= 0 ? DType::kFloat : DType::kUndefined);
  }
  for (size_t i = 0; i < out.size(); ++i) n.info.output_dtypes.push_back(DType::kFloat);
  n.info.num_outputs = out.size();
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

rt::AttrValue attr(rt::AttrValue::Kind kind) {
  rt::AttrValue a;
  a.kind = kind;
  return a;
}

rt::ShapeProgram program(std::vector<ShapeInstruction> code, size_t in, size_t out, size_t regs) {
  auto p = rt::ShapeProgram::from_instructions(std::move(code), in, out, regs);
  return p.ok() ? std::move(*p) : rt::ShapeProgram();
}

}  // namespace

rt::ProgramDesc tiny_program() {
  rt::ProgramDesc p;
  p.symbols = {{"N", false, 1, 64, 1}, {"E", true, 0, 64, 1}};
  p.inputs = {{"x", DType::kFloat, 2}};
  p.input_dims = {{0, 0, 1, -1}, {0, 1, -1, 0}};  // x: [1, N]

  rt::HostTensor w(DType::kFloat, rt::Shape{4});
  for (int i = 0; i < 4; ++i) w.data<float>()[i] = static_cast<float>(i + 1);
  rt::HostTensor cond(DType::kBool, rt::Shape{});
  *cond.data<bool>() = true;
  rt::HostTensor ids(DType::kInt64, rt::Shape{2, 3});
  for (int i = 0; i < 6; ++i) ids.data<int64_t>()[i] = 10 * i;
  p.constants = {w, cond, ids};

  rt::GraphDesc main;
  main.name = "main";
  main.values = {value("x", DType::kFloat, ValueStorage::kGraphInput),
                 value("w", DType::kFloat, ValueStorage::kConstant, 0),
                 value("y", DType::kFloat, ValueStorage::kArena, 0),
                 value("cond", DType::kBool, ValueStorage::kConstant, 1),
                 value("z", DType::kFloat, ValueStorage::kArena, 1),
                 value("ids", DType::kInt64, ValueStorage::kConstant, 2)};
  main.values[2].exec_dims = {{1, 1}};
  main.values[2].dims = "[1,NonZero_0.out0.d1]";
  main.inputs = {0};
  main.outputs = {4};
  rt::NodeDesc add = node("add", "Add", {0, 1, -1}, {2});
  using K = rt::AttrValue::Kind;
  rt::AttrValue a = attr(K::kInt);
  a.i = -7;
  add.info.attrs.set("an_int", a);
  a = attr(K::kFloat);
  a.f = 0.25f;
  add.info.attrs.set("a_float", a);
  a = attr(K::kString);
  a.s = std::string("with\0nul", 8);
  add.info.attrs.set("a_string", a);
  a = attr(K::kInts);
  a.ints = {1, -2, INT64_MAX};
  add.info.attrs.set("ints", a);
  a = attr(K::kFloats);
  a.floats = {1.5f, -0.0f};
  add.info.attrs.set("floats", a);
  a = attr(K::kStrings);
  a.strings = {"a", "", "ccc"};
  add.info.attrs.set("strings", a);
  a = attr(K::kTensor);
  a.tensor = rt::HostTensor(DType::kInt32, rt::Shape{3});
  for (int i = 0; i < 3; ++i) a.tensor.data<int32_t>()[i] = i - 1;
  add.info.attrs.set("small_tensor", a);  // inline in the manifest
  a = attr(K::kTensor);
  a.tensor = rt::HostTensor(DType::kFloat, rt::Shape{16, 16});
  for (int i = 0; i < 256; ++i) a.tensor.data<float>()[i] = static_cast<float>(i) * 0.5f;
  add.info.attrs.set("big_tensor", a);  // in the blob
  main.nodes.push_back(add);
  rt::NodeDesc iff = node("branch", "If", {3}, {4});
  iff.info.input_dtypes = {DType::kBool};
  iff.subgraphs = {1, 2};
  a = attr(K::kGraph);
  a.graph = 1;
  iff.info.attrs.set("then_branch", a);
  a.graph = 2;
  iff.info.attrs.set("else_branch", a);
  main.nodes.push_back(iff);

  rt::GraphDesc then_g;
  then_g.name = "then";
  then_g.values = {value("y", DType::kFloat, ValueStorage::kOuterScope, 2),
                   value("t", DType::kFloat, ValueStorage::kHeap)};
  then_g.outputs = {1};
  then_g.nodes.push_back(node("neg", "Neg", {0}, {1}));
  rt::GraphDesc else_g;
  else_g.name = "else";
  else_g.values = {value("x", DType::kFloat, ValueStorage::kOuterScope, 0),
                   value("e", DType::kFloat, ValueStorage::kHeap)};
  else_g.outputs = {1};
  else_g.nodes.push_back(node("copy", "Identity", {0}, {1}));
  p.graphs = {main, then_g, else_g};

  // Sizes N*4 and N*4, offsets 0 and N*4, arena N*8.
  p.plan_program = program({{ShapeOp::kLoadInput, 0, 0, 0, 0},
                            {ShapeOp::kMulImm, 1, 0, 0, 4},
                            {ShapeOp::kStore, 0, 1, 0, 0},
                            {ShapeOp::kStore, 1, 1, 0, 0},
                            {ShapeOp::kLoadImm, 2, 0, 0, 0},
                            {ShapeOp::kStore, 2, 2, 0, 0},
                            {ShapeOp::kStore, 3, 1, 0, 0},
                            {ShapeOp::kMulImm, 3, 1, 0, 2},
                            {ShapeOp::kStore, 4, 3, 0, 0}},
                           2, 5, 4);
  p.num_arena_tensors = 2;
  p.assumption_program = program({{ShapeOp::kLoadInput, 0, 0, 0, 0},
                                  {ShapeOp::kStore, 0, 0, 0, 0},
                                  {ShapeOp::kStore, 1, 0, 0, 0}},
                                 2, 2, 1);
  p.assumptions = {{"N == N", "add"}};
  // E <= N (a NonZero over [1, N]); N's own output is its upper end. y waits for E from step 0.
  p.execution_bounds = program({{ShapeOp::kLoadImm, 0, 0, 0, 64},
                                {ShapeOp::kLoadInput, 1, 0, 0, 0},
                                {ShapeOp::kStore, 0, 0, 0, 0},
                                {ShapeOp::kStore, 1, 1, 0, 0}},
                               2, 2, 2);
  p.arena_known_steps = {0, 0};
  // The Add does N operations; the If is left uncounted (-1).
  p.step_work = program({{ShapeOp::kLoadInput, 0, 0, 0, 0},
                         {ShapeOp::kLoadImm, 1, 0, 0, -1},
                         {ShapeOp::kStore, 0, 0, 0, 0},
                         {ShapeOp::kStore, 1, 1, 0, 0}},
                        2, 2, 2);
  // One plan version, for N above 8: the two tensors swapped (offsets N*4 and 0).
  p.plan_grid.symbols = {0};
  p.plan_grid.uppers = {{8, 64}};
  p.version_of_cell = {-1, 0};
  p.plan_versions.push_back(program({{ShapeOp::kLoadInput, 0, 0, 0, 0},
                                     {ShapeOp::kMulImm, 1, 0, 0, 4},
                                     {ShapeOp::kStore, 0, 1, 0, 0},
                                     {ShapeOp::kStore, 1, 1, 0, 0},
                                     {ShapeOp::kLoadImm, 2, 0, 0, 0},
                                     {ShapeOp::kStore, 2, 1, 0, 0},
                                     {ShapeOp::kStore, 3, 2, 0, 0},
                                     {ShapeOp::kMulImm, 3, 1, 0, 2},
                                     {ShapeOp::kStore, 4, 3, 0, 0}},
                                    2, 5, 4));
  return p;
}

}  // namespace sod2::testing
