// The work rules (core/ops/op_work.h) on hand-made facts: each family's count as an expression of
// the dims, and nullopt where a dim the count needs is unknown.
#include <gtest/gtest.h>

#include "core/ops/op_registry.h"
#include "core/sym/evaluate.h"

namespace sod2 {
namespace {

using sym::SymExpr;

TensorFact shaped(std::vector<SymExpr> dims) {
  DimList d;
  for (const SymExpr& e : dims) d.emplace_back(e);
  return TensorFact::shaped(DataType::kFloat, std::move(d));
}

Attribute ints_attr(const char* name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInts;
  a.ints = std::move(v);
  return a;
}

Attribute int_attr(const char* name, int64_t v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kInt;
  a.i = v;
  return a;
}

Attribute string_attr(const char* name, std::string v) {
  Attribute a;
  a.name = name;
  a.type = AttributeType::kString;
  a.s = std::move(v);
  return a;
}

struct Case {
  Node node;
  std::vector<TensorFact> in, out;

  std::optional<SymExpr> work() const {
    const OpSpec* spec = OpRegistry::standard().find(node.op_type, node.opset);
    if (!spec || !spec->work) {
      ADD_FAILURE() << "no work rule for " << node.op_type;
      return std::nullopt;
    }
    std::vector<const TensorFact*> i, o;
    for (const TensorFact& f : in) i.push_back(&f);
    for (const TensorFact& f : out) o.push_back(&f);
    WorkView view{node, i, o, [](const Graph&) { return std::optional<SymExpr>(SymExpr(0)); }};
    return spec->work(view);
  }
};

Case make(const char* op, std::vector<TensorFact> in, std::vector<TensorFact> out,
          std::vector<Attribute> attrs = {}, int64_t opset = 17) {
  Case c;
  c.node.name = op;
  c.node.op_type = op;
  c.node.opset = opset;
  c.node.attributes = std::move(attrs);
  c.in = std::move(in);
  c.out = std::move(out);
  return c;
}

int64_t at(const std::optional<SymExpr>& e,
           std::initializer_list<std::pair<const char*, int64_t>> b) {
  EXPECT_TRUE(e.has_value());
  if (!e) return -1;
  sym::Binding binding;
  for (const auto& [name, v] : b) binding[sym::symbol(name)] = v;
  const Expected<int64_t> v = sym::evaluate(*e, binding);
  EXPECT_TRUE(v.ok()) << e->to_string();
  return v.ok() ? *v : -1;
}

const SymExpr n = sym::symbol("n"), h = sym::symbol("h"), w = sym::symbol("w");

TEST(OpWork, ConvCountsTwoPerMultiplyAddOfTheDirectConvolution) {
  // 3x3 conv, 16 -> 32 channels, groups 1: 2 * numel(out) * 16 * 9.
  const Case c = make("Conv", {shaped({n, 16, h, w}), shaped({32, 16, 3, 3}), shaped({32})},
                      {shaped({n, 32, h, w})}, {ints_attr("kernel_shape", {3, 3})});
  EXPECT_EQ(at(c.work(), {{"n", 2}, {"h", 8}, {"w", 4}}), 2 * (2 * 32 * 8 * 4) * 16 * 9);
  // Depthwise: the weight is [C, 1, k, k], so each output element is 9 multiply-adds.
  const Case dw = make("Conv", {shaped({1, 8, h, w}), shaped({8, 1, 3, 3})}, {shaped({1, 8, h, w})},
                       {int_attr("group", 8)});
  EXPECT_EQ(at(dw.work(), {{"h", 4}, {"w", 4}}), 2 * 8 * 16 * 9);
  // QLinearConv's weight is input 3.
  const Case q = make("QLinearConv",
                      {shaped({1, 4, h, w}), shaped({}), shaped({}), shaped({6, 4, 1, 1}),
                       shaped({}), shaped({}), shaped({}), shaped({})},
                      {shaped({1, 6, h, w})}, {}, 10);
  EXPECT_EQ(at(q.work(), {{"h", 3}, {"w", 5}}), 2 * 6 * 15 * 4);
}

TEST(OpWork, ConvTransposeCountsPerInputElement) {
  const Case c = make("ConvTranspose", {shaped({1, 4, h, h}), shaped({4, 2, 2, 2})},
                      {shaped({1, 2, 2 * h, 2 * h})});
  EXPECT_EQ(at(c.work(), {{"h", 5}}), 2 * (4 * 25) * (2 * 2 * 2));
}

TEST(OpWork, MatMulGemmAndEinsumCountTheirDotProducts) {
  const Case mm = make("MatMul", {shaped({n, 7, 64}), shaped({64, 10})}, {shaped({n, 7, 10})});
  EXPECT_EQ(at(mm.work(), {{"n", 3}}), 2 * 3 * 7 * 10 * 64);
  // Gemm with transA: K is A's dim 0; C adds one op per output element.
  const Case g = make("Gemm", {shaped({64, n}), shaped({64, 10}), shaped({10})}, {shaped({n, 10})},
                      {int_attr("transA", 1)});
  EXPECT_EQ(at(g.work(), {{"n", 5}}), 2 * 5 * 10 * 64 + 5 * 10);
  // A batched matmul written as an einsum, with an ellipsis.
  const Case e = make("Einsum", {shaped({n, 2, 7, 64}), shaped({n, 2, 64, 9})},
                      {shaped({n, 2, 7, 9})}, {string_attr("equation", "...ij,...jk->...ik")}, 12);
  EXPECT_EQ(at(e.work(), {{"n", 3}}), 2 * (3 * 2 * 7 * 9) * 64);
  // Implicit output: 'j' appears twice, so it is contracted.
  const Case implicit = make("Einsum", {shaped({h, 8}), shaped({8, w})}, {shaped({h, w})},
                             {string_attr("equation", "ij,jk")}, 12);
  EXPECT_EQ(at(implicit.work(), {{"h", 3}, {"w", 4}}), 2 * 12 * 8);
}

TEST(OpWork, RecurrentOpsCountBothProjectionsPerStep) {
  // GRU: X [T, B, 32], W [1, 3*16, 32], R [1, 3*16, 16].
  const Case g = make("GRU", {shaped({n, 2, 32}), shaped({1, 48, 32}), shaped({1, 48, 16})},
                      {shaped({n, 1, 2, 16})}, {int_attr("hidden_size", 16)});
  EXPECT_EQ(at(g.work(), {{"n", 10}}), 10 * 2 * (2 * (48 * 32 + 48 * 16) + 3 * 48));
}

TEST(OpWork, ElementwisePoolsAndMovement) {
  const Case add = make("Add", {shaped({n, 8}), shaped({8})}, {shaped({n, 8})});
  EXPECT_EQ(at(add.work(), {{"n", 4}}), 32);
  const Case sum3 = make("Sum", {shaped({n}), shaped({n}), shaped({n})}, {shaped({n})}, {}, 13);
  EXPECT_EQ(at(sum3.work(), {{"n", 4}}), 8);
  const Case pool = make("MaxPool", {shaped({1, 4, h, h})}, {shaped({1, 4, h, h})},
                         {ints_attr("kernel_shape", {3, 3})}, 12);
  EXPECT_EQ(at(pool.work(), {{"h", 2}}), 16 * 9);
  const Case t = make("Transpose", {shaped({n, 8})}, {shaped({8, n})});
  EXPECT_EQ(at(t.work(), {{"n", 4}}), 0);
  const Case sm = make("Softmax", {shaped({n, 10})}, {shaped({n, 10})}, {}, 13);
  EXPECT_EQ(at(sm.work(), {{"n", 2}}), 80);
}

TEST(OpWork, AttentionCountsScoresAndWeightedSum) {
  // 4-D [B, H, S, D]: B*H*Sq*Skv pairs, each a D-long dot for the score, a Dv-long one for the
  // output, and 4 ops of softmax.
  const Case a =
      make("Attention", {shaped({1, 4, n, 16}), shaped({1, 4, h, 16}), shaped({1, 4, h, 8})},
           {shaped({1, 4, n, 8})}, {}, 23);
  EXPECT_EQ(at(a.work(), {{"n", 3}, {"h", 5}}), 4 * 3 * 5 * (2 * 16 + 2 * 8 + 4));
}

TEST(OpWork, AnUnknownDimLeavesTheCountUnknown) {
  TensorFact unknown_rank = TensorFact::unknown(DataType::kFloat);
  const Case c = make("Conv", {shaped({1, 4, h, h}), unknown_rank}, {shaped({1, 8, h, h})});
  EXPECT_FALSE(c.work().has_value());
  const Case m = make("Relu", {unknown_rank}, {unknown_rank});
  EXPECT_FALSE(m.work().has_value());
  // Einsum whose equation names more operands than the node has.
  const Case e =
      make("Einsum", {shaped({2, 3})}, {shaped({2})}, {string_attr("equation", "ij,jk->ik")}, 12);
  EXPECT_FALSE(e.work().has_value());
}

}  // namespace
}  // namespace sod2
