#include "core/ir/data_type.h"

namespace sod2 {

size_t data_type_size(DataType type) {
  switch (type) {
    case DataType::kFloat: return 4;
    case DataType::kUInt8: return 1;
    case DataType::kInt8: return 1;
    case DataType::kUInt16: return 2;
    case DataType::kInt16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
    case DataType::kFloat16: return 2;
    case DataType::kDouble: return 8;
    case DataType::kUInt32: return 4;
    case DataType::kUInt64: return 8;
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kBFloat16: return 2;
    case DataType::kUndefined:
    case DataType::kString: return 0;
  }
  return 0;
}

std::string_view data_type_name(DataType type) {
  switch (type) {
    case DataType::kUndefined: return "undefined";
    case DataType::kFloat: return "float32";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt8: return "int8";
    case DataType::kUInt16: return "uint16";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kString: return "string";
    case DataType::kBool: return "bool";
    case DataType::kFloat16: return "float16";
    case DataType::kDouble: return "float64";
    case DataType::kUInt32: return "uint32";
    case DataType::kUInt64: return "uint64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kBFloat16: return "bfloat16";
  }
  return "undefined";
}

std::optional<DataType> data_type_from_onnx(int32_t onnx_value) {
  if (onnx_value < 0 || onnx_value > static_cast<int32_t>(DataType::kBFloat16)) return std::nullopt;
  return static_cast<DataType>(onnx_value);
}

bool is_integer_type(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kInt8:
    case DataType::kUInt16:
    case DataType::kInt16:
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kUInt32:
    case DataType::kUInt64: return true;
    default: return false;
  }
}

bool is_float_type(DataType type) {
  return type == DataType::kFloat || type == DataType::kDouble || type == DataType::kFloat16 ||
         type == DataType::kBFloat16;
}

}  // namespace sod2
