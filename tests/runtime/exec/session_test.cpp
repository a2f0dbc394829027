// The session on hand-built programs with test kernels, so it is checked apart from the real
// kernel families: inputs bind symbols and are validated, tensors land at the planned offsets,
// an execution symbol bound mid-run grows the arena without losing earlier tensors, If/Loop run
// their bodies, and the steady state allocates nothing.
#include <gtest/gtest.h>

#include <cstring>

#include "../../common/allocation_counter.h"
#include "core/sym/shape_compiler.h"
#include "runtime/exec/session.h"
#include "test_programs.h"

namespace sod2::rt {
namespace {

using testing::chain_program;
using testing::node;
using testing::test_registry;
using testing::value;

TEST(Session, RunsInThePlannedArenaAndAllocatesNothingOnceWarm) {
  auto s = Session::create(chain_program(), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor x(DType::kFloat, Shape{20});
  for (int i = 0; i < 20; ++i) x.data<float>()[i] = static_cast<float>(i);
  const Tensor in[] = {x.view()};
  auto out = (*s)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].shape, (Shape{20}));
  EXPECT_FLOAT_EQ((*out)[0].as<float>()[7], 28.f);
  EXPECT_EQ((*s)->arena_bytes(), 256);  // two tensors of 80 bytes, aligned to 128
  const int64_t before = g_allocations.load();
  for (int r = 0; r < 10; ++r) ASSERT_TRUE((*s)->run(in).ok());
  EXPECT_EQ(g_allocations.load(), before);
}

// The chain with a plan version for n > 10 that swaps its two tensors (y at 0, a above it) and
// leaves `unused` bytes between them.
ProgramDesc chain_with_version(int64_t unused) {
  ProgramDesc p = chain_program();
  const sym::SymExpr n(sym::symbol("n"));
  const sym::SymExpr size = 64 * sym::floordiv(4 * n + 63, sym::SymExpr(64));
  std::vector<sym::SymExpr> outs{size, size, size + unused, sym::SymExpr(0), 2 * size + unused};
  p.plan_versions.push_back(
      *sym::compile_shape_program(outs, std::vector<sym::Symbol>{sym::symbol("n")}));
  p.plan_grid.symbols = {0};
  p.plan_grid.uppers = {{10, 100}};
  p.version_of_cell = {-1, 0};
  return p;
}

TEST(Session, PicksThePlanVersionOfTheBindingsCell) {
  // Version 0 (for n > 10) swaps the two tensors (y at 0, a above it).
  ProgramDesc p = chain_with_version(0);
  {
    ProgramDesc bad = p;
    bad.version_of_cell = {-1, 3};
    auto s = Session::create(std::move(bad), test_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("names version 3"), std::string::npos);
  }
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (int len : {5, 20, 7}) {
    HostTensor x(DType::kFloat, Shape{len});
    for (int i = 0; i < len; ++i) x.data<float>()[i] = static_cast<float>(i);
    const Tensor in[] = {x.view()};
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ((*s)->plan_version(), len > 10 ? 0 : -1);
    EXPECT_FLOAT_EQ((*out)[0].as<float>()[len - 1], 4.f * (len - 1));
    const int64_t bytes = (4 * len + 63) / 64 * 64;
    EXPECT_EQ((*s)->arena_bytes(), 2 * bytes);
    EXPECT_EQ((*s)->plan_values()[2], len > 10 ? bytes : 0);  // a's offset
  }
}

TEST(Session, RunsGreedyBySizeWhereTheVersionWastesBytes) {
  // Version 0 (for n > 10) leaves 64 bytes unused: at those sizes greedy by size needs less, and
  // with every size known before the first step the session runs that instead.
  ProgramDesc p = chain_with_version(64);
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  for (int len : {20, 5, 30}) {
    HostTensor x(DType::kFloat, Shape{len});
    for (int i = 0; i < len; ++i) x.data<float>()[i] = static_cast<float>(i);
    const Tensor in[] = {x.view()};
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_FLOAT_EQ((*out)[0].as<float>()[len - 1], 4.f * (len - 1));
    const int64_t bytes = (4 * len + 63) / 64 * 64;
    EXPECT_EQ((*s)->plan_version(), len > 10 ? plan::kBindingGreedyVersion : -1);
    EXPECT_EQ((*s)->arena_bytes(), 2 * bytes);
    EXPECT_EQ((*s)->plan_values().back(), 2 * bytes);
    // Runs at the binding seen last reuse its layout: no planning, no allocation.
    const int64_t before = g_allocations.load();
    for (int r = 0; r < 3; ++r) ASSERT_TRUE((*s)->run(in).ok());
    EXPECT_EQ(g_allocations.load(), before) << "n=" << len;
  }
}

TEST(Session, RejectsInputsThatDoNotFit) {
  auto s = Session::create(chain_program(), test_registry(), {1});
  ASSERT_TRUE(s.ok());
  HostTensor big(DType::kFloat, Shape{101}), wrong_rank(DType::kFloat, Shape{2, 2});
  HostTensor ints(DType::kInt64, Shape{4});
  const Tensor a[] = {big.view()};
  auto r = (*s)->run(a);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("outside the declared range 1:100"), std::string::npos)
      << r.status().message();
  const Tensor b[] = {wrong_rank.view()};
  EXPECT_NE((*s)->run(b).status().message().find("must have rank 1"), std::string::npos);
  const Tensor c[] = {ints.view()};
  EXPECT_NE((*s)->run(c).status().message().find("must be float32"), std::string::npos);
  EXPECT_FALSE((*s)->run({}).ok());
}

TEST(Session, AnExecutionSymbolBoundMidRunGrowsTheArenaAndKeepsEarlierTensors) {
  // x[n] -> Double a (segment 0, offset 0) -> Positives p[k] (above a) -> Double y[k];
  // y reads p, a stays live to the end as a graph output too.
  ProgramDesc p = testing::positives_program([](const sym::SymExpr& a, const sym::SymExpr& pk) {
    return std::vector<sym::SymExpr>{sym::SymExpr(0), a, a + pk, a + 2 * pk};
  });
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor x(DType::kFloat, Shape{500});
  for (int i = 0; i < 500; ++i) x.data<float>()[i] = (i % 3 == 0) ? 1.f + i : -1.f;
  const Tensor in[] = {x.view()};
  auto out = (*s)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const int64_t count = 167;  // i % 3 == 0 for i < 500
  EXPECT_EQ((*out)[1].shape, (Shape{count}));
  for (int64_t j = 0; j < count; ++j) ASSERT_FLOAT_EQ((*out)[1].as<float>()[j], 4.f * (1 + 3 * j));
  for (int i = 0; i < 500; ++i) ASSERT_FLOAT_EQ((*out)[0].as<float>()[i], 2 * x.data<float>()[i]);
  EXPECT_EQ((*s)->arena_bytes(), 2048 + 2 * 704);
}

// A branch that applies `op` to the outer x.
GraphDesc one_op_branch(const char* op) {
  GraphDesc b;
  b.name = op;
  b.values = {value("x", ValueStorage::kOuterScope), value("r", ValueStorage::kHeap)};
  b.values[0].outer_value = 1;
  b.outputs = {1};
  b.nodes = {node(op, {0}, {1})};
  return b;
}

// out = If(c, then_branch, else_branch); loop = Loop(M=3, cond=true, v=x) with body v + 1.
// Graphs: 1 then, 2 else, 3 the loop's body.
ProgramDesc if_and_loop_program(GraphDesc then_branch, GraphDesc else_branch) {
  ProgramDesc p;
  p.inputs = {{"c", DType::kBool, 0}, {"x", DType::kFloat, 1}};
  p.input_dims.push_back({1, 0, 4, -1});
  GraphDesc main;
  main.values = {value("c", ValueStorage::kGraphInput), value("x", ValueStorage::kGraphInput),
                 value("out", ValueStorage::kHeap),     value("m", ValueStorage::kConstant),
                 value("t", ValueStorage::kConstant),   value("loop", ValueStorage::kHeap)};
  main.values[0].dtype = DType::kBool;
  main.values[3].dtype = DType::kInt64;
  main.values[3].constant = 0;
  main.values[4].dtype = DType::kBool;
  main.values[4].constant = 1;
  main.inputs = {0, 1};
  main.outputs = {2, 5};
  NodeDesc iff = node("If", {0}, {2});
  iff.subgraphs = {1, 2};
  NodeDesc loop = node("Loop", {3, 4, 1}, {5});
  loop.subgraphs = {3};
  main.nodes = {iff, loop};
  p.graphs = {main, std::move(then_branch), std::move(else_branch), testing::inc_loop_body()};
  HostTensor m(DType::kInt64, Shape{}), t(DType::kBool, Shape{});
  *m.data<int64_t>() = 3;
  *t.data<bool>() = true;
  p.constants = {m, t};
  return p;
}

TEST(Session, RunsIfAndLoopBodies) {
  // out = If(c, then: Inc(x), else: Double(x)); loop body v+1.
  auto s = Session::create(if_and_loop_program(one_op_branch("Inc"), one_op_branch("Double")),
                           test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor c(DType::kBool, Shape{}), x(DType::kFloat, Shape{4});
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i);
  for (bool cond : {true, false}) {
    *c.data<bool>() = cond;
    const Tensor in[] = {c.view(), x.view()};
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_FLOAT_EQ((*out)[0].as<float>()[3], cond ? 4.f : 6.f);
    EXPECT_FLOAT_EQ((*out)[1].as<float>()[3], 6.f);  // 3 + 1 + 1 + 1
  }
}

// then: x -> Double -> Double -> Inc, else: Inc(x).
ProgramDesc if_and_loop_program() {
  GraphDesc then_branch;
  then_branch.name = "then";
  then_branch.values = {value("x", ValueStorage::kOuterScope), value("a", ValueStorage::kHeap),
                        value("b", ValueStorage::kHeap), value("r", ValueStorage::kHeap)};
  then_branch.values[0].outer_value = 1;
  then_branch.outputs = {3};
  then_branch.nodes = {node("Double", {0}, {1}), node("Double", {1}, {2}), node("Inc", {2}, {3})};
  GraphDesc else_branch = one_op_branch("Inc");
  else_branch.name = "else";
  return if_and_loop_program(std::move(then_branch), std::move(else_branch));
}

TEST(Session, ProfilingTimesEveryBodyNodeWithinItsParentAndCountsItsCalls) {
  SessionOptions options;
  options.threads = 1;
  options.profile = true;
  auto s = Session::create(if_and_loop_program(), test_registry(), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor c(DType::kBool, Shape{}), x(DType::kFloat, Shape{4});
  *c.data<bool>() = true;
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i);
  const Tensor in[] = {c.view(), x.view()};
  for (int r = 0; r < 2; ++r) ASSERT_TRUE((*s)->run(in).ok());
  const NodeTimes& t = (*s)->node_times();
  EXPECT_EQ(t.runs, 2);
  ASSERT_EQ(t.body_calls.size(), 4u);
  EXPECT_TRUE(t.body_calls[0].empty());  // the main graph's times are total_ms
  EXPECT_EQ(t.body_calls[1], (std::vector<int64_t>{2, 2, 2}));  // once per run
  EXPECT_EQ(t.body_calls[2], (std::vector<int64_t>{0}));        // the branch not taken
  EXPECT_EQ(t.body_calls[3], (std::vector<int64_t>{6}));        // three iterations per run
  // A control-flow node's time still includes its bodies', so theirs fit inside it.
  double then_ms = 0;
  for (double ms : t.body_total_ms[1]) {
    EXPECT_GT(ms, 0);
    then_ms += ms;
  }
  EXPECT_LE(then_ms, t.total_ms[0]);
  EXPECT_EQ(t.body_total_ms[2][0], 0);
  EXPECT_GT(t.body_total_ms[3][0], 0);
  EXPECT_LE(t.body_total_ms[3][0], t.total_ms[1]);

  (*s)->reset_node_times();
  EXPECT_EQ((*s)->node_times().body_calls[1], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ((*s)->node_times().body_total_ms[3][0], 0);
  *c.data<bool>() = false;
  ASSERT_TRUE((*s)->run(in).ok());
  EXPECT_EQ((*s)->node_times().body_calls[1], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ((*s)->node_times().body_calls[2], (std::vector<int64_t>{1}));
}

TEST(Session, WithoutProfilingNoBodyNodeIsTimed) {
  auto s = Session::create(if_and_loop_program(), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor c(DType::kBool, Shape{}), x(DType::kFloat, Shape{4});
  *c.data<bool>() = true;
  const Tensor in[] = {c.view(), x.view()};
  ASSERT_TRUE((*s)->run(in).ok());
  const NodeTimes& t = (*s)->node_times();
  EXPECT_EQ(t.runs, 0);
  EXPECT_EQ(t.body_calls[1], (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(t.body_calls[3], (std::vector<int64_t>{0}));
}

TEST(Session, BodyValuesReuseTheValueBufferAndAllocateNothingOnceWarm) {
  // out = If(c, then: x -> Double -> Double -> Double -> Double -> Double, else: Inc(x)).
  // Five body values of 4000 bytes each, but at most two are live at once (plus the If's own
  // output, which this program leaves to the value buffer too): the buffer needs three.
  ProgramDesc p;
  p.inputs = {{"c", DType::kBool, 0}, {"x", DType::kFloat, 1}};
  p.input_dims.push_back({1, 0, 1000, -1});
  GraphDesc main;
  main.values = {value("c", ValueStorage::kGraphInput), value("x", ValueStorage::kGraphInput),
                 value("out", ValueStorage::kHeap)};
  main.values[0].dtype = DType::kBool;
  main.inputs = {0, 1};
  main.outputs = {2};
  NodeDesc iff = node("If", {0}, {2});
  iff.subgraphs = {1, 2};
  main.nodes = {iff};
  GraphDesc chain;
  chain.name = "chain";
  chain.values = {value("x", ValueStorage::kOuterScope)};
  chain.values[0].outer_value = 1;
  for (int i = 1; i <= 5; ++i) {
    chain.values.push_back(value("a" + std::to_string(i), ValueStorage::kHeap));
    chain.nodes.push_back(node("Double", {i - 1}, {i}));
  }
  chain.outputs = {5};
  GraphDesc inc;
  inc.name = "inc";
  inc.values = {value("x", ValueStorage::kOuterScope), value("r", ValueStorage::kHeap)};
  inc.values[0].outer_value = 1;
  inc.outputs = {1};
  inc.nodes = {node("Inc", {0}, {1})};
  p.graphs = {main, chain, inc};
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor c(DType::kBool, Shape{}), x(DType::kFloat, Shape{1000});
  for (int i = 0; i < 1000; ++i) x.data<float>()[i] = static_cast<float>(i);
  *c.data<bool>() = true;
  const Tensor in[] = {c.view(), x.view()};
  for (int r = 0; r < 2; ++r) {  // the first run sizes the buffer, the second runs inside it
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_FLOAT_EQ((*out)[0].as<float>()[3], 3.f * 32);
    EXPECT_FLOAT_EQ((*out)[0].as<float>()[999], 999.f * 32);
  }
  EXPECT_GT((*s)->value_buffer_capacity(), 0u);
  EXPECT_LE((*s)->value_buffer_capacity(), 3u * 4032);
  const int64_t before = g_allocations.load();
  for (int r = 0; r < 5; ++r) {
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok());
    ASSERT_FLOAT_EQ((*out)[0].as<float>()[999], 999.f * 32);
  }
  EXPECT_EQ(g_allocations.load(), before);
  // The other branch still runs inside the same buffer.
  *c.data<bool>() = false;
  auto out = (*s)->run(in);
  ASSERT_TRUE(out.ok());
  EXPECT_FLOAT_EQ((*out)[0].as<float>()[999], 1000.f);
}

// The scratch buffer is a std::vector, not 64-aligned: a block that fits from the end of what was
// handed out may not fit from the next aligned address. A small request sized the buffer, then a
// request just under its size overflowed it by up to 48 bytes (found by the libonnx-testdata
// case test_logsoftmax_axis_1_expanded: ReduceSum then ReduceMax). Fresh sessions vary the
// buffer's address; ASan reports the overflow.
TEST(Session, KernelScratchAlwaysFitsItsBufferWhateverItsAlignment) {
  for (int n = 1; n <= 48; ++n) {
    ProgramDesc p = chain_program();
    p.graphs[0].nodes[0].info.op_type = "ScratchSmall";
    p.graphs[0].nodes[1].info.op_type = "ScratchLarge";
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    HostTensor x(DType::kFloat, Shape{n});
    for (int i = 0; i < n; ++i) x.data<float>()[i] = static_cast<float>(i);
    const Tensor in[] = {x.view()};
    for (int r = 0; r < 2; ++r) {
      auto out = (*s)->run(in);
      ASSERT_TRUE(out.ok()) << out.status().to_string();
      EXPECT_FLOAT_EQ((*out)[0].as<float>()[n - 1], 4.f * static_cast<float>(n - 1));
    }
  }
}

TEST(Session, AMissingKernelIsAnErrorNamingTheNode) {
  ProgramDesc p = chain_program();
  p.graphs[0].nodes[1].info.op_type = "Frobnicate";
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no CPU kernel for Frobnicate"), std::string::npos)
      << s.status().message();
}

// Records what Kernel::prepare was handed: which input slots held constants, and their values.
struct PrepareLog {
  int calls = 0;
  std::vector<bool> constant_slots;
  float constant_value = 0.f;
};
PrepareLog prepare_log;

class PreparedKernel : public Kernel {
 public:
  Status prepare(std::span<const Tensor* const> constants) override {
    ++prepare_log.calls;
    prepare_log.constant_slots.clear();
    for (const Tensor* t : constants) prepare_log.constant_slots.push_back(t != nullptr);
    if (constants.size() > 1 && constants[1] && constants[1]->dtype == DType::kFloat)
      prepare_log.constant_value = constants[1]->as<float>()[0];
    return Status::ok_status();
  }
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
    for (int64_t i = 0; i < x->numel(); ++i) y->as<float>()[i] = x->as<float>()[i] * 2;
    return Status::ok_status();
  }
};

// A session of `p` with the test kernels and "Prepared", the log emptied first.
Expected<std::unique_ptr<Session>> create_logging_prepare(ProgramDesc p) {
  KernelRegistry r = test_registry();
  r.add("", "Prepared", 1, &testing::make<PreparedKernel>);
  prepare_log = {};
  return Session::create(std::move(p), r, {1});
}

TEST(Session, KernelsArePreparedAtLoadWithTheConstantsAmongTheirInputs) {
  ProgramDesc p = chain_program();
  GraphDesc& g = p.graphs[0];
  g.values.push_back(value("w", ValueStorage::kConstant));
  g.values.back().constant = 0;
  HostTensor w(DType::kFloat, Shape{1});
  *w.data<float>() = 2.5f;
  p.constants = {w};
  g.nodes[0].info.op_type = "Prepared";
  g.nodes[0].inputs = {0, 3};
  auto s = create_logging_prepare(std::move(p));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // Once, before any run: the graph input's slot is empty, the constant's holds its value.
  EXPECT_EQ(prepare_log.calls, 1);
  EXPECT_EQ(prepare_log.constant_slots, (std::vector<bool>{false, true}));
  EXPECT_EQ(prepare_log.constant_value, 2.5f);
}

TEST(Session, ABodyReadingItsEnclosingGraphsConstantIsHandedTheConstant) {
  // The Loop body's node reads main's constant `t` through an outer-scope reference: it is the
  // same tensor every run, so the kernel may derive data from it at load.
  GraphDesc body = testing::inc_loop_body();
  body.values.push_back(value("t_outer", ValueStorage::kOuterScope));
  body.values.back().outer_value = 4;
  body.values.back().dtype = DType::kBool;
  body.nodes[0].info.op_type = "Prepared";
  body.nodes[0].inputs = {2, 4};
  ProgramDesc p = if_and_loop_program(one_op_branch("Inc"), one_op_branch("Double"));
  p.graphs[3] = std::move(body);
  auto s = create_logging_prepare(std::move(p));
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(prepare_log.calls, 1);
  EXPECT_EQ(prepare_log.constant_slots, (std::vector<bool>{false, true}));
}

}  // namespace
}  // namespace sod2::rt
