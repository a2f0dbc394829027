// Programs a hostile package could describe (issue: nothing a package sends may crash, hang or
// exhaust the runtime): the session proves the dataflow and every instantiated layout sound,
// checks every size it computes, and stops runs at their limits or when cancelled. Each case was
// a crash, a silent corruption or a hang before these checks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/sym/shape_compiler.h"
#include "runtime/exec/session.h"
#include "test_programs.h"

namespace sod2::rt {
namespace {

using testing::chain_program;
using testing::node;
using testing::test_registry;
using testing::value;

std::string message_of(const Status& s) { return s.to_string(); }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Expected<std::span<const Tensor>> run_chain(Session& s, int n) {
  static HostTensor x;
  x = HostTensor(DType::kFloat, Shape{n});
  const Tensor in[] = {x.view()};
  return s.run(in);
}

rt::ShapeProgram plan_of(std::vector<sym::SymExpr> outs) {
  return *sym::compile_shape_program(outs, std::vector<sym::Symbol>{sym::symbol("n")});
}

TEST(UntrustedProgram, TensorsLiveAtOnceMayNotShareBytes) {
  // a (Double's output) is read by the node writing y: placing both at offset 0 would let the
  // second kernel overwrite what it reads.
  ProgramDesc p = chain_program();
  const sym::SymExpr n(sym::symbol("n"));
  const sym::SymExpr size = 64 * sym::floordiv(4 * n + 63, sym::SymExpr(64));
  p.plan_program = plan_of({size, size, sym::SymExpr(0), sym::SymExpr(0), size});
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run_chain(**s, 20);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidModel);
  EXPECT_TRUE(contains(message_of(out.status()), "unsound")) << message_of(out.status());
  EXPECT_TRUE(contains(message_of(out.status()), "share bytes while both are live"));
}

TEST(UntrustedProgram, APlanVersionIsCheckedLikeThePlan) {
  // The whole-range plan is sound; the version for n > 10 overlaps the two tensors.
  ProgramDesc p = chain_program();
  const sym::SymExpr n(sym::symbol("n"));
  const sym::SymExpr size = 64 * sym::floordiv(4 * n + 63, sym::SymExpr(64));
  p.plan_versions.push_back(plan_of({size, size, sym::SymExpr(0), sym::SymExpr(64), 2 * size}));
  p.plan_grid.symbols = {0};
  p.plan_grid.uppers = {{10, 100}};
  p.version_of_cell = {-1, 0};
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(run_chain(**s, 5).ok());
  auto bad = run_chain(**s, 50);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(contains(message_of(bad.status()), "unsound")) << message_of(bad.status());
  // The session stays usable at a binding whose layout is sound.
  EXPECT_TRUE(run_chain(**s, 5).ok());
}

TEST(UntrustedProgram, ANodeMayNotReadItsOwnOutput) {
  // Concat(a, a) -> a: the kernel would write over the input it reads.
  ProgramDesc p = chain_program();
  p.graphs[0].nodes[1].inputs = {2};
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel);
  EXPECT_TRUE(contains(message_of(s.status()), "before node 'Double_2' writes it"))
      << message_of(s.status());
}

TEST(UntrustedProgram, AValueIsWrittenOnceAndOnlyWhereTheExecutorPlacesIt) {
  {
    ProgramDesc p = chain_program();
    p.graphs[0].nodes[1].outputs = {1};  // a written twice
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(message_of(s.status()), "is written by node")) << message_of(s.status());
  }
  {
    ProgramDesc p = chain_program();
    p.graphs[0].nodes[1].outputs = {0};  // writes the caller's input
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(message_of(s.status()), "which is a graph input"))
        << message_of(s.status());
  }
  {
    ProgramDesc p = chain_program();
    p.graphs[0].values[2].arena_tensor = 0;  // a and y in one arena tensor
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(message_of(s.status()), "share arena tensor 0")) << message_of(s.status());
  }
  {
    ProgramDesc p = chain_program();
    p.graphs[0].nodes.pop_back();  // y is an output nobody writes
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(message_of(s.status()), "output 'y' is written by no node"))
        << message_of(s.status());
  }
}

// Identity as the real kernels do it: copies, unless the executor handed out the input's own
// bytes (a view, byte_views.h); counts the runs that copied nothing.
int g_views_in_place = 0;
class ForwardKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
    if (y->data == x->data) {
      ++g_views_in_place;
    } else {
      std::memcpy(y->data, x->data, x->bytes());
    }
    return Status::ok_status();
  }
};

// x[n] -> Double a (tensor 0) -> `op` v (tensor 0: a view when `op` is Identity) -> Double y
// (tensor 1). `y_offset` places y; a lives, through v, until y's step.
ProgramDesc view_program(const std::string& op, const sym::SymExpr& y_offset) {
  ProgramDesc p = chain_program();
  GraphDesc& g = p.graphs[0];
  g.values = {value("x", ValueStorage::kGraphInput), value("a", ValueStorage::kArena, 0),
              value("v", ValueStorage::kArena, 0), value("y", ValueStorage::kArena, 1)};
  g.outputs = {3};
  g.nodes = {node("Double", {0}, {1}), node(op, {1}, {2}), node("Double", {2}, {3})};
  const sym::SymExpr size = 64 * sym::floordiv(4 * sym::SymExpr(sym::symbol("n")) + 63, 64);
  p.plan_program = plan_of({size, size, sym::SymExpr(0), y_offset, size + y_offset});
  return p;
}

KernelRegistry view_registry() {
  KernelRegistry r = test_registry();
  r.add("", "Identity", 1, &testing::make<ForwardKernel>);
  r.add("", "Forward", 1, &testing::make<ForwardKernel>);
  r.add("", "Dropout", 1, &testing::make<ForwardKernel>);
  return r;
}

TEST(UntrustedProgram, AViewSharesItsInputsTensorAndNoOtherNodeMay) {
  const sym::SymExpr size = 64 * sym::floordiv(4 * sym::SymExpr(sym::symbol("n")) + 63, 64);
  {
    auto s = Session::create(view_program("Identity", size), view_registry(), {1});
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    HostTensor x(DType::kFloat, Shape{20});
    for (int i = 0; i < 20; ++i) x.view().as<float>()[i] = static_cast<float>(i);
    const Tensor in[] = {x.view()};
    g_views_in_place = 0;
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_EQ(g_views_in_place, 1);
    for (int i = 0; i < 20; ++i) EXPECT_EQ((*out)[0].as<float>()[i], 4.f * i);
  }
  {
    // The same kernel under another op name writes into a tensor that holds another value.
    auto s = Session::create(view_program("Forward", size), view_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel);
    EXPECT_TRUE(contains(message_of(s.status()),
                         "share arena tensor 0, and node 'Forward_2' is "
                         "not a view of 'a'"))
        << message_of(s.status());
  }
  {
    // A view of a value in another tensor is not that tensor's bytes.
    ProgramDesc p = view_program("Identity", size);
    p.graphs[0].nodes[1].inputs = {0};
    auto s = Session::create(std::move(p), view_registry(), {1});
    ASSERT_FALSE(s.ok());
    EXPECT_TRUE(contains(message_of(s.status()), "is not a view of 'a'")) << message_of(s.status());
  }
}

TEST(UntrustedProgram, ADropoutIsAViewOnlyWhereItsConstantsDropNothing) {
  // Dropout(a, ratio, training) as the view v: the constants decide, not the package's claim.
  auto dropout = [](float ratio, bool training) {
    const sym::SymExpr size = 64 * sym::floordiv(4 * sym::SymExpr(sym::symbol("n")) + 63, 64);
    ProgramDesc p = view_program("Dropout", size);
    GraphDesc& g = p.graphs[0];
    HostTensor r(DType::kFloat, Shape{}), t(DType::kBool, Shape{});
    *r.data<float>() = ratio;
    *t.data<uint8_t>() = training ? 1 : 0;
    p.constants.push_back(std::move(r));
    p.constants.push_back(std::move(t));
    g.values.push_back(value("ratio", ValueStorage::kConstant));
    g.values.back().constant = 0;
    g.values.push_back(value("training", ValueStorage::kConstant));
    g.values.back().constant = 1;
    g.values.back().dtype = DType::kBool;
    g.nodes[1].inputs = {1, 4, 5};
    return Session::create(std::move(p), view_registry(), {1});
  };
  EXPECT_TRUE(dropout(0.f, true).ok());
  EXPECT_TRUE(dropout(0.5f, false).ok());
  auto s = dropout(0.5f, true);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(contains(message_of(s.status()), "is not a view of 'a'")) << message_of(s.status());
}

TEST(UntrustedProgram, AViewsReadersKeepItsTensorLive) {
  // y at offset 0 would overwrite a while Double reads it through its view v.
  auto s = Session::create(view_program("Identity", sym::SymExpr(0)), view_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run_chain(**s, 20);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(contains(message_of(out.status()), "share bytes while both are live"))
      << message_of(out.status());
}

// Every way a package could store view_program's three values (arena tensor -1 to 2, or the
// heap), name its middle op, and place y: the session refuses it, or its run refuses it, or the
// run gives x * 4. Never a wrong answer or a crash.
TEST(UntrustedProgram, EveryStorageOfAViewChainIsRefusedOrRight) {
  const sym::SymExpr size = 64 * sym::floordiv(4 * sym::SymExpr(sym::symbol("n")) + 63, 64);
  HostTensor x(DType::kFloat, Shape{20});
  for (int i = 0; i < 20; ++i) x.view().as<float>()[i] = static_cast<float>(i);
  const Tensor in[] = {x.view()};
  int ran = 0, refused = 0;
  for (const char* op : {"Identity", "Forward"}) {
    for (const sym::SymExpr& y_offset : {sym::SymExpr(0), size}) {
      for (int code = 0; code < 125; ++code) {  // per value: heap, or arena tensor -1, 0, 1, 2
        ProgramDesc p = view_program(op, y_offset);
        std::vector<ValueDesc>& values = p.graphs[0].values;
        for (int v = 1, c = code; v <= 3; ++v, c /= 5) {
          values[static_cast<size_t>(v)].storage =
              c % 5 == 4 ? ValueStorage::kHeap : ValueStorage::kArena;
          values[static_cast<size_t>(v)].arena_tensor = c % 5 == 4 ? -1 : c % 5 - 1;
        }
        auto s = Session::create(std::move(p), view_registry(), {1});
        if (!s.ok()) {
          ++refused;
          continue;
        }
        auto out = (*s)->run(in);
        if (!out.ok()) {
          ++refused;
          continue;
        }
        ++ran;
        for (int i = 0; i < 20; ++i)
          ASSERT_EQ((*out)[0].as<float>()[i], 4.f * static_cast<float>(i))
              << op << ", storage code " << code;
      }
    }
  }
  EXPECT_GT(ran, 0);
  EXPECT_GT(refused, 0);
}

TEST(UntrustedProgram, ScanStateThatIsNeverProducedIsAnError) {
  // s = Silent(x) declares an output it never writes; Scan(s, x) used to copy from null.
  ProgramDesc p;
  p.inputs = {{"x", DType::kFloat, 1}};
  p.input_dims.push_back({0, 0, 4, -1});
  GraphDesc main;
  main.values = {value("x", ValueStorage::kGraphInput), value("s", ValueStorage::kHeap),
                 value("final", ValueStorage::kHeap)};
  main.inputs = {0};
  main.outputs = {2};
  NodeDesc scan = node("Scan", {1, 0}, {2});
  AttrValue m;
  m.kind = AttrValue::Kind::kInt;
  m.i = 1;
  scan.info.attrs.set("num_scan_inputs", m);
  scan.subgraphs = {1};
  main.nodes = {node("Silent", {0}, {1}), scan};
  GraphDesc body;
  body.name = "body";
  body.values = {value("st", ValueStorage::kGraphInput), value("xi", ValueStorage::kGraphInput),
                 value("st2", ValueStorage::kHeap)};
  body.inputs = {0, 1};
  body.outputs = {2};
  body.nodes = {node("Inc", {0}, {2})};
  p.graphs = {main, body};
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor x(DType::kFloat, Shape{4});
  const Tensor in[] = {x.view()};
  auto out = (*s)->run(in);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(contains(message_of(out.status()), "state input 0 was never produced"))
      << message_of(out.status());
}

// main: dims (int64 [k], an input) -> If(c) { then: Shaped(dims) } -> out. The output's shape
// comes from data inside a body, where the plan does not size it.
ProgramDesc shaped_in_body_program() {
  ProgramDesc p;
  p.inputs = {{"c", DType::kBool, 0}, {"dims", DType::kInt64, 1}};
  GraphDesc main;
  main.values = {value("c", ValueStorage::kGraphInput), value("dims", ValueStorage::kGraphInput),
                 value("out", ValueStorage::kHeap)};
  main.values[0].dtype = DType::kBool;
  main.values[1].dtype = DType::kInt64;
  main.inputs = {0, 1};
  main.outputs = {2};
  NodeDesc iff = node("If", {0}, {2});
  iff.subgraphs = {1, 2};
  main.nodes = {iff};
  auto branch = [](const char* name) {
    GraphDesc b;
    b.name = name;
    b.values = {value("dims", ValueStorage::kOuterScope), value("r", ValueStorage::kHeap)};
    b.values[0].dtype = DType::kInt64;
    b.values[0].outer_value = 1;
    b.outputs = {1};
    b.nodes = {node("Shaped", {0}, {1})};
    return b;
  };
  p.graphs = {main, branch("then"), branch("else")};
  return p;
}

Expected<std::span<const Tensor>> run_shaped(Session& s, std::vector<int64_t> dims) {
  static HostTensor c, d;
  c = HostTensor(DType::kBool, Shape{});
  *c.data<bool>() = true;
  d = HostTensor(DType::kInt64, Shape{static_cast<int64_t>(dims.size())});
  for (size_t i = 0; i < dims.size(); ++i) d.data<int64_t>()[i] = dims[i];
  const Tensor in[] = {c.view(), d.view()};
  return s.run(in);
}

TEST(UntrustedProgram, SizesThatOverflowAreErrorsNotWildWrites) {
  // Resize's sizes [3, 6148914691236517206]: 3 * that * 4 bytes wraps to a small number.
  auto s = Session::create(shaped_in_body_program(), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run_shaped(**s, {3, 6148914691236517206});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted) << message_of(out.status());
  EXPECT_TRUE(contains(message_of(out.status()), "overflows")) << message_of(out.status());
  auto negative = run_shaped(**s, {4, -2});
  ASSERT_FALSE(negative.ok());
  EXPECT_TRUE(contains(message_of(negative.status()), "negative dim"));
  auto fine = run_shaped(**s, {3, 5});
  ASSERT_TRUE(fine.ok()) << fine.status().to_string();
  EXPECT_EQ((*fine)[0].shape, (Shape{3, 5}));
}

TEST(UntrustedProgram, AHugeOutputStopsAtTheMemoryLimitBeforeAllocating) {
  // Range(0, 2^40, 1) as a float tensor: 4 TiB asked for; the run ends at the limit.
  SessionOptions o;
  o.threads = 1;
  o.limits.max_bytes = 64 << 20;
  auto s = Session::create(shaped_in_body_program(), test_registry(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run_shaped(**s, {int64_t{1} << 40});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(message_of(out.status()), "RunLimits::max_bytes") ||
              contains(message_of(out.status()), "limit of 67108864 bytes"))
      << message_of(out.status());
  // Under the default limit (half the machine's memory) too.
  auto d = Session::create(shaped_in_body_program(), test_registry(), {1});
  ASSERT_TRUE(d.ok());
  auto big = run_shaped(**d, {int64_t{1} << 40, 8});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted) << message_of(big.status());
  EXPECT_TRUE(run_shaped(**d, {16, 16}).ok());
}

TEST(UntrustedProgram, AnArenaAboveTheMemoryLimitIsRefused) {
  SessionOptions o;
  o.threads = 1;
  o.limits.max_bytes = 200;
  auto s = Session::create(chain_program(), test_registry(), o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(run_chain(**s, 5).ok());  // two tensors of 64 bytes
  auto big = run_chain(**s, 20);        // two of 128: 256 bytes
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(message_of(big.status()), "an arena of 256 bytes"))
      << message_of(big.status());
}

// Loop(M absent, cond=true, v=x) whose body keeps cond true: it never ends by itself.
ProgramDesc endless_loop_program() {
  ProgramDesc p;
  p.inputs = {{"x", DType::kFloat, 1}};
  p.input_dims.push_back({0, 0, 4, -1});
  GraphDesc main;
  main.values = {value("x", ValueStorage::kGraphInput), value("m", ValueStorage::kGraphInput),
                 value("t", ValueStorage::kConstant), value("loop", ValueStorage::kHeap)};
  main.values[2].dtype = DType::kBool;
  main.values[2].constant = 0;
  main.inputs = {0};
  main.outputs = {3};
  NodeDesc loop = node("Loop", {-1, 2, 0}, {3});
  loop.subgraphs = {1};
  main.nodes = {loop};
  const GraphDesc body = testing::inc_loop_body();
  p.graphs = {main, body};
  HostTensor t(DType::kBool, Shape{});
  *t.data<bool>() = true;
  p.constants = {t};
  return p;
}

Expected<std::span<const Tensor>> run_endless(Session& s, const std::atomic<bool>* cancel) {
  static HostTensor x;
  x = HostTensor(DType::kFloat, Shape{4});
  const Tensor in[] = {x.view()};
  return s.run(in, cancel);
}

TEST(UntrustedProgram, ALoopThatNeverEndsStopsAtTheIterationLimit) {
  SessionOptions o;
  o.threads = 1;
  o.limits.max_loop_iterations = 1000;
  auto s = Session::create(endless_loop_program(), test_registry(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = run_endless(**s, nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(contains(message_of(out.status()), "more than 1000 iterations"))
      << message_of(out.status());
}

TEST(UntrustedProgram, ARunStopsWhenCancelledOrPastItsTime) {
  SessionOptions o;
  o.threads = 1;
  o.limits.max_loop_iterations = int64_t{1} << 60;
  {
    auto s = Session::create(endless_loop_program(), test_registry(), o);
    ASSERT_TRUE(s.ok());
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      cancel = true;
    });
    const auto t0 = std::chrono::steady_clock::now();
    auto out = run_endless(**s, &cancel);
    canceller.join();
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kCancelled) << message_of(out.status());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  }
  {
    o.limits.max_run_ms = 50;
    auto s = Session::create(endless_loop_program(), test_registry(), o);
    ASSERT_TRUE(s.ok());
    auto out = run_endless(**s, nullptr);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.status().code(), StatusCode::kResourceExhausted);
    EXPECT_TRUE(contains(message_of(out.status()), "limit of 50 ms")) << message_of(out.status());
  }
}

TEST(UntrustedProgram, ThreadsAreCappedPerCore) {
  SessionOptions o;
  o.threads = 1000000;
  auto s = Session::create(chain_program(), test_registry(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(message_of(s.status()), "per core")) << message_of(s.status());
}

TEST(UntrustedProgram, AWrittenTensorMayNotMoveWhenAnExecutionSymbolBinds) {
  // x -> Double a -> Positives p[k] -> Double y. a's offset depends on k: 0 until k is bound,
  // then above p, so p would land on a's bytes.
  // a at 2*pk - 128 (0 while k <= 16, where pk = 64), p above a, y above p.
  ProgramDesc p = testing::positives_program([](const sym::SymExpr& a, const sym::SymExpr& pk) {
    const sym::SymExpr a_at = 2 * pk - 128;
    return std::vector<sym::SymExpr>{a_at, a_at + a, a_at + a + pk, a_at + a + 2 * pk};
  });
  auto s = Session::create(std::move(p), test_registry(), {1});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  HostTensor x(DType::kFloat, Shape{500});
  for (int i = 0; i < 500; ++i) x.data<float>()[i] = 1.f;  // k = 500: a moves to 1888
  const Tensor in[] = {x.view()};
  auto out = (*s)->run(in);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(contains(message_of(out.status()), "moves 'a', already written"))
      << message_of(out.status());
}

// x[n] -> Double a -> Double b -> Positives p[k] -> Double y[k] (k an execution symbol bound at
// step 2, y the output): lifetimes a [0,1], b [1,2], p [2,3], y [3,3]. `plan(A, pk)` gives the
// sizes, offsets and arena size from a's bytes A and p's pk (64-byte aligned).
template <typename Plan>
ProgramDesc two_doubles_then_positives(Plan plan) {
  ProgramDesc p;
  p.symbols.push_back({"n", false, 1, 1000, 1});
  p.symbols.push_back({"k", true, 0, 1000, 1});
  p.inputs.push_back({"x", DType::kFloat, 1});
  p.input_dims.push_back({0, 0, -1, 0});
  GraphDesc g;
  g.values = {value("x", ValueStorage::kGraphInput), value("a", ValueStorage::kArena, 0),
              value("b", ValueStorage::kArena, 1), value("p", ValueStorage::kArena, 2),
              value("y", ValueStorage::kArena, 3)};
  g.values[3].exec_dims.push_back({0, 1});
  g.inputs = {0};
  g.outputs = {4};
  g.nodes = {node("Double", {0}, {1}), node("Double", {1}, {2}), node("Positives", {2}, {3}),
             node("Double", {3}, {4})};
  p.graphs.push_back(std::move(g));
  const sym::SymExpr n(sym::symbol("n")), k(sym::symbol("k"));
  auto al = [](const sym::SymExpr& bytes) {
    return 64 * sym::floordiv(bytes + 63, sym::SymExpr(64));
  };
  p.plan_program = *sym::compile_shape_program(
      plan(al(4 * n), al(4 * k)), std::vector<sym::Symbol>{sym::symbol("n"), sym::symbol("k")});
  p.num_arena_tensors = 4;
  return p;
}

// When an execution symbol binds, the layout is proved again for the tensors still live: a
// layout whose tensors live from then on share bytes is refused, while bytes only tensors dead
// by then reach are theirs to give (the steps that used them have run).
TEST(UntrustedProgram, ALayoutIsProvedAgainForTheTensorsLiveWhenAnExecutionSymbolBinds) {
  HostTensor x(DType::kFloat, Shape{500});
  for (int i = 0; i < 500; ++i) x.data<float>()[i] = 1.f;  // k = 500, A = pk = 2048
  const Tensor in[] = {x.view()};
  // a's planned size grows with k (A + pk - 64: A while k is unbound, 1) into b, which a's
  // reader wrote: a is dead by step 2, so the run goes on, and y is right.
  {
    ProgramDesc p = two_doubles_then_positives([](const sym::SymExpr& a, const sym::SymExpr& pk) {
      return std::vector<sym::SymExpr>{a + pk - 64,     a, pk,    pk,          // sizes
                                       sym::SymExpr(0), a, 2 * a, 2 * a + pk,  // offsets
                                       2 * a + 3 * pk};                        // arena
    });
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto out = (*s)->run(in);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 1u);
    ASSERT_EQ((*out)[0].numel(), 500);
    for (int i = 0; i < 500; ++i) ASSERT_EQ((*out)[0].as<float>()[i], 8.f) << i;
  }
  // p at b's offset once k is bound: b (read at step 2) and p (written at step 2) share bytes.
  {
    ProgramDesc p = two_doubles_then_positives([](const sym::SymExpr& a, const sym::SymExpr& pk) {
      // 2a while k is unbound (1), a at k = 500 (pk = 2048).
      const sym::SymExpr p_at = 2 * a - sym::floordiv(pk, sym::SymExpr(2048)) * a;
      return std::vector<sym::SymExpr>{a, a,    pk,        pk,           sym::SymExpr(0),
                                       a, p_at, p_at + pk, p_at + 2 * pk};
    });
    auto s = Session::create(std::move(p), test_registry(), {1});
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto out = (*s)->run(in);
    ASSERT_FALSE(out.ok());
    EXPECT_TRUE(contains(message_of(out.status()), "share bytes while both are live"))
        << message_of(out.status());
  }
}

}  // namespace
}  // namespace sod2::rt
