// The one element-type enum of the project (the compiler's sod2::DataType is this type), numbered
// like ONNX's TensorProto.DataType so import is a range check and a package stores them verbatim.
// The runtime executes a subset: is_known_dtype() says which.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sod2::rt {

enum class DType : uint8_t {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,   // imported and described, never executed
  kComplex128 = 15,  // likewise
  kBFloat16 = 16,
  // ONNX's 8-bit floats (opset 19): stored, moved, cast and (de)quantized, never computed with
  // (float8.h converts them); arithmetic kernels refuse them by type.
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
};

// Bytes per element; 0 for kUndefined and kString (no fixed size).
size_t dtype_size(DType t);
const char* dtype_name(DType t);
// Whether `raw` (a stored byte) names a DType this runtime runs (not the complex types).
bool is_known_dtype(uint8_t raw);
bool is_float8(DType t);

// The C++ type of each numeric DType, for kernels that dispatch with a switch.
template <DType T>
struct DTypeTraits;
template <>
struct DTypeTraits<DType::kFloat> {
  using type = float;
};
template <>
struct DTypeTraits<DType::kDouble> {
  using type = double;
};
template <>
struct DTypeTraits<DType::kInt8> {
  using type = int8_t;
};
template <>
struct DTypeTraits<DType::kUint8> {
  using type = uint8_t;
};
template <>
struct DTypeTraits<DType::kInt16> {
  using type = int16_t;
};
template <>
struct DTypeTraits<DType::kUint16> {
  using type = uint16_t;
};
template <>
struct DTypeTraits<DType::kInt32> {
  using type = int32_t;
};
template <>
struct DTypeTraits<DType::kUint32> {
  using type = uint32_t;
};
template <>
struct DTypeTraits<DType::kInt64> {
  using type = int64_t;
};
template <>
struct DTypeTraits<DType::kUint64> {
  using type = uint64_t;
};
template <>
struct DTypeTraits<DType::kBool> {
  using type = bool;
};

}  // namespace sod2::rt
