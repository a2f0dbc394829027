#include "core/onnx/op_definitions.h"

#include <algorithm>
#include <array>

namespace sod2::onnx_import {
namespace {

// Sources: the ONNX operator changelog, docs/Changelog.md of onnx/onnx ("Version 18" to
// "Version 23 of the default ONNX operator set", ONNX 1.13 to 1.18), and docs/Operators.md for
// each op's inputs, outputs and attributes at that version. Types-only bumps (float8 at 19,
// int4/uint4 at 21, bfloat16 at 22, float4e2m1 at 23...) are listed so that a model at those
// opsets reads as the previous definition.
using T = DefAttrType;
constexpr int V = kVariadic;

constexpr DefAttr kReduce[] = {{"keepdims", T::kInt}, {"noop_with_empty_axes", T::kInt}};
constexpr DefAttr kCenterCropPad[] = {{"axes", T::kInts}};
constexpr DefAttr kCol2Im[] = {{"dilations", T::kInts}, {"pads", T::kInts}, {"strides", T::kInts}};
constexpr DefAttr kGroupNorm18[] = {{"epsilon", T::kFloat}, {"num_groups", T::kInt, true}};
constexpr DefAttr kGroupNorm21[] = {
    {"epsilon", T::kFloat}, {"num_groups", T::kInt, true}, {"stash_type", T::kInt}};
constexpr DefAttr kLpPool[] = {{"auto_pad", T::kString}, {"ceil_mode", T::kInt},
                               {"dilations", T::kInts},  {"kernel_shape", T::kInts, true},
                               {"p", T::kInt},           {"pads", T::kInts},
                               {"strides", T::kInts}};
constexpr DefAttr kAveragePool[] = {
    {"auto_pad", T::kString}, {"ceil_mode", T::kInt},           {"count_include_pad", T::kInt},
    {"dilations", T::kInts},  {"kernel_shape", T::kInts, true}, {"pads", T::kInts},
    {"strides", T::kInts}};
constexpr DefAttr kPad[] = {{"mode", T::kString}};
constexpr DefAttr kResize[] = {{"antialias", T::kInt},
                               {"axes", T::kInts},
                               {"coordinate_transformation_mode", T::kString},
                               {"cubic_coeff_a", T::kFloat},
                               {"exclude_outside", T::kInt},
                               {"extrapolation_value", T::kFloat},
                               {"keep_aspect_ratio_policy", T::kString},
                               {"mode", T::kString},
                               {"nearest_mode", T::kString}};
constexpr DefAttr kScatterElements[] = {{"axis", T::kInt}, {"reduction", T::kString}};
constexpr DefAttr kScatterND[] = {{"reduction", T::kString}};
constexpr DefAttr kSplit[] = {{"axis", T::kInt}, {"num_outputs", T::kInt}};
constexpr DefAttr kCast[] = {{"saturate", T::kInt}, {"to", T::kInt, true}};
constexpr DefAttr kCastLike[] = {{"saturate", T::kInt}};
constexpr DefAttr kDeformConv[] = {{"dilations", T::kInts},    {"group", T::kInt},
                                   {"kernel_shape", T::kInts}, {"offset_group", T::kInt},
                                   {"pads", T::kInts},         {"strides", T::kInts}};
constexpr DefAttr kQuantize19[] = {{"axis", T::kInt}, {"saturate", T::kInt}};
constexpr DefAttr kQuantize21[] = {
    {"axis", T::kInt}, {"block_size", T::kInt}, {"output_dtype", T::kInt}, {"saturate", T::kInt}};
constexpr DefAttr kQuantize23[] = {{"axis", T::kInt},
                                   {"block_size", T::kInt},
                                   {"output_dtype", T::kInt},
                                   {"precision", T::kInt},
                                   {"saturate", T::kInt}};
constexpr DefAttr kDequantize21[] = {{"axis", T::kInt}, {"block_size", T::kInt}};
constexpr DefAttr kDequantize23[] = {
    {"axis", T::kInt}, {"block_size", T::kInt}, {"output_dtype", T::kInt}};
constexpr DefAttr kAffineGrid[] = {{"align_corners", T::kInt}};
constexpr DefAttr kDft[] = {{"inverse", T::kInt}, {"onesided", T::kInt}};
constexpr DefAttr kGelu[] = {{"approximate", T::kString}};
constexpr DefAttr kGridSample[] = {
    {"align_corners", T::kInt}, {"mode", T::kString}, {"padding_mode", T::kString}};
constexpr DefAttr kImageDecoder[] = {{"pixel_format", T::kString}};
constexpr DefAttr kRegexFullMatch[] = {{"pattern", T::kString}};
constexpr DefAttr kStringSplit[] = {{"delimiter", T::kString}, {"maxsplit", T::kInt}};
constexpr DefAttr kAttention[] = {{"is_causal", T::kInt},        {"kv_num_heads", T::kInt},
                                  {"q_num_heads", T::kInt},      {"qk_matmul_output_mode", T::kInt},
                                  {"scale", T::kFloat},          {"softcap", T::kFloat},
                                  {"softmax_precision", T::kInt}};
constexpr DefAttr kRmsNorm[] = {{"axis", T::kInt}, {"epsilon", T::kFloat}, {"stash_type", T::kInt}};
constexpr DefAttr kRotary[] = {
    {"interleaved", T::kInt}, {"num_heads", T::kInt}, {"rotary_embedding_dim", T::kInt}};

constexpr std::span<const DefAttr> none() { return {}; }

constexpr OpDefinition def(std::string_view op, int64_t since, DefKind kind, int min_in, int max_in,
                           int min_out, int max_out, std::span<const DefAttr> attrs,
                           std::string_view what) {
  return {op, since, kind, min_in, max_in, min_out, max_out, attrs, what};
}
constexpr OpDefinition types(std::string_view op, int64_t since) {
  return {op, since, DefKind::kTypesOnly, 0, 0, 0, 0, none(), "only element types were added"};
}
constexpr OpDefinition reduce18(std::string_view op) {
  return def(op, 18, DefKind::kChanged, 1, 2, 1, 1, kReduce,
             "axes moved from an attribute to an optional input");
}

constexpr DefKind N = DefKind::kNew, C = DefKind::kChanged;

constexpr std::array kTable = {
    // Opset 18 (ONNX 1.13).
    def("BitwiseAnd", 18, N, 2, 2, 1, 1, none(), "new"),
    def("BitwiseNot", 18, N, 1, 1, 1, 1, none(), "new"),
    def("BitwiseOr", 18, N, 2, 2, 1, 1, none(), "new"),
    def("BitwiseXor", 18, N, 2, 2, 1, 1, none(), "new"),
    def("CenterCropPad", 18, N, 2, 2, 1, 1, kCenterCropPad, "new"),
    def("Col2Im", 18, N, 3, 3, 1, 1, kCol2Im, "new"),
    def("GroupNormalization", 18, N, 3, 3, 1, 1, kGroupNorm18, "new"),
    def("LpPool", 18, C, 1, 1, 1, 1, kLpPool, "ceil_mode and dilations were added"),
    def("Mish", 18, N, 1, 1, 1, 1, none(), "new"),
    def("OptionalGetElement", 18, C, 1, 1, 1, 1, none(), "it accepts non-optional inputs"),
    def("OptionalHasElement", 18, C, 0, 1, 1, 1, none(), "it accepts non-optional inputs"),
    def("Pad", 18, C, 2, 4, 1, 1, kPad, "an optional axes input was added"),
    reduce18("ReduceL1"),
    reduce18("ReduceL2"),
    reduce18("ReduceLogSum"),
    reduce18("ReduceLogSumExp"),
    reduce18("ReduceMax"),
    reduce18("ReduceMean"),
    reduce18("ReduceMin"),
    reduce18("ReduceProd"),
    reduce18("ReduceSumSquare"),
    def("Resize", 18, C, 1, 4, 1, 1, kResize,
        "antialias, axes and keep_aspect_ratio_policy were added"),
    def("ScatterElements", 18, C, 3, 3, 1, 1, kScatterElements, "reduction gained max and min"),
    def("ScatterND", 18, C, 3, 3, 1, 1, kScatterND, "reduction gained max and min"),
    def("Split", 18, C, 1, 2, 1, V, kSplit, "the num_outputs attribute was added"),
    // Opset 19 (ONNX 1.14): float8 types; new attributes and modes.
    def("AveragePool", 19, C, 1, 1, 1, 1, kAveragePool, "dilations were added"),
    def("Cast", 19, C, 1, 1, 1, 1, kCast, "the saturate attribute was added (float8)"),
    def("CastLike", 19, C, 2, 2, 1, 1, kCastLike, "the saturate attribute was added (float8)"),
    types("Constant", 19),
    def("DeformConv", 19, N, 3, 5, 1, 1, kDeformConv, "new"),
    types("DequantizeLinear", 19),
    types("Equal", 19),
    types("Identity", 19),
    types("If", 19),
    types("Loop", 19),
    def("Pad", 19, C, 2, 4, 1, 1, kPad, "the wrap mode was added"),
    def("QuantizeLinear", 19, C, 2, 3, 1, 1, kQuantize19, "the saturate attribute was added"),
    types("Reshape", 19),
    def("Resize", 19, C, 1, 4, 1, 1, kResize, "coordinate mode half_pixel_symmetric was added"),
    types("Scan", 19),
    types("Shape", 19),
    types("Size", 19),
    // Opset 20 (ONNX 1.15).
    def("AffineGrid", 20, N, 2, 2, 1, 1, kAffineGrid, "new"),
    types("ConstantOfShape", 20),
    def("DFT", 20, C, 1, 3, 1, 1, kDft, "dft_length and axis became inputs"),
    def("Gelu", 20, N, 1, 1, 1, 1, kGelu, "new"),
    def("GridSample", 20, C, 2, 2, 1, 1, kGridSample,
        "it was generalised to N-D with new mode names"),
    def("ImageDecoder", 20, N, 1, 1, 1, 1, kImageDecoder, "new"),
    types("IsInf", 20),
    types("IsNaN", 20),
    types("ReduceMax", 20),
    types("ReduceMin", 20),  // bool
    def("RegexFullMatch", 20, N, 1, 1, 1, 1, kRegexFullMatch, "new"),
    def("StringConcat", 20, N, 2, 2, 1, 1, none(), "new"),
    def("StringSplit", 20, N, 1, 1, 2, 2, kStringSplit, "new"),
    // Opset 21 (ONNX 1.16): int4/uint4 types, blocked quantization.
    types("Cast", 21),
    types("CastLike", 21),
    types("Constant", 21),
    types("ConstantOfShape", 21),
    def("DequantizeLinear", 21, C, 2, 3, 1, 1, kDequantize21, "blocked quantization (block_size)"),
    types("Flatten", 21),
    def("GroupNormalization", 21, C, 3, 3, 1, 1, kGroupNorm21,
        "scale and bias became per channel; stash_type was added"),
    types("Identity", 21),
    types("If", 21),
    types("Loop", 21),
    types("Pad", 21),
    types("QLinearMatMul", 21),
    def("QuantizeLinear", 21, C, 2, 3, 1, 1, kQuantize21,
        "blocked quantization (block_size) and output_dtype were added"),
    types("Reshape", 21),
    types("Scan", 21),
    types("Shape", 21),
    types("Size", 21),
    types("Squeeze", 21),
    types("Transpose", 21),
    types("Unsqueeze", 21),
    // Opset 22 (ONNX 1.17): bfloat16 for these.
    types("Acos", 22),
    types("Acosh", 22),
    types("Asin", 22),
    types("Asinh", 22),
    types("Atan", 22),
    types("Atanh", 22),
    types("AveragePool", 22),
    types("Bernoulli", 22),
    types("Conv", 22),
    types("ConvTranspose", 22),
    types("Cos", 22),
    types("Cosh", 22),
    types("DeformConv", 22),
    types("Det", 22),
    types("Dropout", 22),
    types("Elu", 22),
    types("EyeLike", 22),
    types("GRU", 22),
    types("GlobalAveragePool", 22),
    types("GlobalLpPool", 22),
    types("GlobalMaxPool", 22),
    types("GridSample", 22),
    types("HardSigmoid", 22),
    types("HardSwish", 22),
    types("InstanceNormalization", 22),
    types("LSTM", 22),
    types("LpNormalization", 22),
    types("LpPool", 22),
    types("MaxPool", 22),
    types("MaxRoiPool", 22),
    types("MaxUnpool", 22),
    types("Mish", 22),
    types("Multinomial", 22),
    types("NegativeLogLikelihoodLoss", 22),
    types("RNN", 22),
    types("RandomNormal", 22),
    types("RandomNormalLike", 22),
    types("RandomUniform", 22),
    types("RandomUniformLike", 22),
    types("RoiAlign", 22),
    types("Round", 22),
    types("Selu", 22),
    types("Sin", 22),
    types("Sinh", 22),
    types("Softplus", 22),
    types("Softsign", 22),
    types("Tan", 22),
    types("ThresholdedRelu", 22),
    // Opset 23 (ONNX 1.18): float4e2m1 types; attention-era ops.
    def("Attention", 23, N, 3, 6, 1, 4, kAttention, "new"),
    types("Cast", 23),
    types("CastLike", 23),
    types("Constant", 23),
    types("ConstantOfShape", 23),
    def("DequantizeLinear", 23, C, 2, 3, 1, 1, kDequantize23, "output_dtype was added"),
    types("Flatten", 23),
    types("Identity", 23),
    types("If", 23),
    types("Loop", 23),
    types("Pad", 23),
    def("QuantizeLinear", 23, C, 2, 3, 1, 1, kQuantize23, "the precision attribute was added"),
    def("RMSNormalization", 23, N, 2, 2, 1, 1, kRmsNorm, "new"),
    types("Reshape", 23),
    def("RotaryEmbedding", 23, N, 3, 4, 1, 1, kRotary, "new"),
    types("Scan", 23),
    types("Shape", 23),
    types("Size", 23),
    types("Squeeze", 23),
    types("Transpose", 23),
    types("Unsqueeze", 23),
};

}  // namespace

std::span<const OpDefinition> op_definitions() { return kTable; }

const OpDefinition* definition_after(std::string_view op_type, int64_t known_max, int64_t opset) {
  const OpDefinition* best = nullptr;
  for (const OpDefinition& d : kTable) {
    if (d.op_type != op_type || d.kind == DefKind::kTypesOnly) continue;
    if (d.since <= known_max || d.since > opset) continue;
    if (!best || d.since > best->since) best = &d;
  }
  return best;
}

const OpDefinition* any_definition(std::string_view op_type) {
  const OpDefinition* first = nullptr;
  for (const OpDefinition& d : kTable)
    if (d.op_type == op_type && (!first || d.since < first->since)) first = &d;
  return first;
}

const char* def_attr_type_name(DefAttrType t) {
  switch (t) {
    case DefAttrType::kInt: return "int";
    case DefAttrType::kFloat: return "float";
    case DefAttrType::kString: return "string";
    case DefAttrType::kInts: return "ints";
    case DefAttrType::kFloats: return "floats";
    case DefAttrType::kStrings: return "strings";
    case DefAttrType::kTensor: return "tensor";
    case DefAttrType::kGraph: return "graph";
  }
  return "undefined";
}

}  // namespace sod2::onnx_import
