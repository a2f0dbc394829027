// ONNX's 4-bit integers (UINT4 = 21, INT4 = 22, opset 21) as the importer reads them. The runtime
// computes in no 4-bit type, and what real models hold in these types are constants: the weights
// and zero points of weight-only quantization, read by DequantizeLinear. Such a constant is
// unpacked at import into an int8/uint8 tensor of the same shape holding the same values, which
// DequantizeLinear's (x - zero_point) * scale turns into exactly the floats ONNX defines. Whatever
// would compute a 4-bit tensor (a graph input, Cast or QuantizeLinear to int4, ...) is refused by
// name instead of silently computing in 8 bits, whose saturation differs.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

// TensorProto.DataType values; Debian's libonnx (1.12) predates them.
inline constexpr int32_t kOnnxUint4 = 21;
inline constexpr int32_t kOnnxInt4 = 22;

// int8 for INT4, uint8 for UINT4, nullopt for every other ONNX element type.
std::optional<DataType> widened_four_bit_type(int64_t onnx_type);
// "int4" or "uint4" (the caller has checked it is one of them).
const char* four_bit_type_name(int64_t onnx_type);
// The end of every refusal: where the 4-bit types do work.
std::string four_bit_scope();

// Bytes of `numel` packed elements: two a byte, the first in the low nibble; an odd count leaves
// the last byte's high nibble as padding.
uint64_t packed_four_bit_bytes(uint64_t numel);
// One byte per element, sign-extended for INT4. `packed` must hold packed_four_bit_bytes(numel).
std::vector<uint8_t> unpack_four_bit(std::span<const uint8_t> packed, uint64_t numel,
                                     bool is_signed);

// Values holding a widened 4-bit constant, model-wide: (graph, value).
using FourBitValues = std::set<std::pair<const Graph*, ValueId>>;

// Whether a Constant node's value is a 4-bit tensor (its output then is a widened constant).
bool is_four_bit_constant(const onnx::NodeProto& node);
// Refuses a default-domain node whose attributes ask for a computed 4-bit tensor: Cast `to`,
// QuantizeLinear's `output_dtype`, ConstantOfShape's `value`. `label` names the node.
Status check_four_bit_attributes(const onnx::NodeProto& node, const std::string& label);

// Follows the marked values, in topological order and into subgraphs, through the ops that only
// move values (Reshape, Transpose, If's branches...) and refuses a use that would compute a 4-bit
// tensor from them: QuantizeLinear with such a zero point, CastLike to such a `like`, an output
// of the main graph holding one. Loop and Scan outputs are not followed.
Status check_four_bit_uses(const Graph& root, FourBitValues* marked);

// The names of one GraphProto's values that hold 4-bit constants, followed in node order through
// the same ops (for writing value_info without contradicting the file's types).
std::unordered_set<std::string> four_bit_value_names(const onnx::GraphProto& graph);

}  // namespace sod2::onnx_import
