// Which values a session holds channel-blocked (blocked_values.h), on hand-built graphs: a value
// goes blocked only where its producer and every reader can take it so, and nothing outside the
// kernels (the caller, a body) sees it; tied slots agree.
#include "runtime/exec/blocked_values.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sod2::rt {
namespace {

// A main graph: values by name, nodes by (inputs, output).
struct GraphBuilder {
  GraphDesc g;
  int32_t value(const std::string& name, ValueStorage storage = ValueStorage::kArena) {
    for (size_t v = 0; v < g.values.size(); ++v)
      if (g.values[v].name == name) return static_cast<int32_t>(v);
    ValueDesc d;
    d.name = name;
    d.storage = storage;
    g.values.push_back(d);
    return static_cast<int32_t>(g.values.size() - 1);
  }
  void node(const std::vector<std::string>& ins, const std::string& out) {
    NodeDesc n;
    for (const std::string& i : ins) n.inputs.push_back(value(i));
    n.outputs.push_back(value(out));
    g.nodes.push_back(n);
  }
};

constexpr int kBlock = 16;

// A conv of whole blocks: X and Y apart, the residual (slot 3) tied to Y.
BlockedIo conv_io(bool residual = false) {
  BlockedIo io;
  io.inputs = 1;
  io.output = true;
  io.channels = 2 * kBlock;
  if (residual) {
    io.inputs |= 1u << 3;
    io.tied = 1u << 3;
  }
  return io;
}
BlockedIo pool_io() { return BlockedIo{1, true, 1}; }

bool blocked(const GraphBuilder& b, const std::vector<char>& v, const std::string& name) {
  for (size_t i = 0; i < b.g.values.size(); ++i)
    if (b.g.values[i].name == name) return v[i] != 0;
  ADD_FAILURE() << "no value " << name;
  return false;
}

TEST(BlockedValues, AChainOfConvsIsHeldBlockedButNotTheGraphsOwnValues) {
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.value("w", ValueStorage::kConstant);
  b.node({"x", "w"}, "a");
  b.node({"a", "w"}, "c");
  b.node({"c", "w"}, "y");
  b.g.outputs = {b.value("y")};
  const std::vector<BlockedIo> io(3, conv_io());
  const std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  EXPECT_FALSE(blocked(b, v, "y"));  // the caller's
  EXPECT_FALSE(blocked(b, v, "x"));
  EXPECT_FALSE(blocked(b, v, "w"));
  const NodeBlocked middle = node_blocked(b.g.nodes[1], v);
  EXPECT_EQ(middle.inputs, 1u);
  EXPECT_TRUE(middle.output);
}

TEST(BlockedValues, AReaderThatCannotTakeItKeepsItPlain) {
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.node({"x"}, "a");
  b.node({"a"}, "c");  // a conv
  b.node({"a"}, "d");  // an op with no blocked input
  b.node({"c", "d"}, "y");
  b.g.outputs = {b.value("y")};
  const std::vector<BlockedIo> io = {conv_io(), conv_io(), BlockedIo{}, BlockedIo{}};
  const std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_FALSE(blocked(b, v, "c"));  // read by the last node, which takes nothing blocked
}

TEST(BlockedValues, TiedSlotsAgreeThroughAChain) {
  // stem -> pool -> conv1 -> conv2(+ residual pool's result): the pool ties its input and
  // output, conv2 ties its residual to its output.
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.value("w", ValueStorage::kConstant);
  b.node({"x", "w"}, "stem");
  b.node({"stem"}, "pooled");
  b.node({"pooled", "w"}, "h");
  b.node({"h", "w", "w", "pooled"}, "r");
  b.node({"r"}, "y");  // a reader that takes it plain
  b.g.outputs = {b.value("y")};
  std::vector<BlockedIo> io = {conv_io(), pool_io(), conv_io(), conv_io(true), BlockedIo{}};
  std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "r"));
  // r plain unties the residual: pooled goes plain, and so does stem through the pool.
  EXPECT_FALSE(blocked(b, v, "pooled"));
  EXPECT_FALSE(blocked(b, v, "stem"));
  EXPECT_TRUE(blocked(b, v, "h"));
  // With a last reader that takes it blocked, the whole chain is.
  io[4] = BlockedIo{1, false, 0};
  v = choose_blocked_values(b.g, io, {}, kBlock);
  for (const char* name : {"stem", "pooled", "h", "r"}) EXPECT_TRUE(blocked(b, v, name)) << name;
}

TEST(BlockedValues, ValuesABodyReadsOrTwoNodesWriteStayPlain) {
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.node({"x"}, "a");
  b.node({"a"}, "c");
  b.node({"c"}, "d");
  b.node({"x"}, "d");  // a second writer (not a valid program, but the rule must hold)
  b.node({"d"}, "y");
  b.g.outputs = {b.value("y")};
  const std::vector<BlockedIo> io(5, conv_io());
  std::vector<char> by_bodies(b.g.values.size(), 0);
  by_bodies[static_cast<size_t>(b.value("a"))] = 1;
  const std::vector<char> v = choose_blocked_values(b.g, io, by_bodies, kBlock);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  EXPECT_FALSE(blocked(b, v, "d"));
}

// An elementwise op (a squeeze-excitation's Mul): either operand may arrive blocked and the
// output follows them, blocked only where one of them is.
BlockedIo follows_io() {
  BlockedIo io;
  io.inputs = io.follows = io.narrow_inputs = 3;
  io.output = io.narrow_output = true;
  return io;
}

TEST(BlockedValues, AnOutputThatFollowsItsInputsIsBlockedOnlyWhereOneOfThemIs) {
  // conv -> dw; gap(dw) -> fc (a conv that writes NCHW) -> s; Mul(dw, s) -> proj (a conv).
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.value("w", ValueStorage::kConstant);
  b.node({"x", "w"}, "dw");
  b.node({"dw"}, "gap");
  b.node({"gap", "w"}, "s");
  b.node({"dw", "s"}, "scaled");
  b.node({"scaled", "w"}, "y");
  b.g.outputs = {b.value("y")};
  BlockedIo gap;
  gap.inputs = 1;
  BlockedIo fc;  // reads and writes NCHW
  std::vector<BlockedIo> io = {conv_io(), gap, fc, follows_io(), conv_io()};
  std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "dw"));
  EXPECT_FALSE(blocked(b, v, "s"));  // the operands need not agree
  EXPECT_TRUE(blocked(b, v, "scaled"));
  // With both operands plain, the output is too, though its reader could take it blocked.
  io[0] = BlockedIo{};
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "dw"));
  EXPECT_FALSE(blocked(b, v, "scaled"));
  // An operand made plain by a tie elsewhere turns a following output plain in turn.
  GraphBuilder c;
  c.value("x", ValueStorage::kGraphInput);
  c.value("k", ValueStorage::kConstant);
  c.node({"x", "k"}, "a");
  c.node({"a"}, "pooled");
  c.node({"pooled", "k"}, "m");
  c.node({"m", "k"}, "z");
  c.node({"pooled"}, "out");
  c.g.outputs = {c.value("z"), c.value("out")};
  const std::vector<BlockedIo> io2 = {conv_io(), pool_io(), follows_io(), conv_io(), BlockedIo{}};
  v = choose_blocked_values(c.g, io2, {}, kBlock);
  EXPECT_FALSE(blocked(c, v, "pooled"));  // read by a node that takes it plain
  EXPECT_FALSE(blocked(c, v, "a"));       // tied to it through the pool
  EXPECT_FALSE(blocked(c, v, "m"));       // follows pooled (k is a constant)
}

TEST(BlockedValues, OnlyOutputZeroOfAKernelThatOffersIt) {
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  NodeDesc two;
  two.inputs = {b.value("x")};
  two.outputs = {b.value("first"), b.value("second")};
  b.g.nodes.push_back(two);
  b.node({"first", "second"}, "y");
  b.g.outputs = {b.value("y")};
  const std::vector<BlockedIo> io = {conv_io(), BlockedIo{3, false, 0}};
  const std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "first"));
  EXPECT_FALSE(blocked(b, v, "second"));
}

// A conv whose M (24) ends in a narrow block, and kernels that say whether they take one.
BlockedIo narrow_conv_io(bool takes_narrow) {
  BlockedIo io;
  io.inputs = 1;
  io.output = true;
  io.channels = kBlock + kBlock / 2;
  io.narrow_inputs = takes_narrow ? 1 : 0;
  io.narrow_output = takes_narrow;
  return io;
}

TEST(BlockedValues, ANarrowLastBlockOnlyBetweenKernelsThatTakeOne) {
  // conv(24) -> a -> conv(24) -> c -> reader -> y
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.value("w", ValueStorage::kConstant);
  b.node({"x", "w"}, "a");
  b.node({"a", "w"}, "c");
  b.node({"c", "w"}, "y");
  b.g.outputs = {b.value("y")};
  std::vector<BlockedIo> io = {narrow_conv_io(true), narrow_conv_io(true), narrow_conv_io(true)};
  std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  // A reader that takes whole blocks only keeps its narrow input NCHW...
  io[2] = narrow_conv_io(false);
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "a"));
  EXPECT_FALSE(blocked(b, v, "c"));
  // ... and so does a producer that writes whole blocks only.
  io[2] = narrow_conv_io(true);
  io[0] = narrow_conv_io(false);
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  // Channels that fill whole blocks need no kernel's word on narrow ones; unknown ones do.
  io = {conv_io(), conv_io(), conv_io()};
  io[1].channels = 3 * kBlock;
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  io[0].channels = -1;
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  // No block: nothing is held.
  v = choose_blocked_values(b.g, io, {}, 0);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_FALSE(blocked(b, v, "c"));
}

TEST(BlockedValues, ChannelsCarryThroughTiedAndFollowingOutputs) {
  // conv(24, narrow) -> a -> pool (tied, whole blocks only) -> p -> conv -> y: a pool carries its
  // X's channels, so p is narrow too and the pool cannot hold it.
  GraphBuilder b;
  b.value("x", ValueStorage::kGraphInput);
  b.value("w", ValueStorage::kConstant);
  b.node({"x", "w"}, "a");
  b.node({"a"}, "p");
  b.node({"p", "w"}, "y");
  b.g.outputs = {b.value("y")};
  std::vector<BlockedIo> io = {narrow_conv_io(true), pool_io(), narrow_conv_io(true)};
  std::vector<char> v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_FALSE(blocked(b, v, "p"));
  // From a conv of whole blocks the pool's output is whole: both held.
  io[0] = conv_io();
  v = choose_blocked_values(b.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "p"));
  // An elementwise op follows one operand of whole blocks (a per-channel scale of unknown
  // channels beside it), and a narrow one where that is all it has.
  GraphBuilder c;
  c.value("x", ValueStorage::kGraphInput);
  c.value("w", ValueStorage::kConstant);
  c.node({"x", "w"}, "d");
  c.node({"x"}, "s");
  c.node({"d", "s"}, "m");
  c.node({"m", "w"}, "y");
  c.g.outputs = {c.value("y")};
  BlockedIo whole_only_reader = conv_io();
  io = {conv_io(), BlockedIo{}, follows_io(), whole_only_reader};
  v = choose_blocked_values(c.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(c, v, "m"));
  io[0] = narrow_conv_io(true);
  v = choose_blocked_values(c.g, io, {}, kBlock);
  EXPECT_TRUE(blocked(c, v, "d"));   // the follower takes narrow operands
  EXPECT_FALSE(blocked(c, v, "m"));  // its reader does not
}

}  // namespace
}  // namespace sod2::rt
