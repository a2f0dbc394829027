#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "fake_context.h"

namespace sod2::testing {
namespace {

// A FakeContext whose graph holds float initializers for some inputs (scales are floats, which
// facts carry only when integral), or a Constant node producing them.
class ConstContext : public FakeContext {
 public:
  ConstContext(std::string op, std::vector<TensorFact> inputs,
               std::map<size_t, std::vector<float>> consts, int64_t opset = 17,
               bool as_constant_node = false)
      : FakeContext(op, inputs, 1, opset), graph_("test") {
    // Same value order as FakeContext's graph, so the node's input ids resolve here.
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value v;
      v.name = "in" + std::to_string(i);
      v.kind = ValueKind::kGraphInput;
      const ValueId id = *graph_.add_value(v);
      auto it = consts.find(i);
      if (it == consts.end()) continue;
      const std::vector<float>& f = it->second;
      if (as_constant_node) {
        Node c;
        c.name = "const" + std::to_string(i);
        c.op_type = "Constant";
        c.attributes.push_back(
            {.name = "value_floats", .type = AttributeType::kFloats, .floats = f});
        c.outputs = {id};
        graph_.value(id).kind = ValueKind::kNodeOutput;
        graph_.value(id).producer = graph_.add_node(std::move(c));
        continue;
      }
      std::vector<uint8_t> bytes(f.size() * sizeof(float));
      std::memcpy(bytes.data(), f.data(), bytes.size());
      graph_.add_initializer(
          Tensor(v.name, DataType::kFloat, {static_cast<int64_t>(f.size())}, std::move(bytes)), id);
    }
    Value out;
    out.name = "out0";
    (void)graph_.add_value(out);
  }
  const Graph& graph() const override { return graph_; }

 private:
  Graph graph_;
};

struct Case {
  std::string name;
  std::string op;
  std::vector<TensorFact> inputs;
  std::map<size_t, std::vector<float>> consts;
  std::function<void(FakeContext&)> setup;
  std::string want;
  int64_t opset = 17;
};

class ResizeTest : public ::testing::TestWithParam<Case> {};

TEST_P(ResizeTest, Output) {
  const Case& c = GetParam();
  ConstContext ctx(c.op, c.inputs, c.consts, c.opset);
  if (c.setup) c.setup(ctx);
  const Status st = ctx.run();
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(ctx.out_str(), c.want);
  EXPECT_TRUE(ctx.requirements.empty());
}

void none(FakeContext&) {}
TensorFact roi() { return ffact("0"); }
TensorFact four() { return ffact("4"); }

INSTANTIATE_TEST_SUITE_P(
    Rules, ResizeTest,
    ::testing::Values(
        Case{"ScalesTwo",
             "Resize",
             {ffact("n, c, h, w"), roi(), four()},
             {{2, {1, 1, 2, 2}}},
             none,
             "[n, c, 2*h, 2*w]"},
        Case{"ScalesHalf",
             "Resize",
             {ffact("n, c, h, w"), roi(), four()},
             {{2, {1, 1, 0.5f, 0.5f}}},
             [](FakeContext& c) { c.range("h", 32, 1024, 32); },
             "[n, c, floordiv(h,2), floordiv(w,2)]"},
        Case{"ScalesThreeHalves",
             "Resize",
             {ffact("1, 3, h, 10"), roi(), four()},
             {{2, {1, 1, 1.5f, 1.5f}}},
             none,
             "[1, 3, floordiv(3*h,2), 15]"},
        Case{"ScalesQuarterConstant",
             "Resize",
             {ffact("1, 3, 10, 9"), roi(), four()},
             {{2, {1, 1, 0.25f, 2.5f}}},
             none,
             "[1, 3, 2, 22]"},
        Case{"ScalesNonDyadicIsExecutionDim",
             "Resize",
             {ffact("n, c, h, w"), roi(), four()},
             {{2, {1, 1, 1.0f / 3, 2}}},
             none,
             "[n, c, Resize_0.out0.d2, 2*w]"},
        Case{"ScalesUnknownDimStaysUnknown",
             "Resize",
             {ffact("n, c, ?, w"), roi(), four()},
             {{2, {1, 1, 2, 2}}},
             none,
             "[n, c, ?, 2*w]"},
        Case{"ScalesFromTrackedIntegralValues",
             "Resize",
             {ffact("n, c, h, w"), roi(), ints({"1", "1", "2", "3"})},
             {},
             none,
             "[n, c, 2*h, 3*w]"},
        Case{"ScalesUnknownValues",
             "Resize",
             {ffact("n, c, h, w"), roi(), four()},
             {},
             none,
             "[Resize_0.out0.d0, Resize_0.out0.d1, Resize_0.out0.d2, Resize_0.out0.d3]"},
        Case{"SymbolicSizes",
             "Resize",
             {ffact("n, c, h, w"), roi(), ffact("0"), ints({"n", "c", "2*h", "w+1"})},
             {},
             none,
             "[n, c, 2*h, w+1]"},
        Case{"SizesWithScalesOmitted",
             "Resize",
             {ffact("n, c, h, w"), roi(), ffact("0"), ints({"n", "c", "64", "64"})},
             {},
             [](FakeContext& c) { c.omit_input(1).omit_input(2); },
             "[n, c, 64, 64]"},
        Case{"SizesUnknownValues",
             "Resize",
             {ffact("n, c, h, w"), roi(), ffact("0"), fact(DataType::kInt64, "4")},
             {},
             none,
             "[Resize_0.out0.d0, Resize_0.out0.d1, Resize_0.out0.d2, Resize_0.out0.d3]"},
        Case{"SizesGiveRank",
             "Resize",
             {TensorFact::unknown(DataType::kFloat), roi(), ffact("0"), ints({"1", "3", "h", "w"})},
             {},
             none,
             "[1, 3, h, w]"},
        Case{"NothingKnown",
             "Resize",
             {TensorFact::unknown(DataType::kFloat), roi(), TensorFact::unknown(DataType::kFloat)},
             {},
             none,
             "<unknown rank>"},
        Case{"SizesWithAxes",
             "Resize",
             {ffact("n, c, h, w"), roi(), ffact("0"), ints({"2*h", "2*w"})},
             {},
             [](FakeContext& c) {
               c.attr_ints("axes", {-2, -1});
             },
             "[n, c, 2*h, 2*w]",
             18},
        Case{"SizesNotStretchIsExecution",
             "Resize",
             {ffact("n, c, h, w"), roi(), ffact("0"), ints({"32", "32"})},
             {},
             [](FakeContext& c) {
               c.attr_ints("axes", {2, 3}).attr_s("keep_aspect_ratio_policy", "not_larger");
             },
             "[n, c, Resize_0.out0.d2, Resize_0.out0.d3]",
             18},
        Case{"Opset10Scales",
             "Resize",
             {ffact("n, c, h, w"), four()},
             {{1, {1, 1, 2, 2}}},
             none,
             "[n, c, 2*h, 2*w]",
             10},
        Case{"UpsampleAttr",
             "Upsample",
             {ffact("n, c, h, w")},
             {},
             [](FakeContext& c) { c.attr_floats("scales", {1, 1, 2, 2}); },
             "[n, c, 2*h, 2*w]",
             7},
        Case{"UpsampleInput",
             "Upsample",
             {ffact("n, c, h, w"), four()},
             {{1, {1, 1, 2, 2}}},
             none,
             "[n, c, 2*h, 2*w]",
             9},
        Case{"UpsampleV1",
             "Upsample",
             {ffact("n, c, h, w")},
             {},
             [](FakeContext& c) { c.attr_f("height_scale", 2).attr_f("width_scale", 3); },
             "[n, c, 2*h, 3*w]",
             1}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ResizeTest, ScalesFromConstantNode) {
  ConstContext ctx("Resize", {ffact("n, c, h, w"), roi(), four()}, {{2, {1, 1, 2, 0.5f}}}, 13,
                   true);
  ASSERT_TRUE(ctx.run().ok());
  EXPECT_EQ(ctx.out_str(), "[n, c, 2*h, floordiv(w,2)]");
}

TEST(ResizeTest, Errors) {
  ConstContext len("Resize", {ffact("n, c, h, w"), roi(), ffact("3")}, {{2, {1, 2, 2}}});
  EXPECT_EQ(len.run().code(), StatusCode::kInvalidModel);
  ConstContext zero("Resize", {ffact("n, c, h, w"), roi(), four()}, {{2, {1, 1, 0, 2}}});
  EXPECT_EQ(zero.run().code(), StatusCode::kInvalidModel);
  ConstContext empty("Resize",
                     {ffact("n, c, h, w"), roi(), ffact("0"), fact(DataType::kInt64, "0")}, {});
  EXPECT_EQ(empty.run().code(), StatusCode::kInvalidModel);
  ConstContext sizes("Resize", {ffact("n, c, h, w"), roi(), ffact("0"), ints({"1", "2"})}, {});
  EXPECT_EQ(sizes.run().code(), StatusCode::kInvalidModel);
  FakeContext up("Upsample", {ffact("n, c, h, w")}, 1, 7);
  EXPECT_EQ(up.run().code(), StatusCode::kInvalidModel);
}

TEST(ResizeTest, Registry) {
  const auto& r = OpRegistry::standard();
  EXPECT_EQ(r.find("Resize", 10)->value_inputs, std::vector<int>{1});
  EXPECT_EQ(r.find("Resize", 11)->value_inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.find("Resize", 13)->value_inputs, (std::vector<int>{2, 3}));
  EXPECT_EQ(r.find("Resize", 17)->op_class, OpClass::kISVDOS);
  EXPECT_EQ(r.find("Upsample", 7)->op_class, OpClass::kISDOS);
  EXPECT_EQ(r.find("Upsample", 9)->op_class, OpClass::kISVDOS);
  EXPECT_EQ(r.find("Upsample", 10)->value_inputs, std::vector<int>{1});
}

}  // namespace
}  // namespace sod2::testing
