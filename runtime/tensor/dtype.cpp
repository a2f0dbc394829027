#include "runtime/tensor/dtype.h"

namespace sod2::rt {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kInt32:
    case DType::kUint32: return 4;
    case DType::kUint8:
    case DType::kInt8:
    case DType::kBool:
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ: return 1;
    case DType::kUint16:
    case DType::kInt16:
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kInt64:
    case DType::kDouble:
    case DType::kUint64:
    case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    case DType::kUndefined:
    case DType::kString: return 0;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat: return "float32";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "float64";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
  }
  return "unknown";
}

// 21-23 (int4, uint4, float4) stay unknown: 4-bit constants are widened to 8 bits at import.
bool is_known_dtype(uint8_t raw) { return raw <= 13 || (raw >= 16 && raw <= 20); }

bool is_float8(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ;
}

}  // namespace sod2::rt
