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

// A conv: X and Y apart, the residual (slot 3) tied to Y.
BlockedIo conv_io(bool residual = false) {
  BlockedIo io;
  io.inputs = 1;
  io.output = true;
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
  const std::vector<char> v = choose_blocked_values(b.g, io, {});
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
  const std::vector<char> v = choose_blocked_values(b.g, io, {});
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
  std::vector<char> v = choose_blocked_values(b.g, io, {});
  EXPECT_FALSE(blocked(b, v, "r"));
  // r plain unties the residual: pooled goes plain, and so does stem through the pool.
  EXPECT_FALSE(blocked(b, v, "pooled"));
  EXPECT_FALSE(blocked(b, v, "stem"));
  EXPECT_TRUE(blocked(b, v, "h"));
  // With a last reader that takes it blocked, the whole chain is.
  io[4] = BlockedIo{1, false, 0};
  v = choose_blocked_values(b.g, io, {});
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
  const std::vector<char> v = choose_blocked_values(b.g, io, by_bodies);
  EXPECT_FALSE(blocked(b, v, "a"));
  EXPECT_TRUE(blocked(b, v, "c"));
  EXPECT_FALSE(blocked(b, v, "d"));
}

// An elementwise op (a squeeze-excitation's Mul): either operand may arrive blocked and the
// output follows them, blocked only where one of them is.
BlockedIo follows_io() {
  BlockedIo io;
  io.inputs = io.follows = 3;
  io.output = true;
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
  std::vector<char> v = choose_blocked_values(b.g, io, {});
  EXPECT_TRUE(blocked(b, v, "dw"));
  EXPECT_FALSE(blocked(b, v, "s"));  // the operands need not agree
  EXPECT_TRUE(blocked(b, v, "scaled"));
  // With both operands plain, the output is too, though its reader could take it blocked.
  io[0] = BlockedIo{};
  v = choose_blocked_values(b.g, io, {});
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
  v = choose_blocked_values(c.g, io2, {});
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
  const std::vector<char> v = choose_blocked_values(b.g, io, {});
  EXPECT_TRUE(blocked(b, v, "first"));
  EXPECT_FALSE(blocked(b, v, "second"));
}

}  // namespace
}  // namespace sod2::rt
