// ShapeProgram: golden listing, results, errors, validation of serialised programs, no heap
// allocation in run(), and speed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/sym/evaluate.h"
#include "core/sym/shape_compiler.h"
#include "tests/sym/test_util.h"

// Counts global allocations while armed. Replacing the global operator new affects the whole
// test binary, which is harmless: it only counts, and only while a test arms it.
namespace {
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocations{0};
}  // namespace

// GCC 12 cannot see that these replace the matching operator new and warns about free().
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace sod2::sym {
namespace {

using rt::ShapeInstruction;
using rt::ShapeOp;
using rt::ShapeProgram;
using testing::P;

TEST(ShapeProgram, GoldenListingSharesSubexpressions) {
  Symbol h = symbol("h"), w = symbol("w");
  std::vector<SymExpr> outs = {P("floordiv(h+1,2)"), P("2*floordiv(h+1,2)+w"), P("h*w"),
                               P("min(h,w,64)")};
  const Symbol inputs[] = {h, w};
  auto prog = sym::compile_shape_program(outs, inputs);
  ASSERT_TRUE(prog.ok()) << prog.status().to_string();
  EXPECT_EQ(prog->to_string(),
            "inputs 2, outputs 4, registers 10\n"
            "r0 = in0\n"
            "r1 = add_imm r0, 1\n"
            "r2 = 2\n"
            "r3 = floordiv r1, r2\n"
            "out0 = r3\n"
            "r4 = in1\n"
            "r5 = mul_add_imm r4, r3, 2\n"
            "out1 = r5\n"
            "r6 = mul r0, r4\n"
            "out2 = r6\n"
            "r7 = min r0, r4\n"
            "r8 = 64\n"
            "r9 = min r7, r8\n"
            "out3 = r9\n");
  std::vector<int64_t> out(4), scratch(prog->scratch_size());
  const int64_t in[] = {9, 70};
  ASSERT_TRUE(prog->run(in, out, scratch).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{5, 80, 630, 9}));
}

TEST(ShapeProgram, CompileErrors) {
  const Symbol inputs[] = {symbol("h")};
  const SymExpr unknown[] = {P("h+w")};
  auto r = sym::compile_shape_program(unknown, inputs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("'w'"), std::string::npos);
  const SymExpr poison[] = {SymExpr(INT64_MAX) + 1};
  EXPECT_FALSE(sym::compile_shape_program(poison, inputs).ok());
}

TEST(ShapeProgram, RunErrors) {
  const Symbol inputs[] = {symbol("a"), symbol("n")};
  const SymExpr outs[] = {P("floordiv(a,n)"), P("a*a")};
  auto prog = sym::compile_shape_program(outs, inputs);
  ASSERT_TRUE(prog.ok());
  std::vector<int64_t> out(2), scratch(prog->scratch_size());
  const int64_t zero[] = {5, 0};
  Status st = prog->run(zero, out, scratch);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("division by zero"), std::string::npos) << st.message();
  const int64_t big[] = {int64_t{1} << 32, 1};
  st = prog->run(big, out, scratch);
  EXPECT_NE(st.message().find("overflow"), std::string::npos) << st.message();
  const int64_t ok_in[] = {7, 2};
  std::vector<int64_t> small_scratch(1);
  EXPECT_FALSE(prog->run(ok_in, out, small_scratch).ok());
  std::vector<int64_t> short_out(1);
  EXPECT_FALSE(prog->run(ok_in, short_out, scratch).ok());
  EXPECT_TRUE(prog->run(ok_in, out, scratch).ok());
  EXPECT_EQ(out, (std::vector<int64_t>{3, 49}));
}

TEST(ShapeProgram, SerialisedFormIsValidatedBeforeItRuns) {
  const Symbol inputs[] = {symbol("a")};
  const SymExpr outs[] = {P("3*a+1")};
  auto prog = sym::compile_shape_program(outs, inputs);
  ASSERT_TRUE(prog.ok());
  std::vector<ShapeInstruction> code(prog->instructions().begin(), prog->instructions().end());
  auto copy = ShapeProgram::from_instructions(code, 1, 1, prog->scratch_size());
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ(copy->to_string(), prog->to_string());

  auto broken = [&](auto mutate) {
    auto c = code;
    mutate(c);
    return ShapeProgram::from_instructions(c, 1, 1, prog->scratch_size()).ok();
  };
  EXPECT_FALSE(broken([](auto& c) { c[0].a = 5; }));     // input out of range
  EXPECT_FALSE(broken([](auto& c) { c[1].a = 2; }));     // reads before write
  EXPECT_FALSE(broken([](auto& c) { c[1].dst = 99; }));  // register out of range
  EXPECT_FALSE(broken([](auto& c) { c.pop_back(); }));   // output never stored
  EXPECT_FALSE(broken([](auto& c) { c[0].op = static_cast<ShapeOp>(200); }));
  EXPECT_FALSE(broken([](auto& c) { c.back().dst = 1; }));            // output out of range
  EXPECT_FALSE(ShapeProgram::from_instructions(code, 1, 1, 1).ok());  // too few registers
}

// A slice after one input changes gives what a whole run gives, on serialised programs that
// reuse registers and store an output more than once (a compiled program does neither).
TEST(ShapeProgram, ASliceRecomputesWhatOneInputReaches) {
  std::mt19937 gen(11);
  const auto pick = [&](size_t n) { return static_cast<int32_t>(gen() % n); };
  const ShapeOp ops[] = {ShapeOp::kLoadImm, ShapeOp::kLoadInput, ShapeOp::kAdd,
                         ShapeOp::kAddImm,  ShapeOp::kMulImm,    ShapeOp::kMulAddImm,
                         ShapeOp::kMin,     ShapeOp::kMax,       ShapeOp::kStore};
  for (int trial = 0; trial < 500; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    const size_t inputs = 1 + gen() % 4, registers = 1 + gen() % 6, outputs = 1 + gen() % 5;
    std::vector<ShapeInstruction> code;
    for (size_t r = 0; r < registers; ++r)
      code.push_back({gen() % 2 ? ShapeOp::kLoadInput : ShapeOp::kLoadImm, static_cast<int32_t>(r),
                      pick(inputs), 0, pick(7) - 3});
    for (int k = 0; k < 24; ++k) {
      ShapeInstruction ins{ops[gen() % std::size(ops)], pick(registers), pick(registers),
                           pick(registers), pick(7) - 3};
      if (ins.op == ShapeOp::kLoadInput) ins.a = pick(inputs);
      if (ins.op == ShapeOp::kStore) ins.dst = pick(outputs);
      code.push_back(ins);
    }
    for (size_t o = 0; o < outputs; ++o)
      if (gen() % 2 || std::none_of(code.begin(), code.end(), [&](const ShapeInstruction& i) {
            return i.op == ShapeOp::kStore && i.dst == static_cast<int32_t>(o);
          }))
        code.push_back({ShapeOp::kStore, static_cast<int32_t>(o), pick(registers), 0, 0});
    auto prog = ShapeProgram::from_instructions(code, inputs, outputs, registers);
    ASSERT_TRUE(prog.ok()) << prog.status().to_string();
    std::vector<int64_t> in(inputs), out(outputs), want(outputs), scratch(registers);
    for (int64_t& v : in) v = pick(11) - 5;
    ASSERT_TRUE(prog->run(in, out, scratch).ok());
    for (size_t changed = 0; changed < inputs; ++changed) {
      in[changed] += 1 + pick(4);
      ASSERT_TRUE(prog->run(in, want, scratch).ok());
      const std::vector<uint32_t> slice = prog->slice_for_input(changed);
      ASSERT_TRUE(std::is_sorted(slice.begin(), slice.end()));
      std::fill(scratch.begin(), scratch.end(), -999);  // a slice reads no register it skips
      ASSERT_TRUE(prog->run_slice(slice, in, out, scratch).ok());
      EXPECT_EQ(out, want) << "input " << changed << "\n" << prog->to_string();
    }
  }
  // An input no output reaches has an empty slice; a slice past the program is refused.
  const Symbol a = symbol("a"), b = symbol("b");
  const Symbol both[] = {a, b};
  const SymExpr outs[] = {P("a+1")};
  auto prog = sym::compile_shape_program(outs, both);
  ASSERT_TRUE(prog.ok());
  EXPECT_TRUE(prog->slice_for_input(1).empty());
  EXPECT_FALSE(prog->slice_for_input(0).empty());
  std::vector<int64_t> in = {1, 2}, out(1), scratch(prog->scratch_size());
  const uint32_t past[] = {static_cast<uint32_t>(prog->instructions().size())};
  EXPECT_FALSE(prog->run_slice(past, in, out, scratch).ok());
}

TEST(ShapeProgram, RunDoesNotAllocate) {
  std::vector<Symbol> syms = {symbol("b"), symbol("s"), symbol("h")};
  std::vector<SymExpr> outs;
  for (int i = 1; i <= 64; ++i) {
    outs.push_back(floordiv(P("b*s*h") + i, i) + mod(P("h"), i + 1) * max(P("s"), i));
  }
  auto prog = sym::compile_shape_program(outs, syms);
  ASSERT_TRUE(prog.ok());
  std::vector<int64_t> out(outs.size()), scratch(prog->scratch_size());
  const int64_t in[] = {4, 128, 32};
  g_allocations = 0;
  g_counting = true;
  Status st = prog->run(in, out, scratch);
  g_counting = false;
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(g_allocations.load(), 0u);
  // The counter is live: the same window around an allocation counts it.
  g_counting = true;
  auto* probe = new int(1);
  g_counting = false;
  delete probe;
  EXPECT_GE(g_allocations.load(), 1u);
}

TEST(ShapeProgram, ThousandExpressionsRunInMicroseconds) {
  std::vector<Symbol> syms = {symbol("batch"), symbol("seq"), symbol("height"), symbol("width")};
  std::vector<SymExpr> outs;
  SymExpr b = syms[0], s = syms[1], h = syms[2], w = syms[3];
  for (int i = 0; i < 1000; ++i) {
    switch (i % 4) {
      case 0: outs.push_back(b * s * (i + 1)); break;
      case 1: outs.push_back(floordiv(h + 2 * (i % 3) - 3, 1 + i % 2) + 1); break;
      case 2: outs.push_back(ceildiv(w, 1 + i % 32) * 4 * h); break;
      default: outs.push_back(min(s + i, 4096) * b); break;
    }
  }
  auto prog = sym::compile_shape_program(outs, syms);
  ASSERT_TRUE(prog.ok());
  std::vector<int64_t> out(outs.size()), scratch(prog->scratch_size());
  const int64_t in[] = {8, 512, 224, 224};
  constexpr int kRuns = 2000;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRuns; ++r) ASSERT_TRUE(prog->run(in, out, scratch).ok());
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      kRuns;
  std::printf("1000 expressions, %zu instructions: %.2f us per run\n", prog->instructions().size(),
              us);
  Binding bind{{syms[0], 8}, {syms[1], 512}, {syms[2], 224}, {syms[3], 224}};
  for (size_t i = 0; i < outs.size(); ++i) EXPECT_EQ(out[i], *evaluate(outs[i], bind));
  EXPECT_LT(us, 200.0);  // loose so sanitizer and debug builds pass; typically a few us
}

}  // namespace
}  // namespace sod2::sym
