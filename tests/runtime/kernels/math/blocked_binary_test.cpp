// Add/Sub/Mul/Div with channel-blocked operands or output (kernel.h, BlockedIo): what they
// offer, and that with any mix of blocked and NCHW tensors they compute what they compute on
// NCHW tensors, bit for bit (the same operation on the same pairs of values).
#include <cstring>
#include <string>
#include <vector>

#include "tests/runtime/blocked_kernel_harness.h"
#include "tests/runtime/kernels/math/math_test_util.h"

namespace sod2::rt::math_test {
namespace {

using testing::Held;

// Runs `op` once: the operands of held.inputs arrive blocked, output 0 is read back from blocked
// when held.output; `constants` (a bit per slot) are the program's constants.
Expected<HostTensor> run_held(const std::string& op, const HostTensor& a, const HostTensor& b,
                              int block, Held held, uint64_t constants = 0, int threads = 2,
                              BlockedIo* offered = nullptr) {
  NodeInfo info = testing::node_info(op, 14, {&a, &b}, 1);
  info.input_constant = {(constants & 1) != 0, (constants & 2) != 0};
  return testing::run_held(registry(), info, {&a, &b}, constants, block, held, threads, offered);
}

void expect_same_bits(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(std::memcmp(got.data<float>(), want.data<float>(), want.bytes().size()), 0) << what;
}

TEST(BlockedBinary, OffersItsComputedOperandsAndAnOutputThatFollowsThem) {
  const HostTensor x = random_f32(Shape{1, 16, 2, 2}, -1, 1, 1);
  BlockedIo io;
  ASSERT_TRUE(run_held("Mul", x, x, 16, {}, 0, 1, &io).ok());
  EXPECT_EQ(io.inputs, 3u);
  EXPECT_EQ(io.follows, 3u);
  EXPECT_EQ(io.tied, 0u);
  EXPECT_TRUE(io.output);
  EXPECT_EQ(io.narrow_inputs, 3u);  // any channel count
  EXPECT_TRUE(io.narrow_output);
  // A constant operand (a per-channel scale) is read NCHW: neither offered nor followed.
  ASSERT_TRUE(run_held("Add", x, x, 16, {}, 2, 1, &io).ok());
  EXPECT_EQ(io.inputs, 1u);
  EXPECT_EQ(io.follows, 1u);
  // Two constants, or a constant of rank 5 (the output would not be [N, C, H, W]): nothing.
  ASSERT_TRUE(run_held("Sub", x, x, 16, {}, 3, 1, &io).ok());
  EXPECT_FALSE(io.output);
  const HostTensor five = random_f32(Shape{1, 1, 1, 1, 2}, -1, 1, 2);
  ASSERT_TRUE(run_held("Div", x, five, 16, {}, 2, 1, &io).ok());
  EXPECT_FALSE(io.output);
  EXPECT_EQ(io.inputs, 0u);
  // Ops without the vectorised float loops, and other element types, keep NCHW.
  ASSERT_TRUE(run_held("Pow", x, x, 16, {}, 0, 1, &io).ok());
  EXPECT_EQ(io.inputs, 0u);
  const HostTensor ints = i32(Shape{1, 16, 1, 1}, std::vector<int32_t>(16, 3));
  ASSERT_TRUE(run_held("Mul", ints, ints, 16, {}, 0, 1, &io).ok());
  EXPECT_EQ(io.inputs, 0u);
  EXPECT_FALSE(io.output);
}

// 32 channels fill whole blocks of 8 and 16; 20 end in a narrow block of 4 (kernel.h).
void expect_any_mix_computes_what_nchw_computes(int64_t channels) {
  const Shape full{2, channels, 5, 3};
  const HostTensor x = random_f32(full, -2, 2, 3);
  const HostTensor y = random_f32(full, 0.5f, 2, 4);
  const HostTensor per_channel = random_f32(Shape{2, channels, 1, 1}, 0.5f, 2, 5);
  const HostTensor shared = random_f32(Shape{1, channels, 1, 1}, 0.5f, 2, 6);
  const HostTensor rank3 = random_f32(Shape{channels, 1, 1}, 0.5f, 2, 7);
  const HostTensor rows = random_f32(Shape{5, 3}, 0.5f, 2, 8);
  const HostTensor scalar = f32(Shape{1}, {1.5f});
  struct Case {
    const char* op;
    const HostTensor* a;
    const HostTensor* b;
    std::vector<Held> helds;
  };
  const std::vector<Case> cases = {
      // A squeeze-excitation scale, either way round and whether or not it is held itself.
      {"Mul", &x, &per_channel, {{1, true}, {3, true}, {1, false}, {2, true}}},
      {"Mul", &per_channel, &x, {{2, true}, {1, true}, {2, false}}},
      {"Mul", &shared, &x, {{1, true}, {2, true}}},
      // An unfused residual Add; a blocked operand against an NCHW one of the same shape.
      {"Add", &x, &y, {{3, true}, {1, true}, {2, true}, {1, false}, {3, false}}},
      {"Sub", &x, &rank3, {{1, true}, {1, false}}},
      {"Div", &x, &rows, {{1, true}, {1, false}}},
      {"Div", &scalar, &y, {{2, true}, {2, false}}},
  };
  for (const int block : {8, 16}) {
    for (const Case& c : cases) {
      const HostTensor want = run_ok(c.op, 14, {c.a, c.b})[0];
      for (const Held& h : c.helds) {
        for (const int threads : {1, 2}) {
          const std::string what = std::string(c.op) + " " + c.a->shape().to_string() + " " +
                                   c.b->shape().to_string() + " block " + std::to_string(block) +
                                   " held " + std::to_string(h.inputs) + (h.output ? "+out" : "") +
                                   " threads " + std::to_string(threads);
          Expected<HostTensor> got = run_held(c.op, *c.a, *c.b, block, h, 0, threads);
          ASSERT_TRUE(got.ok()) << what << ": " << got.status().to_string();
          expect_same_bits(*got, want, what);
        }
      }
    }
  }
}

TEST(BlockedBinary, AnyMixOfBlockedAndNchwComputesWhatNchwComputes) {
  expect_any_mix_computes_what_nchw_computes(32);
}

TEST(BlockedBinary, ANarrowLastBlockToo) { expect_any_mix_computes_what_nchw_computes(20); }

TEST(BlockedBinary, AnOperandOfHigherRankGetsAnNchwCopyOfTheBlockedOne) {
  // [1, 16, 2, 3] blocked times [2, 1, 16, 2, 3]: a rank-5 NCHW result from NCHW copies.
  const HostTensor x = random_f32(Shape{1, 16, 2, 3}, -1, 1, 9);
  const HostTensor five = random_f32(Shape{2, 1, 16, 2, 3}, -1, 1, 10);
  const HostTensor want = run_ok("Mul", 14, {&x, &five})[0];
  Expected<HostTensor> got = run_held("Mul", x, five, 16, {1, false});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_same_bits(*got, want, "rank 5");
  // Asked to write that result blocked, it says why it cannot instead of writing garbage.
  NodeInfo info = testing::node_info("Mul", 14, {&x, &five}, 1);
  std::unique_ptr<Kernel> k = std::move(registry().create(info)).value();
  k->use_blocked(16, 1, true);
  const HostTensor bx = testing::convert_blocked(x, 16, true);
  const Tensor views[2] = {bx.view(), five.view()};
  const Tensor* ptrs[2] = {&views[0], &views[1]};
  testing::HeapAllocator alloc(1);
  ThreadPool pool(1);
  KernelContext ctx(ptrs, &alloc, &pool);
  const Status st = k->run(ctx);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("cannot be held in channel blocks"), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace sod2::rt::math_test
