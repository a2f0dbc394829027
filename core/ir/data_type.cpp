#include "core/ir/data_type.h"

namespace sod2 {

size_t data_type_size(DataType type) { return rt::dtype_size(type); }

std::string_view data_type_name(DataType type) { return rt::dtype_name(type); }

std::optional<DataType> data_type_from_onnx(int32_t onnx_value) {
  if (onnx_value < 0 || onnx_value > static_cast<int32_t>(DataType::kFloat8E5M2FNUZ))
    return std::nullopt;
  return static_cast<DataType>(onnx_value);
}

bool is_integer_type(DataType type) {
  switch (type) {
    case DataType::kUint8:
    case DataType::kInt8:
    case DataType::kUint16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUint32:
    case DataType::kUint64: return true;
    default: return false;
  }
}

bool is_float_type(DataType type) {
  return type == DataType::kFloat || type == DataType::kDouble || type == DataType::kFloat16 ||
         type == DataType::kBFloat16;
}

}  // namespace sod2
