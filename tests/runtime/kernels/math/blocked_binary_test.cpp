// Add/Sub/Mul/Div with channel-blocked operands or output (kernel.h, BlockedIo): what they
// offer, and that with any mix of blocked and NCHW tensors they compute what they compute on
// NCHW tensors, bit for bit (the same operation on the same pairs of values).
#include <cstring>
#include <string>
#include <vector>

#include "tests/runtime/kernels/math/math_test_util.h"

namespace sod2::rt::math_test {
namespace {

// [N, C, H, W] (C a multiple of block) as [N, C / block, H, W, block].
HostTensor to_blocked(const HostTensor& t, int block) {
  const Shape& s = t.shape();
  HostTensor out(DType::kFloat, s);
  const int64_t n = s[0], c = s[1], plane = s[2] * s[3];
  const float* x = t.data<float>();
  float* y = out.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        y[((i * c + ch / block * block) * plane + p * block) + ch % block] =
            x[(i * c + ch) * plane + p];
  return out;
}

HostTensor to_plain(const HostTensor& t, int block) {
  const Shape& s = t.shape();
  HostTensor out(DType::kFloat, s);
  const int64_t n = s[0], c = s[1], plane = s[2] * s[3];
  const float* x = t.data<float>();
  float* y = out.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p)
        y[(i * c + ch) * plane + p] =
            x[((i * c + ch / block * block) * plane + p * block) + ch % block];
  return out;
}

struct Held {
  uint64_t inputs = 0;
  bool output = false;
};

// Runs `op` once: the operands of held.inputs arrive blocked, output 0 is read back from blocked
// when held.output; `constants` (a bit per slot) are the program's constants.
Expected<HostTensor> run_held(const std::string& op, const HostTensor& a, const HostTensor& b,
                              int block, Held held, uint64_t constants = 0, int threads = 2,
                              BlockedIo* offered = nullptr) {
  NodeInfo info = testing::node_info(op, 14, {&a, &b}, 1);
  info.input_constant = {(constants & 1) != 0, (constants & 2) != 0};
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, registry().create(info));
  const HostTensor* in[2] = {&a, &b};
  HostTensor blocked[2];
  Tensor views[2];
  const Tensor* ptrs[2];
  const Tensor* consts[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    const bool is_held = (held.inputs >> i) & 1;
    if (is_held) blocked[i] = to_blocked(*in[i], block);
    views[i] = is_held ? blocked[i].view() : in[i]->view();
    ptrs[i] = &views[i];
    if ((constants >> i) & 1) consts[i] = &views[i];
  }
  SOD2_RETURN_IF_ERROR(k->prepare(consts));
  const BlockedIo io = k->blocked_io(block);
  if (offered) *offered = io;
  if ((held.inputs & ~io.inputs) != 0 || (held.output && !io.output))
    return internal_error("the test holds more than the kernel offered");
  if (held.inputs != 0 || held.output) k->use_blocked(block, held.inputs, held.output);
  testing::HeapAllocator alloc(1);
  ThreadPool pool(threads);
  KernelContext ctx(ptrs, &alloc, &pool);
  SOD2_RETURN_IF_ERROR(k->run(ctx));
  return held.output ? to_plain(alloc.outputs[0], block) : std::move(alloc.outputs[0]);
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

TEST(BlockedBinary, AnyMixOfBlockedAndNchwComputesWhatNchwComputes) {
  const Shape full{2, 32, 5, 3};
  const HostTensor x = random_f32(full, -2, 2, 3);
  const HostTensor y = random_f32(full, 0.5f, 2, 4);
  const HostTensor per_channel = random_f32(Shape{2, 32, 1, 1}, 0.5f, 2, 5);
  const HostTensor shared = random_f32(Shape{1, 32, 1, 1}, 0.5f, 2, 6);
  const HostTensor rank3 = random_f32(Shape{32, 1, 1}, 0.5f, 2, 7);
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
  const HostTensor bx = to_blocked(x, 16);
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
