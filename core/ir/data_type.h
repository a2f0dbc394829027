// The compiler's name for the project's one element-type enum (runtime/tensor/dtype.h), with the
// helpers import and analysis need. One enum, so a model's types reach a program or a package
// without a conversion table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/tensor/dtype.h"

namespace sod2 {

using DataType = rt::DType;

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
