// Element types, numbered as ONNX's TensorProto.DataType so import is a range check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sod2 {

enum class DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
};

// Bytes per element; 0 for kUndefined and kString (strings have no fixed size).
size_t data_type_size(DataType type);
// Lower-case names with the width spelled out, as numpy and models.json write them:
// "float32", "int64", "bfloat16"...
std::string_view data_type_name(DataType type);
// Accepts the raw ONNX enum value; nullopt when it is not a known element type.
std::optional<DataType> data_type_from_onnx(int32_t onnx_value);
bool is_integer_type(DataType type);
bool is_float_type(DataType type);

}  // namespace sod2
