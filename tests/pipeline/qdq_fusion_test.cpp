// QDQ models (the form int8 quantisers write) through the one compiled model: a shared
// DequantizeLinear gets one copy per contraction at import, DequantizeLinear → Conv → Relu →
// QuantizeLinear runs as one sod2:QFusedConv and the residual DequantizeLinear ×2 → Add → Relu →
// QuantizeLinear as one sod2:QAdd; a group the int8 kernels cannot run is split, says why and
// still runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../common/allocation_counter.h"
#include "../onnx/proto_builder.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2 {
namespace {

using testing::add_float_initializer;
using testing::add_input;
using testing::add_node;
using testing::add_output;

template <class T>
void add_raw_initializer(onnx::GraphProto* g, const std::string& name, int32_t type,
                         std::vector<int64_t> dims, const std::vector<T>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  t->set_raw_data(raw);
}

void add_uint8_scalar(onnx::GraphProto* g, const std::string& name, uint8_t v) {
  add_raw_initializer<uint8_t>(g, name, onnx::TensorProto::UINT8, {}, {v});
}

// Conv weights int8 [m, c, 3, 3], per-channel scales, int32 bias of scale x_scale * w_scale
// (times `bias_scale_error` to make it wrong), each behind its DequantizeLinear; or, with
// float_bias, the same bias left float (no DequantizeLinear).
void add_quantized_conv(onnx::GraphProto* g, const std::string& name, const std::string& x,
                        float x_scale, int64_t c, int64_t m, const std::string& out,
                        float bias_scale_error = 1.0f, bool float_bias = false) {
  std::vector<int8_t> w(static_cast<size_t>(m * c * 9));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  std::vector<float> ws, bs;
  std::vector<int32_t> b;
  for (int64_t i = 0; i < m; ++i) {
    ws.push_back(0.002f * static_cast<float>(i + 1));
    bs.push_back(x_scale * ws.back() * bias_scale_error);
    b.push_back(static_cast<int32_t>(i * 50 - 60));
  }
  add_raw_initializer(g, name + "_wq", onnx::TensorProto::INT8, {m, c, 3, 3}, w);
  add_float_initializer(g, name + "_ws", {m}, ws);
  add_raw_initializer(g, name + "_wz", onnx::TensorProto::INT8, {m}, std::vector<int8_t>(m, 0));
  auto* dw = add_node(g, "DequantizeLinear", {name + "_wq", name + "_ws", name + "_wz"},
                      {name + "_w"}, name + "_dq_w");
  testing::add_int_attr(dw, "axis", 0);
  if (float_bias) {
    std::vector<float> bf;
    for (int64_t i = 0; i < m; ++i) bf.push_back(static_cast<float>(b[i]) * bs[i]);
    add_float_initializer(g, name + "_b", {m}, bf);
  } else {
    add_raw_initializer(g, name + "_bq", onnx::TensorProto::INT32, {m}, b);
    add_float_initializer(g, name + "_bs", {m}, bs);
    add_raw_initializer(g, name + "_bz", onnx::TensorProto::INT32, {m}, std::vector<int32_t>(m, 0));
    auto* db = add_node(g, "DequantizeLinear", {name + "_bq", name + "_bs", name + "_bz"},
                        {name + "_b"}, name + "_dq_b");
    testing::add_int_attr(db, "axis", 0);
  }
  auto* conv = add_node(g, "Conv", {x, name + "_w", name + "_b"}, {out}, name);
  auto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
}

// Q(out) then DQ, with a per-tensor uint8 scale/zero point.
void add_qdq(onnx::GraphProto* g, const std::string& t, float scale, uint8_t zp,
             const std::string& dequantized) {
  add_float_initializer(g, t + "_s", {}, {scale});
  add_uint8_scalar(g, t + "_z", zp);
  add_node(g, "QuantizeLinear", {t, t + "_s", t + "_z"}, {t + "_q"}, t + "_quantize");
  add_node(g, "DequantizeLinear", {t + "_q", t + "_s", t + "_z"}, {dequantized}, t + "_dequantize");
}

// x → Q/DQ (xd, read by conv1 and the Add) → conv1 → Relu → Q/DQ → conv2 → Q/DQ → Add(·, xd) →
// Relu → Q/DQ → y.
Model residual_block(float bias_scale_error = 1.0f, bool float_bias = false) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4, "h", "w"});
  add_qdq(g, "x", 0.02f, 128, "xd");
  add_quantized_conv(g, "conv1", "xd", 0.02f, 4, 4, "c1", bias_scale_error, float_bias);
  add_node(g, "Relu", {"c1"}, {"r1"}, "relu1");
  add_qdq(g, "r1", 0.03f, 0, "r1d");
  add_quantized_conv(g, "conv2", "r1d", 0.03f, 4, 4, "c2");
  add_qdq(g, "c2", 0.04f, 120, "c2d");
  add_node(g, "Add", {"c2d", "xd"}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {"r"}, "relu");
  add_qdq(g, "r", 0.05f, 0, "y");
  add_output(g, "y", {1, 4, "h", "w"});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq block");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

pipeline::CompileOptions ranges(bool fuse) {
  pipeline::CompileOptions o;
  o.rdp.ranges["h"] = {1, 32, 1};
  o.rdp.ranges["w"] = {1, 32, 1};
  o.fuse = fuse;
  return o;
}

// Runs the program on x [1, channels, h, w] (a fixed wave in [-2, 2]); the output's values.
std::vector<float> run(const pipeline::CompiledModel& c, int64_t h, int64_t w,
                       int64_t channels = 4) {
  auto session = rt::Session::create(c.program, rt::KernelRegistry::standard(), {1});
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  if (!session.ok()) return {};
  rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, channels, h, w});
  for (int64_t i = 0; i < x.shape().numel(); ++i)
    x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
  const rt::Tensor in[] = {x.view()};
  auto out = (*session)->run(in);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  const float* y = (*out)[0].as<float>();
  return std::vector<float>(y, y + (*out)[0].numel());
}

// Differences from the nodes one by one of at most one quantum (the int8 kernels sum exactly
// where the float Conv rounds), in few elements.
void expect_within_a_quantum(const pipeline::CompiledModel& fused,
                             const pipeline::CompiledModel& plain, float quantum) {
  for (auto [h, w] : {std::pair<int64_t, int64_t>{5, 7}, {16, 9}}) {
    const std::vector<float> a = run(fused, h, w), b = run(plain, h, w);
    ASSERT_EQ(a.size(), b.size());
    ASSERT_FALSE(a.empty());
    int differ = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_LE(std::fabs(a[i] - b[i]), quantum * 1.01f) << i;
      differ += a[i] != b[i];
    }
    EXPECT_LE(differ, static_cast<int>(a.size()) / 10);
  }
}

std::vector<std::string> kernel_ops(const pipeline::CompiledModel& c) {
  std::vector<std::string> ops;
  for (const rt::NodeDesc& n : c.program.graphs[0].nodes)
    ops.push_back((n.info.domain.empty() ? "" : n.info.domain + ":") + n.info.op_type);
  return ops;
}

TEST(QdqImport, ASharedDequantizeGetsOneCopyPerContraction) {
  const Model model = residual_block();
  const Graph& g = *model.graph;
  // xd's DequantizeLinear feeds conv1 and the Add: conv1 reads a copy, the Add the original.
  int copies = 0;
  for (const Node& n : g.nodes()) {
    if (n.name != "x_dequantize/for/conv1") continue;
    ++copies;
    EXPECT_EQ(n.op_type, "DequantizeLinear");
    ASSERT_EQ(n.outputs.size(), 1u);
    const Value& v = g.value(n.outputs[0]);
    ASSERT_EQ(v.consumers.size(), 1u);
    EXPECT_EQ(g.node(v.consumers[0]).name, "conv1");
  }
  EXPECT_EQ(copies, 1);
  const Value& xd = g.value(g.find("xd"));
  ASSERT_EQ(xd.consumers.size(), 1u);
  EXPECT_EQ(g.node(xd.consumers[0]).name, "add");
}

TEST(QdqFusion, ConvChainsAndTheResidualAddRunAsInt8Kernels) {
  auto c = pipeline::compile(residual_block(), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 2);
  // The residual join runs in conv2's kernel, not as a QAdd of its own.
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QAdd"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Add"), 0);
  // Left: quantizing the input and dequantizing the output.
  EXPECT_EQ(ops.size(), 4u);
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes) {
    if (n.info.op_type != "QFusedConv" || n.info.name != "conv2") continue;
    std::vector<std::string> types = n.fused_op_types;
    std::sort(types.begin(), types.end());
    EXPECT_EQ(types,
              (std::vector<std::string>{"Add", "Conv", "DequantizeLinear", "DequantizeLinear",
                                        "DequantizeLinear", "DequantizeLinear", "DequantizeLinear",
                                        "QuantizeLinear", "QuantizeLinear", "Relu"}));
    // Inputs 9-15: the residual (the input's 8-bit values), its parameters, those of conv2's
    // result, and the join's output.
    ASSERT_EQ(n.info.input_present.size(), 16u);
    EXPECT_EQ(n.info.input_dtypes[9], rt::DType::kUint8);
    EXPECT_EQ(n.info.output_dtypes, std::vector<rt::DType>{rt::DType::kUint8});
  }
  // conv1's group holds its three DequantizeLinears, the Relu and the QuantizeLinear.
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes) {
    if (n.info.op_type != "QFusedConv" || n.info.name != "conv1") continue;
    std::vector<std::string> types = n.fused_op_types;
    std::sort(types.begin(), types.end());
    EXPECT_EQ(types, (std::vector<std::string>{"Conv", "DequantizeLinear", "DequantizeLinear",
                                               "DequantizeLinear", "QuantizeLinear", "Relu"}));
    // The int8 output is planned at one byte per element.
    EXPECT_EQ(n.info.output_dtypes, std::vector<rt::DType>{rt::DType::kUint8});
  }
  EXPECT_EQ(c->refused_groups(), 0);

  // Against the nodes one by one (float Conv between them): a value may land one quantum (0.05)
  // away, never more.
  auto plain = pipeline::compile(residual_block(), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  expect_within_a_quantum(*c, *plain, 0.05f);
}

TEST(QdqFusion, ABiasOfAnotherScaleIsSplitSayingWhyAndStillRuns) {
  auto c = pipeline::compile(residual_block(1.5f), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 1);  // conv2 only
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 1);
  bool said = false;
  for (size_t i = 0; i < c->decisions.size(); ++i) {
    if (c->decisions[i].refusal != package::FusionRefusal::kUnsupportedQuantization) continue;
    said = true;
    EXPECT_EQ(c->decisions[i].at_node, "conv1");
  }
  EXPECT_TRUE(said);
  EXPECT_NE(
      std::string(package::fusion_refusal_text(package::FusionRefusal::kUnsupportedQuantization))
          .find("x_scale * w_scale"),
      std::string::npos);
  EXPECT_EQ(run(*c, 6, 6).size(), 4u * 36u);
}

// x → Q/DQ (xd) → conv1 → Q/DQ → conv2 → Q/DQ → Add ← Q/DQ ← conv3 (xd's downsampling) ... →
// Relu → Q/DQ → y: both operands of the join are convolutions' results (a ResNet's first block
// of a stage).
Model downsample_block() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4, "h", "w"});
  add_qdq(g, "x", 0.02f, 128, "xd");
  add_quantized_conv(g, "conv1", "xd", 0.02f, 4, 4, "c1");
  add_qdq(g, "c1", 0.03f, 0, "c1d");
  add_quantized_conv(g, "conv2", "c1d", 0.03f, 4, 4, "c2");
  add_qdq(g, "c2", 0.04f, 120, "c2d");
  add_quantized_conv(g, "conv3", "xd", 0.02f, 4, 4, "c3");
  add_qdq(g, "c3", 0.035f, 127, "c3d");
  add_node(g, "Add", {"c2d", "c3d"}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {"r"}, "relu");
  add_qdq(g, "r", 0.05f, 0, "y");
  add_output(g, "y", {1, 4, "h", "w"});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq downsampling block");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// Where both operands of a join are convolutions' results, the later convolution runs the join
// and reads the other's 8-bit result as its residual.
TEST(QdqFusion, TheLaterOfTwoConvolutionsRunsTheirJoin) {
  auto c = pipeline::compile(downsample_block(), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 3);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QAdd"), 0);
  EXPECT_EQ(c->refused_groups(), 0);
  const Graph& g = c->graph();
  NodeId conv3 = kNoNode;
  for (NodeId i = 0; i < static_cast<NodeId>(g.num_nodes()); ++i)
    if (g.node(i).name == "conv3") conv3 = i;
  ASSERT_NE(conv3, kNoNode);
  // conv3 comes after conv2 in the file's order: its group holds the Add.
  const opt::FusionGroup& grp =
      c->candidates.groups[static_cast<size_t>(c->candidates.group_of[static_cast<size_t>(conv3)])];
  bool has_add = false;
  for (NodeId n : grp.nodes) has_add = has_add || g.node(n).op_type == "Add";
  EXPECT_TRUE(has_add);
  auto plain = pipeline::compile(downsample_block(), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  expect_within_a_quantum(*c, *plain, 0.05f);
}

// x → Q/DQ → conv1 → Q/DQ → Add(·, DequantizeLinear(xq)) → Relu → y (float): the last residual
// block before a float head. With `per_channel_residual`, the residual's DequantizeLinear has a
// scale per channel, which no int8 kernel reads; with `pooled`, a GlobalAveragePool follows.
Model float_ended_join(bool per_channel_residual, bool pooled = false) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4, "h", "w"});
  add_qdq(g, "x", 0.02f, 128, "xd");
  add_quantized_conv(g, "conv1", "xd", 0.02f, 4, 4, "c1");
  add_qdq(g, "c1", 0.04f, 120, "c1d");
  std::string residual = "xd";
  if (per_channel_residual) {
    add_float_initializer(g, "rs", {4}, {0.02f, 0.021f, 0.019f, 0.02f});
    add_raw_initializer<uint8_t>(g, "rz", onnx::TensorProto::UINT8, {4}, {128, 128, 127, 128});
    auto* dq = add_node(g, "DequantizeLinear", {"x_q", "rs", "rz"}, {"xr"}, "residual_dequantize");
    testing::add_int_attr(dq, "axis", 1);
    residual = "xr";
  }
  add_node(g, "Add", {"c1d", residual}, {"s"}, "add");
  add_node(g, "Relu", {"s"}, {pooled ? "r" : "y"}, "relu");
  if (pooled) {
    add_node(g, "GlobalAveragePool", {"r"}, {"y"}, "pool");
    add_output(g, "y", {1, 4, 1, 1});
  } else {
    add_output(g, "y", {1, 4, "h", "w"});
  }
  auto model = import_onnx_bytes(testing::serialize(m), "", "float-ended join");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// A join that ends in float runs inside its convolution too, writing the float sum. Before, it
// had no kernel: its DequantizeLinears, Add and Relu ran one by one.
TEST(QdqFusion, AJoinEndingInFloatRunsInsideItsConvolution) {
  auto c = pipeline::compile(float_ended_join(false), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Add"), 0);
  EXPECT_EQ(ops.size(), 2u);  // and quantizing the input
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes)
    if (n.info.op_type == "QFusedConv")
      EXPECT_EQ(n.info.output_dtypes, std::vector<rt::DType>{rt::DType::kFloat});
  auto plain = pipeline::compile(float_ended_join(false), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  expect_within_a_quantum(*c, *plain, 0.04f);
}

// Followed by a GlobalAveragePool (a ResNet's last block), the join still runs inside the
// convolution: the pool, which would have taken the join's nodes as its prologue, runs alone.
// Before, that group had no kernel and its five nodes ran one by one.
TEST(QdqFusion, AJoinBeforeAGlobalPoolRunsInsideItsConvolution) {
  auto c = pipeline::compile(float_ended_join(false, true), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(ops,
            (std::vector<std::string>{"QuantizeLinear", "sod2:QFusedConv", "GlobalAveragePool"}));
  EXPECT_EQ(c->refused_groups(), 0);
  auto plain = pipeline::compile(float_ended_join(false, true), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  // A mean of values at most one quantum apart.
  expect_within_a_quantum(*c, *plain, 0.04f);
}

// A join no int8 kernel runs (its residual dequantized per channel) is split off its
// convolution, which still runs as QFusedConv, and the plan says why.
TEST(QdqFusion, AJoinTheInt8KernelsCannotRunIsSplitOffItsConvolution) {
  auto c = pipeline::compile(float_ended_join(true), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Add"), 1);
  bool said = false;
  for (const opt::FusionGroup& grp : c->candidates.groups)
    for (const std::string& note : grp.not_fused)
      said = said || note.find("not fused with the residual join after it") != std::string::npos;
  EXPECT_TRUE(said);
  auto plain = pipeline::compile(float_ended_join(true), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  expect_within_a_quantum(*c, *plain, 0.04f);
}

// A bias the quantiser left float fuses too: the int8 kernel adds it to the dequantized sums.
// Before, the group was refused and its DequantizeLinears ran every run.
TEST(QdqFusion, AConvWhoseBiasStayedFloatRunsAsAnInt8Kernel) {
  auto c = pipeline::compile(residual_block(1.0f, true), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Conv"), 0);
  EXPECT_EQ(c->refused_groups(), 0);
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes) {
    if (n.info.op_type != "QFusedConv" || n.info.name != "conv1") continue;
    ASSERT_EQ(n.info.input_dtypes.size(), 9u);
    EXPECT_EQ(n.info.input_dtypes[8], rt::DType::kFloat);
  }
  auto plain = pipeline::compile(residual_block(1.0f, true), ranges(false));
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  const std::vector<float> fused = run(*c, 11, 6), unfused = run(*plain, 11, 6);
  ASSERT_EQ(fused.size(), unfused.size());
  ASSERT_FALSE(fused.empty());
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_LE(std::fabs(fused[i] - unfused[i]), 0.05f * 1.01f) << i;
}

// x → Q/DQ → MaxPool → Q (parameters `out_scale`) → DQ → y.
Model quantized_max_pool(float out_scale) {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 3, "h", "w"});
  add_qdq(g, "x", 0.02f, 100, "xd");
  auto* pool = add_node(g, "MaxPool", {"xd"}, {"p"}, "pool");
  for (const char* name : {"kernel_shape", "strides", "pads"}) {
    auto* at = pool->add_attribute();
    at->set_name(name);
    at->set_type(onnx::AttributeProto::INTS);
    const int64_t v = std::string(name) == "kernel_shape" ? 3
                      : std::string(name) == "strides"    ? 2
                                                          : 1;
    for (int i = 0; i < (std::string(name) == "pads" ? 4 : 2); ++i) at->add_ints(v);
  }
  add_float_initializer(g, "p_s", {}, {out_scale});
  add_uint8_scalar(g, "p_z", 100);
  add_node(g, "QuantizeLinear", {"p", "p_s", "p_z"}, {"pq"}, "p_quantize");
  add_node(g, "DequantizeLinear", {"pq", "p_s", "p_z"}, {"y"}, "p_dequantize");
  add_output(g, "y", {1, 3, "oh", "ow"});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq max pool");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

TEST(QdqFusion, MaxPoolBetweenEqualParametersRunsOnTheEightBitValues) {
  auto c = pipeline::compile(quantized_max_pool(0.02f), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  bool eight_bit_pool = false;
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes)
    if (n.info.op_type == "MaxPool")
      eight_bit_pool = n.info.input_dtypes == std::vector<rt::DType>{rt::DType::kUint8};
  EXPECT_TRUE(eight_bit_pool);
  EXPECT_EQ(kernel_ops(*c).size(), 3u);  // Q, MaxPool, DQ
  auto plain = pipeline::compile(quantized_max_pool(0.02f), ranges(false));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(run(*c, 9, 12, 3), run(*plain, 9, 12, 3));  // exactly
  // Other output parameters: not the same values, so the float MaxPool runs.
  auto other = pipeline::compile(quantized_max_pool(0.03f), ranges(true));
  ASSERT_TRUE(other.ok());
  for (const rt::NodeDesc& n : other->program.graphs[0].nodes)
    if (n.info.op_type == "MaxPool")
      EXPECT_EQ(n.info.input_dtypes, std::vector<rt::DType>{rt::DType::kFloat});
}

// x → Q/DQ → conv → HardSigmoid → y: the conv's QDQ group ends in float (as a squeeze-excite's
// second conv does before its Mul), so it runs as a QFusedConv with a float output.
Model float_ended_conv() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4, "h", "w"});
  add_qdq(g, "x", 0.02f, 128, "xd");
  add_quantized_conv(g, "conv", "xd", 0.02f, 4, 4, "c");
  add_node(g, "HardSigmoid", {"c"}, {"y"}, "gate");
  add_output(g, "y", {1, 4, "h", "w"});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq float end");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// A squeeze-excite's scaling in a QDQ model: float x * s (s [1, C, 1, 1]) -> QuantizeLinear ->
// DequantizeLinear -> y.
Model quantized_scale() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4, "h", "w"});
  add_float_initializer(g, "s", {1, 4, 1, 1}, {0.25f, 0.5f, 0.75f, 1.f});
  add_node(g, "Mul", {"x", "s"}, {"m"}, "scale");
  add_qdq(g, "m", 0.05f, 7, "y");
  add_output(g, "y", {1, 4, "h", "w"});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq scale");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

// The float ops before a QuantizeLinear run as one FusedElementwise that writes the 8-bit values
// (before, the Mul wrote floats and QuantizeLinear read them back): the same values as the nodes
// one by one; on Vulkan the group is refused, saying why.
TEST(QdqFusion, FloatOpsBeforeAQuantizeLinearWriteTheEightBitValues) {
  auto c = pipeline::compile(quantized_scale(), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  bool fused = false;
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes) {
    if (!rt::is_fused_elementwise(n.info.domain, n.info.op_type)) continue;
    fused = true;
    EXPECT_EQ(n.fused_op_types, (std::vector<std::string>{"Mul", "QuantizeLinear"}));
    EXPECT_EQ(n.info.output_dtypes, std::vector<rt::DType>{rt::DType::kUint8});
  }
  EXPECT_TRUE(fused);
  EXPECT_EQ(kernel_ops(*c).size(), 2u);  // the fused group, DequantizeLinear
  auto plain = pipeline::compile(quantized_scale(), ranges(false));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(run(*c, 9, 13), run(*plain, 9, 13));  // exactly

  pipeline::CompileOptions vulkan = ranges(true);
  vulkan.target = pipeline::Target::kVulkan;
  auto v = pipeline::compile(quantized_scale(), vulkan);
  ASSERT_TRUE(v.ok()) << v.status().to_string();
  bool refused = false;
  for (const auto& d : v->decisions)
    refused = refused || d.refusal == package::FusionRefusal::kUnsupportedQuantization;
  EXPECT_TRUE(refused);
  for (const rt::NodeDesc& n : v->program.graphs[0].nodes)
    EXPECT_FALSE(rt::is_fused_elementwise(n.info.domain, n.info.op_type));
}

TEST(QdqFusion, AGroupEndingInFloatRunsAsAQFusedConvWithAFloatOutput) {
  auto c = pipeline::compile(float_ended_conv(), ranges(true));
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedConv"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "DequantizeLinear"), 0);  // all in the kernel
  for (const rt::NodeDesc& n : c->program.graphs[0].nodes) {
    if (n.info.op_type != "QFusedConv") continue;
    EXPECT_FALSE(n.info.input_present[6]);  // no y_scale: a float result
    EXPECT_EQ(n.info.output_dtypes, std::vector<rt::DType>{rt::DType::kFloat});
  }
  auto plain = pipeline::compile(float_ended_conv(), ranges(false));
  ASSERT_TRUE(plain.ok());
  const std::vector<float> fused = run(*c, 7, 9), reference = run(*plain, 7, 9);
  ASSERT_EQ(fused.size(), reference.size());
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_NEAR(fused[i], reference[i], 1e-5f * (1 + std::fabs(reference[i]))) << i;
}

// x [b, 8] → Q/DQ → Gemm(transB, int8 weights per output, int32 bias) → Relu → Q/DQ → MatMul
// (int8 weights per column) → y: two QDQ groups of matrix products, the second ending in float.
Model quantized_gemm_matmul() {
  onnx::ModelProto m = testing::make_model(17);
  auto* g = m.mutable_graph();
  add_input(g, "x", {"b", 8});
  add_qdq(g, "x", 0.02f, 128, "xd");
  std::vector<int8_t> w1(32), w2(12);
  for (size_t i = 0; i < w1.size(); ++i)
    w1[i] = static_cast<int8_t>(static_cast<int>(i * 29 % 200) - 100);
  for (size_t i = 0; i < w2.size(); ++i)
    w2[i] = static_cast<int8_t>(static_cast<int>(i * 53 % 180) - 90);
  const std::vector<float> w1s{0.01f, 0.02f, 0.015f, 0.005f}, w2s{0.01f, 0.03f, 0.02f};
  std::vector<float> b1s;
  for (float s : w1s) b1s.push_back(0.02f * s);
  add_raw_initializer(g, "w1q", onnx::TensorProto::INT8, {4, 8}, w1);
  add_float_initializer(g, "w1s", {4}, w1s);
  add_raw_initializer(g, "b1q", onnx::TensorProto::INT32, {4}, std::vector<int32_t>{-40, 5, 70, 0});
  add_float_initializer(g, "b1s", {4}, b1s);
  testing::add_int_attr(add_node(g, "DequantizeLinear", {"w1q", "w1s"}, {"w1"}, "dq_w1"), "axis",
                        0);
  testing::add_int_attr(add_node(g, "DequantizeLinear", {"b1q", "b1s"}, {"b1"}, "dq_b1"), "axis",
                        0);
  testing::add_int_attr(add_node(g, "Gemm", {"xd", "w1", "b1"}, {"h"}, "gemm"), "transB", 1);
  add_node(g, "Relu", {"h"}, {"hr"}, "relu");
  add_qdq(g, "hr", 0.03f, 0, "hd");
  add_raw_initializer(g, "w2q", onnx::TensorProto::INT8, {4, 3}, w2);
  add_float_initializer(g, "w2s", {3}, w2s);
  add_node(g, "DequantizeLinear", {"w2q", "w2s"}, {"w2"}, "dq_w2");  // axis 1 (the default)
  add_node(g, "MatMul", {"hd", "w2"}, {"y"}, "matmul");
  add_output(g, "y", {"b", 3});
  auto model = import_onnx_bytes(testing::serialize(m), "", "qdq gemm matmul");
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  return std::move(*model);
}

TEST(QdqFusion, GemmAndMatMulGroupsRunAsQFusedMatMul) {
  pipeline::CompileOptions o;
  o.rdp.ranges["b"] = {1, 16, 1};
  auto c = pipeline::compile(quantized_gemm_matmul(), o);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const std::vector<std::string> ops = kernel_ops(*c);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "sod2:QFusedMatMul"), 2);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "DequantizeLinear"), 0);
  o.fuse = false;
  auto plain = pipeline::compile(quantized_gemm_matmul(), o);
  ASSERT_TRUE(plain.ok());
  auto run_on = [](const pipeline::CompiledModel& cm) {
    auto session = rt::Session::create(cm.program, rt::KernelRegistry::standard(), {1});
    EXPECT_TRUE(session.ok()) << session.status().to_string();
    rt::HostTensor x(rt::DType::kFloat, rt::Shape{5, 8});
    for (int64_t i = 0; i < 40; ++i)
      x.data<float>()[i] = std::sin(0.61f * static_cast<float>(i)) * 2.0f;
    const rt::Tensor in[] = {x.view()};
    auto out = (*session)->run(in);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    const float* y = (*out)[0].as<float>();
    return std::vector<float>(y, y + (*out)[0].numel());
  };
  const std::vector<float> fused = run_on(*c), reference = run_on(*plain);
  ASSERT_EQ(fused.size(), 15u);
  ASSERT_EQ(reference.size(), 15u);
  // The Gemm's requantization is exact; the unfused float Gemm may round an 8-bit value a step
  // apart, which the MatMul then scales by at most 0.03 * 100 * 0.03 per term.
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_NEAR(fused[i], reference[i], 0.1f) << i;
}

// QuantizeLinear-21's output_dtype gives the output's type when there is no zero point (here
// int8, which the runtime then writes); with a zero point of another type, compiling says so.
TEST(QdqImport, QuantizeLinearOutputDtypeSetsTheTypeAndMustAgreeWithTheZeroPoint) {
  for (bool with_zero_point : {false, true}) {
    onnx::ModelProto m = testing::make_model(21);
    auto* g = m.mutable_graph();
    add_input(g, "x", {1, 4});
    add_float_initializer(g, "scale", {}, {0.5f});
    std::vector<std::string> inputs{"x", "scale"};
    if (with_zero_point) {
      add_uint8_scalar(g, "zp", 0);  // disagrees with output_dtype int8
      inputs.push_back("zp");
    }
    testing::add_int_attr(add_node(g, "QuantizeLinear", inputs, {"y"}, "q"), "output_dtype",
                          onnx::TensorProto::INT8);
    add_output(g, "y", {1, 4}, onnx::TensorProto::INT8);
    auto model = import_onnx_bytes(testing::serialize(m), "", "output_dtype");
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    auto c = pipeline::compile(std::move(*model), {});
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    rt::HostTensor x(rt::DType::kFloat, rt::Shape{1, 4});
    const float xs[] = {-100.f, -1.25f, 0.75f, 3.f};
    std::copy(xs, xs + 4, x.data<float>());
    const rt::Tensor in[] = {x.view()};
    auto out = (*session)->run(in);
    if (with_zero_point) {
      // RDP says so (sod2 inspect shows it), and the kernel refuses to run it.
      bool said = false;
      for (const auto& d : c->rdp.diagnostics())
        said =
            said || d.message.find("differs from y_zero_point's type uint8") != std::string::npos;
      EXPECT_TRUE(said);
      ASSERT_FALSE(out.ok());
      EXPECT_NE(out.status().message().find("y_zero_point's type uint8 differs"), std::string::npos)
          << out.status().message();
      continue;
    }
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ((*out)[0].dtype, rt::DType::kInt8);
    const int8_t* y = (*out)[0].as<int8_t>();
    EXPECT_EQ(std::vector<int>(y, y + 4), (std::vector<int>{-128, -2, 2, 6}));  // half to even
  }
}

// DequantizeLinear-23's output_dtype: float16 out of a float scale.
TEST(QdqImport, DequantizeLinearOutputDtypeFloat16) {
  onnx::ModelProto m = testing::make_model(23);
  auto* g = m.mutable_graph();
  add_input(g, "x", {1, 4}, onnx::TensorProto::UINT8);
  add_float_initializer(g, "scale", {}, {0.5f});
  add_uint8_scalar(g, "zp", 10);
  testing::add_int_attr(add_node(g, "DequantizeLinear", {"x", "scale", "zp"}, {"y"}, "dq"),
                        "output_dtype", onnx::TensorProto::FLOAT16);
  add_output(g, "y", {1, 4}, onnx::TensorProto::FLOAT16);
  auto model = import_onnx_bytes(testing::serialize(m), "", "output_dtype");
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto c = pipeline::compile(std::move(*model), {});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  auto session = rt::Session::create(c->program, rt::KernelRegistry::standard(), {1});
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  rt::HostTensor x(rt::DType::kUint8, rt::Shape{1, 4});
  const uint8_t xs[] = {0, 10, 11, 255};
  std::copy(xs, xs + 4, x.data<uint8_t>());
  const rt::Tensor in[] = {x.view()};
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ((*out)[0].dtype, rt::DType::kFloat16);
  const auto* y = (*out)[0].as<uint16_t>();
  // -5, 0, 0.5, 122.5 in half precision.
  EXPECT_EQ(std::vector<uint16_t>(y, y + 4),
            (std::vector<uint16_t>{0xC500, 0x0000, 0x3800, 0x57A8}));
}

// The int8 kernels allocate nothing once warm (weights packed and scratch sized on the first
// runs): QFusedConv (its requantizing VNNI store too), QFusedConv with a float end, QAdd,
// QFusedMatMul with a transposed B.
TEST(QdqFusion, WarmRunsOfInt8KernelsAllocateNothing) {
  struct Case {
    const char* name;
    Model (*make)();
    rt::Shape shape;
    pipeline::CompileOptions options;
  };
  pipeline::CompileOptions hw = ranges(true), batch;
  batch.rdp.ranges["b"] = {1, 16, 1};
  const Case cases[] = {{"residual block", [] { return residual_block(); }, {1, 4, 12, 10}, hw},
                        {"float end", float_ended_conv, {1, 4, 12, 10}, hw},
                        {"gemm and matmul", quantized_gemm_matmul, {5, 8}, batch}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto compiled = pipeline::compile(c.make(), c.options);
    ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
    auto session = rt::Session::create(compiled->program, rt::KernelRegistry::standard(), {2});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    rt::HostTensor x(rt::DType::kFloat, c.shape);
    for (int64_t i = 0; i < x.shape().numel(); ++i)
      x.data<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 2.0f;
    const rt::Tensor in[] = {x.view()};
    for (int warm = 0; warm < 2; ++warm) ASSERT_TRUE((*session)->run(in).ok());
    const int64_t before = g_allocations.load();
    for (int r = 0; r < 3; ++r) ASSERT_TRUE((*session)->run(in).ok());
    EXPECT_EQ(g_allocations.load() - before, 0) << "allocations in 3 warm runs";
  }
}

}  // namespace
}  // namespace sod2
