// Writes the opset 18-23 test models of tests/onnx/opset18plus/cases: for each case
// CASE/model.onnx and CASE/test_data_set_0/input_N.pb (deterministic inputs). The reference
// outputs (output_N.pb) come from ONNX Runtime through run_ort.js; generate.sh runs both.
// Usage: make_opset18plus_models OUT_DIR
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "../proto_builder.h"

namespace {

namespace fs = std::filesystem;
using namespace sod2::testing;

struct Input {
  std::string name;
  std::vector<int64_t> dims;
  int32_t elem = onnx::TensorProto::FLOAT;
};

struct Case {
  std::string name;
  int64_t opset;
  std::function<void(onnx::GraphProto*)> build;  // nodes, initializers, outputs
  std::vector<Input> inputs;
};

// A fixed pseudo-random sequence (values in [-2, 2) for floats, [-50, 50) for integers).
struct Lcg {
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  uint32_t next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(s >> 33);
  }
};

onnx::TensorProto make_input(const Input& in, Lcg& rng) {
  onnx::TensorProto t;
  t.set_name(in.name);
  t.set_data_type(in.elem);
  int64_t n = 1;
  for (int64_t d : in.dims) {
    t.add_dims(d);
    n *= d;
  }
  std::string raw;
  for (int64_t i = 0; i < n; ++i) {
    if (in.elem == onnx::TensorProto::FLOAT) {
      const float v = static_cast<float>(rng.next() % 4000) / 1000.f - 2.f;
      raw.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else if (in.elem == onnx::TensorProto::INT32) {
      const int32_t v = static_cast<int32_t>(rng.next() % 100) - 50;
      raw.append(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      const int64_t v = static_cast<int64_t>(rng.next() % 100) - 50;
      raw.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
  }
  t.set_raw_data(raw);
  return t;
}

onnx::TensorProto* add_int64_initializer(onnx::GraphProto* g, const std::string& name,
                                         std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t v : values) t->add_int64_data(v);
  return t;
}

// A graph output with its element type and no shape (the runtimes infer it).
void output(onnx::GraphProto* g, const std::string& name, int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_output();
  vi->set_name(name);
  vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
}

onnx::AttributeProto* add_string_attr(onnx::NodeProto* n, const std::string& name,
                                      const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
  return a;
}

onnx::AttributeProto* add_float_attr(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
  return a;
}

onnx::AttributeProto* add_ints_attr(onnx::NodeProto* n, const std::string& name,
                                    std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
  return a;
}

// An INT4 (22) or UINT4 (21) initializer of `values`, packed two a byte with the first in the low
// nibble (an odd count leaves the last high nibble zero).
onnx::TensorProto* add_four_bit_initializer(onnx::GraphProto* g, const std::string& name,
                                            bool is_signed, std::vector<int64_t> dims,
                                            const std::vector<int>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(is_signed ? 22 : 21);
  for (int64_t d : dims) t->add_dims(d);
  std::string raw((values.size() + 1) / 2, '\0');
  for (size_t i = 0; i < values.size(); ++i)
    raw[i / 2] =
        static_cast<char>(static_cast<uint8_t>(raw[i / 2]) | ((values[i] & 0xF) << (4 * (i % 2))));
  t->set_raw_data(raw);
  return t;
}

// n values cycling through every 4-bit code: -8..7 signed, 0..15 unsigned.
std::vector<int> four_bit_codes(size_t n, bool is_signed, int step, int offset) {
  std::vector<int> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<int>((i * static_cast<size_t>(step) + static_cast<size_t>(offset)) % 16) -
           (is_signed ? 8 : 0);
  return v;
}

// n scales in [0.01, 0.05).
std::vector<float> small_scales(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = 0.01f + 0.005f * static_cast<float>((i * 3) % 8);
  return v;
}

// A float8 initializer (FLOAT8E4M3FN = 17 ... FLOAT8E5M2FNUZ = 20) of raw codes, as ONNX stores
// them: one code per int32_data entry (`as_int32`), or one byte each in raw_data.
onnx::TensorProto* add_float8_initializer(onnx::GraphProto* g, const std::string& name,
                                          int32_t type, std::vector<int64_t> dims,
                                          const std::vector<uint8_t>& codes, bool as_int32) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  if (as_int32) {
    for (uint8_t c : codes) t->add_int32_data(c);
  } else {
    t->set_raw_data(std::string(codes.begin(), codes.end()));
  }
  return t;
}

// v = x * scale (values far past every float8 range) stacked over specials: infinities, NaN, -0,
// the e4m3fn limit 448 and the values around it, half the smallest e4m3fn subnormal, values
// around the e5m2 and e4m3fnuz limits. v_finite is v with +-1e30 for the infinities.
// Two of the spec's rows are left out, where ONNX Runtime 1.30 departs from Cast's table (the
// runtime follows the table; tests/runtime/kernels/math/float8_test.cpp checks both): +-inf to a
// fnuz type with saturate (ONNX Runtime: +-max; the table: NaN), and e5m2 without saturate for
// values from 61440 (the tie between its largest value and infinity) up to 65536 (ONNX Runtime:
// NaN; the table: infinity, which 70000 here gets from both).
void float8_cast_inputs(onnx::GraphProto* g, int64_t cols) {
  std::vector<float> scale(static_cast<size_t>(cols));
  const float kScales[] = {1.f, 10.f, 100.f, 300.f, 1000.f, 3e4f, 1e5f, 1e-3f};
  for (int64_t i = 0; i < cols; ++i) scale[static_cast<size_t>(i)] = kScales[i % 8];
  add_float_initializer(g, "scale", {1, cols}, scale);
  const float inf = std::numeric_limits<float>::infinity();
  add_float_initializer(g, "specials", {1, 8},
                        {inf, -inf, std::nanf(""), 448.f, 464.f, 465.f, -0.f, 0x1p-10f});
  add_float_initializer(g, "specials_finite", {1, 8},
                        {1e30f, -1e30f, std::nanf(""), 448.f, 464.f, 465.f, -0.f, 0x1p-10f});
  add_float_initializer(g, "specials2", {1, 8},
                        {70000.f, -61439.f, 240.f, 248.f, -1e9f, 0.3f, 1.0625f, -0x1p-17f});
  add_node(g, "Mul", {"x", "scale"}, {"xs"});
  add_int_attr(add_node(g, "Concat", {"xs", "specials", "specials2"}, {"v"}), "axis", 0);
  add_int_attr(add_node(g, "Concat", {"xs", "specials_finite", "specials2"}, {"v_finite"}), "axis",
               0);
}

// Cast v to each float8 type with `saturate`, and back to float: four outputs.
void float8_casts(onnx::GraphProto* g, int64_t saturate) {
  const std::pair<int32_t, const char*> types[] = {
      {17, "e4m3fn"}, {18, "e4m3fnuz"}, {19, "e5m2"}, {20, "e5m2fnuz"}};
  for (const auto& [type, name] : types) {
    const std::string q = std::string("q_") + name, y = std::string("y_") + name;
    const bool fnuz = type == 18 || type == 20;
    auto* to8 = add_node(g, "Cast", {fnuz && saturate ? "v_finite" : "v"}, {q});
    add_int_attr(to8, "to", type);
    add_int_attr(to8, "saturate", saturate);
    add_int_attr(add_node(g, "Cast", {q}, {y}), "to", onnx::TensorProto::FLOAT);
    output(g, y);
  }
}

std::vector<Case> cases() {
  std::vector<Case> c;
  // Reduce* at 18: axes as an optional input, noop_with_empty_axes.
  c.push_back(
      {"reduce18",
       18,
       [](onnx::GraphProto* g) {
         add_int64_initializer(g, "ax1", {1}, {1});
         add_int64_initializer(g, "ax02", {2}, {0, 2});
         add_int64_initializer(g, "axlast", {1}, {-1});
         add_int64_initializer(g, "noaxes", {0}, {});
         add_node(g, "ReduceMean", {"x", "ax1"}, {"mean"});
         add_int_attr(add_node(g, "ReduceMax", {"x"}, {"max_noop"}), "noop_with_empty_axes", 1);
         add_int_attr(add_node(g, "ReduceMin", {"x", "ax02"}, {"min"}), "keepdims", 0);
         add_node(g, "ReduceProd", {"x", "axlast"}, {"prod"});
         add_node(g, "ReduceL1", {"x", "ax1"}, {"l1"});
         add_node(g, "ReduceLogSum", {"l1", "axlast"}, {"logsum"});
         add_int_attr(add_node(g, "ReduceL2", {"x", "axlast"}, {"l2"}), "keepdims", 0);
         add_node(g, "ReduceLogSumExp", {"x", "ax02"}, {"lse"});
         add_int_attr(add_node(g, "ReduceSumSquare", {"x", "noaxes"}, {"sumsq"}), "keepdims", 0);
         for (const char* o :
              {"mean", "max_noop", "min", "prod", "l1", "logsum", "l2", "lse", "sumsq"})
           output(g, o);
       },
       {{"x", {2, 3, 4}}}});
  // Split-18 num_outputs with an uneven last part.
  c.push_back({"split18_num_outputs",
               18,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Split", {"x"}, {"a", "b", "c"});
                 add_int_attr(n, "axis", 1);
                 add_int_attr(n, "num_outputs", 3);
                 for (const char* o : {"a", "b", "c"}) output(g, o);
               },
               {{"x", {2, 7}}}});
  // Pad-18 with an axes input and a constant value.
  c.push_back({"pad18_axes",
               18,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "pads", {4}, {1, 0, 2, 1});
                 add_float_initializer(g, "value", {}, {0.5f});
                 add_int64_initializer(g, "axes", {2}, {2, -2});
                 add_node(g, "Pad", {"x", "pads", "value", "axes"}, {"y"});
                 output(g, "y");
               },
               {{"x", {2, 3, 4}}}});
  // Pad-19 wrap mode.
  c.push_back({"pad19_wrap",
               19,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "pads", {4}, {1, 2, 0, 3});
                 add_string_attr(add_node(g, "Pad", {"x", "pads"}, {"y"}), "mode", "wrap");
                 output(g, "y");
               },
               {{"x", {3, 4}}}});
  // Resize-18 axes with scales (linear).
  c.push_back({"resize18_axes",
               18,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scales", {2}, {2.f, 1.5f});
                 auto* n = add_node(g, "Resize", {"x", "", "scales"}, {"y"});
                 add_string_attr(n, "mode", "linear");
                 add_ints_attr(n, "axes", {2, 3});
                 output(g, "y");
               },
               {{"x", {1, 2, 4, 6}}}});
  // Resize-18 keep_aspect_ratio_policy not_larger with sizes (nearest).
  c.push_back({"resize18_not_larger",
               18,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "sizes", {2}, {3, 3});
                 auto* n = add_node(g, "Resize", {"x", "", "", "sizes"}, {"y"});
                 add_string_attr(n, "keep_aspect_ratio_policy", "not_larger");
                 add_ints_attr(n, "axes", {2, 3});
                 output(g, "y");
               },
               {{"x", {1, 1, 4, 6}}}});
  // Resize-18 tf_crop_and_resize on one axis (roi for that axis only), with sizes.
  c.push_back({"resize18_crop_axis",
               18,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "roi", {2}, {0.2f, 0.9f});
                 add_int64_initializer(g, "sizes", {1}, {5});
                 auto* n = add_node(g, "Resize", {"x", "roi", "", "sizes"}, {"y"});
                 add_string_attr(n, "mode", "linear");
                 add_string_attr(n, "coordinate_transformation_mode", "tf_crop_and_resize");
                 add_ints_attr(n, "axes", {3});
                 output(g, "y");
               },
               {{"x", {1, 2, 3, 4}}}});
  // Resize-19 half_pixel_symmetric (linear).
  c.push_back({"resize19_half_pixel_symmetric",
               19,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scales", {4}, {1.f, 1.f, 1.7f, 2.3f});
                 auto* n = add_node(g, "Resize", {"x", "", "scales"}, {"y"});
                 add_string_attr(n, "mode", "linear");
                 add_string_attr(n, "coordinate_transformation_mode", "half_pixel_symmetric");
                 output(g, "y");
               },
               {{"x", {1, 1, 3, 4}}}});
  // ScatterElements max and ScatterND min (18).
  c.push_back({"scatter18_max_min",
               18,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "ei", {2, 3}, {1, 0, 2, 0, 2, 1});
                 add_int64_initializer(g, "ni", {2, 1}, {0, 2});
                 auto* e = add_node(g, "ScatterElements", {"x", "ei", "u"}, {"emax"});
                 add_int_attr(e, "axis", 0);
                 add_string_attr(e, "reduction", "max");
                 auto* n = add_node(g, "ScatterND", {"x", "ni", "v"}, {"nmin"});
                 add_string_attr(n, "reduction", "min");
                 output(g, "emax");
                 output(g, "nmin");
               },
               {{"x", {3, 3}}, {"u", {2, 3}}, {"v", {2, 3}}}});
  // Gelu-20, both forms.
  c.push_back({"gelu20",
               20,
               [](onnx::GraphProto* g) {
                 add_node(g, "Gelu", {"x"}, {"exact"});
                 add_string_attr(add_node(g, "Gelu", {"x"}, {"tanh"}), "approximate", "tanh");
                 output(g, "exact");
                 output(g, "tanh");
               },
               {{"x", {3, 5}}}});
  c.push_back({"mish18",
               18,
               [](onnx::GraphProto* g) {
                 add_node(g, "Mish", {"x"}, {"y"});
                 output(g, "y");
               },
               {{"x", {4, 6}}}});
  // GroupNormalization-21: per-channel scale and bias.
  c.push_back({"group_norm21",
               21,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scale", {4}, {1.f, 0.5f, -1.f, 2.f});
                 add_float_initializer(g, "bias", {4}, {0.f, 0.25f, 1.f, -0.5f});
                 auto* n = add_node(g, "GroupNormalization", {"x", "scale", "bias"}, {"y"});
                 add_int_attr(n, "num_groups", 2);
                 add_float_attr(n, "epsilon", 1e-3f);
                 output(g, "y");
               },
               {{"x", {2, 4, 3, 3}}}});
  // GroupNormalization-18: scale and bias per group.
  c.push_back({"group_norm18",
               18,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scale", {2}, {1.5f, -0.5f});
                 add_float_initializer(g, "bias", {2}, {0.25f, 1.f});
                 auto* n = add_node(g, "GroupNormalization", {"x", "scale", "bias"}, {"y"});
                 add_int_attr(n, "num_groups", 2);
                 output(g, "y");
               },
               {{"x", {2, 4, 3}}}});
  // RMSNormalization-23 over the last two dims, scale broadcast over them.
  c.push_back({"rms_norm23",
               23,
               [](onnx::GraphProto* g) {
                 std::vector<float> s;
                 for (int i = 0; i < 8; ++i) s.push_back(0.5f + 0.25f * static_cast<float>(i));
                 add_float_initializer(g, "scale", {8}, s);
                 auto* n = add_node(g, "RMSNormalization", {"x", "scale"}, {"y"});
                 add_int_attr(n, "axis", -2);
                 output(g, "y");
               },
               {{"x", {2, 3, 8}}}});
  // BitwiseAnd/Or/Xor with broadcasting, BitwiseNot (18).
  c.push_back({"bitwise18",
               18,
               [](onnx::GraphProto* g) {
                 add_node(g, "BitwiseAnd", {"a", "b"}, {"and"});
                 add_node(g, "BitwiseOr", {"a", "b"}, {"or"});
                 add_node(g, "BitwiseXor", {"a", "b"}, {"xor"});
                 add_node(g, "BitwiseNot", {"a"}, {"not"});
                 for (const char* o : {"and", "or", "xor", "not"})
                   output(g, o, onnx::TensorProto::INT32);
               },
               {{"a", {2, 3}, onnx::TensorProto::INT32}, {"b", {3}, onnx::TensorProto::INT32}}});
  // Cast-19 (saturate only matters for float8) and AveragePool-19 with dilations.
  c.push_back({"cast19_avgpool19",
               19,
               [](onnx::GraphProto* g) {
                 auto* c19 = add_node(g, "Cast", {"x"}, {"i"});
                 add_int_attr(c19, "to", onnx::TensorProto::INT32);
                 add_int_attr(c19, "saturate", 1);
                 auto* p = add_node(g, "AveragePool", {"x"}, {"p"});
                 add_ints_attr(p, "kernel_shape", {2, 2});
                 add_ints_attr(p, "dilations", {2, 2});
                 add_ints_attr(p, "pads", {1, 1, 0, 0});
                 output(g, "i", onnx::TensorProto::INT32);
                 output(g, "p");
               },
               {{"x", {1, 2, 4, 5}}}});
  // LpPool-18 with dilations and ceil_mode, p = 3.
  c.push_back({"lp_pool18",
               18,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "LpPool", {"x"}, {"y"});
                 add_ints_attr(n, "kernel_shape", {2, 2});
                 add_ints_attr(n, "dilations", {1, 2});
                 add_ints_attr(n, "strides", {2, 1});
                 add_int_attr(n, "ceil_mode", 1);
                 add_int_attr(n, "p", 3);
                 output(g, "y");
               },
               {{"x", {1, 2, 5, 6}}}});
  // DFT-20: axis as an input, with dft_length; the default axis -2 with inverse.
  c.push_back({"dft20_axis_input",
               20,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "len", {}, {6});
                 add_int64_initializer(g, "axis", {}, {1});
                 add_node(g, "DFT", {"x", "len", "axis"}, {"y"});
                 add_int_attr(add_node(g, "DFT", {"x"}, {"z"}), "inverse", 1);
                 output(g, "y");
                 output(g, "z");
               },
               {{"x", {2, 5, 3, 2}}}});
  // CenterCropPad-18: crop one axis, pad another (odd differences).
  c.push_back({"center_crop_pad18",
               18,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "shape", {2}, {2, 7});
                 auto* n = add_node(g, "CenterCropPad", {"x", "shape"}, {"y"});
                 add_ints_attr(n, "axes", {1, 2});
                 output(g, "y");
               },
               {{"x", {2, 5, 4}}}});
  // Col2Im-18 with strides, pads and dilations.
  c.push_back({"col2im18",
               18,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "image", {2}, {5, 6});
                 add_int64_initializer(g, "block", {2}, {2, 3});
                 auto* n = add_node(g, "Col2Im", {"x", "image", "block"}, {"y"});
                 add_ints_attr(n, "strides", {1, 2});
                 add_ints_attr(n, "pads", {1, 0, 0, 1});
                 add_ints_attr(n, "dilations", {2, 1});
                 output(g, "y");
               },
               // rows: (5 + 1 - 3) / 1 + 1 = 4; cols: (6 + 1 - 3) / 2 + 1 = 3 -> L = 12.
               {{"x", {1, 12, 12}}}});
  // AffineGrid-20, 2-D with and without align_corners.
  c.push_back(
      {"affine_grid20",
       20,
       [](onnx::GraphProto* g) {
         add_int64_initializer(g, "size", {4}, {2, 3, 4, 5});
         add_node(g, "AffineGrid", {"theta", "size"}, {"a"});
         add_int_attr(add_node(g, "AffineGrid", {"theta", "size"}, {"b"}), "align_corners", 1);
         output(g, "a");
         output(g, "b");
       },
       {{"theta", {2, 2, 3}}}});
  // GridSample-20: the new mode names (linear by default; cubic), border padding.
  c.push_back(
      {"grid_sample20",
       20,
       [](onnx::GraphProto* g) {
         add_node(g, "GridSample", {"x", "grid"}, {"lin"});
         add_string_attr(add_node(g, "GridSample", {"x", "grid"}, {"cub"}), "mode", "cubic");
         add_string_attr(add_node(g, "GridSample", {"x", "grid"}, {"border"}), "padding_mode",
                         "border");
         output(g, "lin");
         output(g, "cub");
         output(g, "border");
       },
       {{"x", {1, 2, 3, 4}}, {"grid", {1, 2, 3, 2}}}});
  // GridSample-20, cubic with border and reflection padding (grid values reach past the edges).
  c.push_back({"grid_sample20_cubic_padding",
               20,
               [](onnx::GraphProto* g) {
                 auto* b = add_node(g, "GridSample", {"x", "grid"}, {"border"});
                 add_string_attr(b, "mode", "cubic");
                 add_string_attr(b, "padding_mode", "border");
                 auto* r = add_node(g, "GridSample", {"x", "grid"}, {"reflection"});
                 add_string_attr(r, "mode", "cubic");
                 add_string_attr(r, "padding_mode", "reflection");
                 output(g, "border");
                 output(g, "reflection");
               },
               {{"x", {1, 2, 3, 4}}, {"grid", {1, 2, 3, 2}}}});
  // Attention-23: grouped-query heads (4 query, 2 key/value) with a float mask.
  c.push_back({"attention23_gqa_mask",
               23,
               [](onnx::GraphProto* g) {
                 add_node(g, "Attention", {"q", "k", "v", "mask"}, {"y"});
                 output(g, "y");
               },
               {{"q", {1, 4, 3, 8}}, {"k", {1, 2, 5, 8}}, {"v", {1, 2, 5, 6}}, {"mask", {3, 5}}}});
  // Attention-23 on 3-D inputs, causal, with an explicit scale and softcap.
  c.push_back({"attention23_3d_causal",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Attention", {"q", "k", "v"}, {"y"});
                 add_int_attr(n, "q_num_heads", 2);
                 add_int_attr(n, "kv_num_heads", 2);
                 add_int_attr(n, "is_causal", 1);
                 add_float_attr(n, "scale", 0.3f);
                 add_float_attr(n, "softcap", 2.f);
                 output(g, "y");
               },
               {{"q", {2, 4, 16}}, {"k", {2, 4, 16}}, {"v", {2, 4, 16}}}});
  // Attention-23, causal with fewer queries than keys.
  c.push_back({"attention23_causal_cross",
               23,
               [](onnx::GraphProto* g) {
                 add_int_attr(add_node(g, "Attention", {"q", "k", "v"}, {"y"}), "is_causal", 1);
                 output(g, "y");
               },
               {{"q", {1, 2, 2, 4}}, {"k", {1, 2, 4, 4}}, {"v", {1, 2, 4, 4}}}});
  // Attention-23 with past key/value and the present outputs.
  c.push_back({"attention23_past",
               23,
               [](onnx::GraphProto* g) {
                 add_node(g, "Attention", {"q", "k", "v", "", "pk", "pv"}, {"y", "pk2", "pv2"});
                 for (const char* o : {"y", "pk2", "pv2"}) output(g, o);
               },
               {{"q", {1, 2, 2, 4}},
                {"k", {1, 2, 2, 4}},
                {"v", {1, 2, 2, 4}},
                {"pk", {1, 2, 3, 4}},
                {"pv", {1, 2, 3, 4}}}});
  // RotaryEmbedding-23: 4-D X with position_ids into a [6, 4] cache.
  c.push_back({"rotary23_position_ids",
               23,
               [](onnx::GraphProto* g) {
                 add_int64_initializer(g, "pos", {1, 3}, {0, 5, 2});
                 add_node(g, "RotaryEmbedding", {"x", "cos", "sin", "pos"}, {"y"});
                 output(g, "y");
               },
               {{"x", {1, 2, 3, 8}}, {"cos", {6, 4}}, {"sin", {6, 4}}}});
  // RotaryEmbedding-23: 3-D X, interleaved, partial rotation, caches per position.
  c.push_back({"rotary23_interleaved_partial",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "RotaryEmbedding", {"x", "cos", "sin"}, {"y"});
                 add_int_attr(n, "num_heads", 2);
                 add_int_attr(n, "interleaved", 1);
                 add_int_attr(n, "rotary_embedding_dim", 4);
                 output(g, "y");
               },
               {{"x", {2, 3, 12}}, {"cos", {2, 3, 2}}, {"sin", {2, 3, 2}}}});
  // Resize-18 antialias on a linear downsample: full-rank scales, sizes, axes with
  // exclude_outside, align_corners, and one axis down with the other up (only the down axis is
  // filtered). align_corners takes scales whose resized lengths are whole: ONNX Runtime divides by
  // the output length where ONNX's reference (and this runtime) divide by scale * input length.
  c.push_back({"resize18_antialias_linear",
               18,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scales", {4}, {1.f, 1.f, 0.5f, 0.6f});
                 add_int64_initializer(g, "sizes", {4}, {1, 2, 3, 5});
                 add_float_initializer(g, "axes_scales", {2}, {0.6f, 0.5f});
                 add_float_initializer(g, "mixed", {4}, {1.f, 1.f, 0.4f, 1.5f});
                 add_float_initializer(g, "align_scales", {4}, {1.f, 1.f, 0.5f, 0.75f});
                 auto aa = [g](std::vector<std::string> in, const std::string& out) {
                   auto* n = add_node(g, "Resize", std::move(in), {out});
                   add_string_attr(n, "mode", "linear");
                   add_int_attr(n, "antialias", 1);
                   output(g, out);
                   return n;
                 };
                 aa({"x", "", "scales"}, "by_scales");
                 aa({"x", "", "", "sizes"}, "by_sizes");
                 auto* e = aa({"x", "", "axes_scales"}, "axes_exclude");
                 add_ints_attr(e, "axes", {2, 3});
                 add_int_attr(e, "exclude_outside", 1);
                 add_string_attr(aa({"x", "", "align_scales"}, "align"),
                                 "coordinate_transformation_mode", "align_corners");
                 aa({"x", "", "mixed"}, "down_up");
               },
               {{"x", {1, 2, 8, 8}}}});
  // Resize-18 antialias on a cubic downsample: scales, sizes with exclude_outside, and
  // cubic_coeff_a -0.5.
  c.push_back({"resize18_antialias_cubic",
               18,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "scales", {4}, {1.f, 1.f, 0.5f, 0.6f});
                 add_int64_initializer(g, "sizes", {4}, {1, 2, 3, 5});
                 auto aa = [g](std::vector<std::string> in, const std::string& out) {
                   auto* n = add_node(g, "Resize", std::move(in), {out});
                   add_string_attr(n, "mode", "cubic");
                   add_int_attr(n, "antialias", 1);
                   output(g, out);
                   return n;
                 };
                 aa({"x", "", "scales"}, "by_scales");
                 add_int_attr(aa({"x", "", "", "sizes"}, "by_sizes_exclude"), "exclude_outside", 1);
                 add_float_attr(aa({"x", "", "scales"}, "coeff"), "cubic_coeff_a", -0.5f);
               },
               {{"x", {1, 2, 8, 8}}}});
  // GridSample-20 on 5-D X (trilinear and nearest): each padding mode with align_corners 0 and
  // 1; grid values in [-2, 2) reach past every face.
  for (const char* mode : {"linear", "nearest"}) {
    c.push_back({std::string("grid_sample20_5d_") + mode,
                 20,
                 [mode](onnx::GraphProto* g) {
                   for (const char* pad : {"zeros", "border", "reflection"}) {
                     for (int align : {0, 1}) {
                       const std::string out = std::string(pad) + "_align" + std::to_string(align);
                       auto* n = add_node(g, "GridSample", {"x", "grid"}, {out});
                       add_string_attr(n, "mode", mode);
                       add_string_attr(n, "padding_mode", pad);
                       add_int_attr(n, "align_corners", align);
                       output(g, out);
                     }
                   }
                 },
                 {{"x", {2, 2, 3, 4, 5}}, {"grid", {2, 2, 3, 4, 3}}}});
  }
  // DeformConv-19 with bias and mask, pads keeping the size (offsets reach past the edges).
  c.push_back({"deform_conv19_mask_bias",
               19,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "DeformConv", {"x", "w", "offset", "b", "mask"}, {"y"});
                 add_ints_attr(n, "pads", {1, 1, 1, 1});
                 output(g, "y");
               },
               {{"x", {1, 3, 6, 5}},
                {"w", {4, 3, 3, 3}},
                {"offset", {1, 18, 6, 5}},
                {"b", {4}},
                {"mask", {1, 9, 6, 5}}}});
  // DeformConv-19, group 2 and offset_group 2 with strides, uneven pads and dilations; no mask.
  c.push_back({"deform_conv19_groups",
               19,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "DeformConv", {"x", "w", "offset", "b"}, {"y"});
                 add_int_attr(n, "group", 2);
                 add_int_attr(n, "offset_group", 2);
                 add_ints_attr(n, "kernel_shape", {3, 3});
                 add_ints_attr(n, "strides", {2, 1});
                 add_ints_attr(n, "pads", {1, 2, 0, 1});
                 add_ints_attr(n, "dilations", {1, 2});
                 output(g, "y");
               },
               // oH = (7 + 1 - 3) / 2 + 1 = 3; oW = (6 + 3 - 5) / 1 + 1 = 5.
               {{"x", {2, 4, 7, 6}}, {"w", {6, 2, 3, 3}}, {"offset", {2, 36, 3, 5}}, {"b", {6}}}});
  // DeformConv at opset 22 (which only added bfloat16, so it reads as 19): a mask without bias,
  // one channel per offset group, a 2x2 kernel without pads.
  c.push_back({"deform_conv22_mask_no_bias",
               22,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "DeformConv", {"x", "w", "offset", "", "mask"}, {"y"});
                 add_int_attr(n, "offset_group", 3);
                 output(g, "y");
               },
               {{"x", {1, 3, 5, 4}},
                {"w", {2, 3, 2, 2}},
                {"offset", {1, 24, 4, 3}},
                {"mask", {1, 12, 4, 3}}}});
  // Weight-only int4 (opset 21): W [48, 8] in blocks of 16 rows along axis 0, each block and
  // column with its scale and its int4 zero point (-8..7), then MatMul.
  c.push_back(
      {"dequantize21_int4_blocked",
       21,
       [](onnx::GraphProto* g) {
         add_four_bit_initializer(g, "w_q", true, {48, 8}, four_bit_codes(48 * 8, true, 7, 3));
         add_float_initializer(g, "w_scale", {3, 8}, small_scales(3 * 8));
         add_four_bit_initializer(g, "w_zp", true, {3, 8}, four_bit_codes(3 * 8, true, 5, 0));
         auto* dq = add_node(g, "DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"});
         add_int_attr(dq, "axis", 0);
         add_int_attr(dq, "block_size", 16);
         add_node(g, "MatMul", {"a", "w"}, {"y"});
         output(g, "y");
       },
       {{"a", {3, 48}}}});
  // Weight-only uint4 per output column (axis 1): an odd number of codes (35) and of zero points
  // (7), so both end on a padding nibble.
  c.push_back(
      {"dequantize21_uint4_per_axis",
       21,
       [](onnx::GraphProto* g) {
         add_four_bit_initializer(g, "w_q", false, {5, 7}, four_bit_codes(35, false, 11, 1));
         add_float_initializer(g, "w_scale", {7}, small_scales(7));
         add_four_bit_initializer(g, "w_zp", false, {7}, four_bit_codes(7, false, 3, 8));
         add_int_attr(add_node(g, "DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}), "axis",
                      1);
         add_node(g, "MatMul", {"a", "w"}, {"y"});
         output(g, "y");
       },
       {{"a", {2, 5}}}});
  // QDQ with uint8 activations and symmetric int4 weights per output column (an explicit int4 zero
  // point of zeros): fused, the int8 kernel multiplies the widened codes.
  c.push_back({"dequantize21_int4_qdq_matmul",
               21,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "a_scale", {}, {4.f / 255.f});
                 auto* a_zp = g->add_initializer();
                 a_zp->set_name("a_zp");
                 a_zp->set_data_type(onnx::TensorProto::UINT8);
                 a_zp->add_int32_data(128);
                 add_node(g, "QuantizeLinear", {"a", "a_scale", "a_zp"}, {"a_q"});
                 add_node(g, "DequantizeLinear", {"a_q", "a_scale", "a_zp"}, {"a_dq"});
                 add_four_bit_initializer(g, "w_q", true, {16, 4}, four_bit_codes(64, true, 9, 5));
                 add_float_initializer(g, "w_scale", {4}, small_scales(4));
                 add_four_bit_initializer(g, "w_zp", true, {4}, std::vector<int>(4, 0));
                 add_int_attr(add_node(g, "DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}),
                              "axis", 1);
                 add_node(g, "MatMul", {"a_dq", "w"}, {"y"});
                 output(g, "y");
               },
               {{"a", {2, 16}}}});
  // float8 (opset 19): Cast from float to each float8 type and back, saturating (out of range
  // clamps to the largest finite value) and not (infinity for e5m2, NaN for the others).
  c.push_back({"cast19_float8_saturate",
               19,
               [](onnx::GraphProto* g) {
                 float8_cast_inputs(g, 8);
                 float8_casts(g, 1);
               },
               {{"x", {2, 8}}}});
  c.push_back({"cast19_float8_no_saturate",
               19,
               [](onnx::GraphProto* g) {
                 float8_cast_inputs(g, 8);
                 float8_casts(g, 0);
               },
               {{"x", {2, 8}}}});
  // QuantizeLinear to float8 per axis (e4m3fn, a scale per channel) and per tensor (e5m2), each
  // dequantized back; float8 data moved by Reshape and Identity in between (Transpose takes
  // float8 from opset 21 only).
  c.push_back({"quantize19_float8_per_axis",
               19,
               [](onnx::GraphProto* g) {
                 add_float_initializer(g, "s3", {3}, {0.01f, 0.5f, 4.f});
                 add_float8_initializer(g, "z3", 17, {3}, {0, 0, 0}, false);
                 add_float_initializer(g, "k", {1, 1, 4}, {1.f, 30.f, 500.f, -2e3f});
                 add_node(g, "Mul", {"x", "k"}, {"xk"});
                 add_node(g, "QuantizeLinear", {"xk", "s3", "z3"}, {"q"});
                 add_node(g, "DequantizeLinear", {"q", "s3", "z3"}, {"y"});
                 output(g, "y");
                 add_float_initializer(g, "s1", {}, {0.25f});
                 add_float8_initializer(g, "z1", 19, {}, {0}, true);
                 add_node(g, "QuantizeLinear", {"xk", "s1", "z1"}, {"q1"});
                 add_node(g, "Identity", {"q1"}, {"q1r"});
                 add_node(g, "DequantizeLinear", {"q1r", "s1", "z1"}, {"y1"});
                 output(g, "y1");
               },
               {{"x", {2, 3, 4}}}});
  // Weight-only float8: e4m3fn weights stored one code per int32_data entry, dequantized per
  // output column (axis 1), then MatMul.
  c.push_back(
      {"dequantize19_float8_weights_matmul",
       19,
       [](onnx::GraphProto* g) {
         std::vector<uint8_t> codes;
         for (int i = 0; i < 5 * 6; ++i) {
           const int code = (i * 37 + 11) % 256;
           // Every code but the NaNs (S.1111.111).
           codes.push_back(static_cast<uint8_t>((code & 0x7f) == 0x7f ? code ^ 0x40 : code));
         }
         add_float8_initializer(g, "w_q", 17, {5, 6}, codes, true);
         add_float_initializer(g, "w_scale", {6}, small_scales(6));
         add_int_attr(add_node(g, "DequantizeLinear", {"w_q", "w_scale"}, {"w"}), "axis", 1);
         add_node(g, "MatMul", {"a", "w"}, {"y"});
         output(g, "y");
       },
       {{"a", {3, 5}}}});
  // Attention-23's qk_matmul_output at mode 0 (Q*K^T scaled): 4-D grouped-query heads with a
  // float mask and softcap (Y checks their order too); present_key/value omitted.
  c.push_back({"attention23_qk_mode0",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Attention", {"q", "k", "v", "mask"}, {"y", "", "", "qk"});
                 add_float_attr(n, "softcap", 1.5f);
                 output(g, "y");
                 output(g, "qk");
               },
               {{"q", {1, 4, 3, 8}}, {"k", {1, 2, 5, 8}}, {"v", {1, 2, 5, 6}}, {"mask", {3, 5}}}});
  // Attention-23's qk_matmul_output at modes 1 (plus the mask) and 2 (after softcap), a float
  // mask broadcast over the heads, an explicit scale.
  c.push_back(
      {"attention23_qk_modes12",
       23,
       [](onnx::GraphProto* g) {
         for (int mode : {1, 2}) {
           const std::string m = std::to_string(mode);
           auto* n = add_node(g, "Attention", {"q", "k", "v", "mask"}, {"y" + m, "", "", "qk" + m});
           add_int_attr(n, "qk_matmul_output_mode", mode);
           add_float_attr(n, "scale", 0.4f);
           add_float_attr(n, "softcap", 2.f);
           output(g, "y" + m);
           output(g, "qk" + m);
         }
       },
       {{"q", {2, 2, 3, 4}}, {"k", {2, 2, 4, 4}}, {"v", {2, 2, 4, 4}}, {"mask", {2, 1, 3, 4}}}});
  // Attention-23's qk_matmul_output at mode 3 (after softmax) on 3-D inputs, grouped-query heads,
  // causal with a past: the probabilities show the causal diagonal offset by the past length.
  c.push_back({"attention23_qk_mode3_causal_past",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Attention", {"q", "k", "v", "", "pk", "pv"},
                                    {"y", "pk2", "pv2", "qk"});
                 add_int_attr(n, "q_num_heads", 4);
                 add_int_attr(n, "kv_num_heads", 2);
                 add_int_attr(n, "is_causal", 1);
                 add_int_attr(n, "qk_matmul_output_mode", 3);
                 for (const char* o : {"y", "pk2", "pv2", "qk"}) output(g, o);
               },
               {{"q", {2, 3, 16}},
                {"k", {2, 3, 8}},
                {"v", {2, 3, 8}},
                {"pk", {2, 2, 2, 4}},
                {"pv", {2, 2, 2, 4}}}});
  // Attention-23, causal with a past and several new queries (a chunked prefill): 4-D,
  // grouped-query heads, a float mask added on top.
  c.push_back({"attention23_causal_past_prefill",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Attention", {"q", "k", "v", "mask", "pk", "pv"},
                                    {"y", "pk2", "pv2"});
                 add_int_attr(n, "is_causal", 1);
                 for (const char* o : {"y", "pk2", "pv2"}) output(g, o);
               },
               {{"q", {1, 4, 3, 8}},
                {"k", {1, 2, 3, 8}},
                {"v", {1, 2, 3, 6}},
                {"mask", {3, 7}},
                {"pk", {1, 2, 4, 8}},
                {"pv", {1, 2, 4, 6}}}});
  // Attention-23, causal with a past and one new query (a decoding step): every key is visible.
  c.push_back({"attention23_causal_past_decode",
               23,
               [](onnx::GraphProto* g) {
                 auto* n = add_node(g, "Attention", {"q", "k", "v", "", "pk", "pv"},
                                    {"y", "pk2", "pv2", "qk"});
                 add_int_attr(n, "is_causal", 1);
                 for (const char* o : {"y", "pk2", "pv2", "qk"}) output(g, o);
               },
               {{"q", {2, 4, 1, 8}},
                {"k", {2, 2, 1, 8}},
                {"v", {2, 2, 1, 8}},
                {"pk", {2, 2, 5, 8}},
                {"pv", {2, 2, 5, 8}}}});
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_opset18plus_models OUT_DIR\n";
    return 2;
  }
  const fs::path out = argv[1];
  Lcg rng;
  for (const Case& c : cases()) {
    onnx::ModelProto m = make_model(c.opset, c.opset >= 21 ? 10 : 9);
    auto* g = m.mutable_graph();
    g->set_name(c.name);
    for (const Input& in : c.inputs) {
      std::vector<DimSpec> dims(in.dims.begin(), in.dims.end());
      add_input(g, in.name, dims, in.elem);
    }
    c.build(g);
    const fs::path dir = out / c.name / "test_data_set_0";
    fs::create_directories(dir);
    std::ofstream(out / c.name / "model.onnx", std::ios::binary) << m.SerializeAsString();
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      std::ofstream(dir / ("input_" + std::to_string(i) + ".pb"), std::ios::binary)
          << make_input(c.inputs[i], rng).SerializeAsString();
    }
    std::cout << c.name << " (opset " << c.opset << ")\n";
  }
  return 0;
}
