// ONNX's four 8-bit float types (opset 19) as bit patterns, and their conversions to and from
// float/double, exactly as ONNX's Cast defines them (onnx/docs/technical/float8.md):
//   e4m3fn   bias 7, no infinity, NaN S.1111.111, max 448
//   e4m3fnuz bias 8, no infinity, no -0, the one NaN is 0x80, max 240
//   e5m2     bias 15, IEEE-like: infinity S.11111.00, NaN S.11111.{01,10,11}, max 57344
//   e5m2fnuz bias 16, no infinity, no -0, the one NaN is 0x80, max 57344
// Widening is exact. Narrowing rounds to nearest, ties to even, in one step from double; a
// rounded value past the largest finite one becomes that value when `saturate` (Cast's default),
// else infinity (e5m2) or NaN (the others). Infinity saturates like any large value, except in
// the fnuz types, where the spec's table makes it NaN either way. -0 is kept where the type has
// one; the fnuz types give +0 for it (0x80 being their NaN).
#pragma once

#include <cstdint>

#include "runtime/tensor/dtype.h"

namespace sod2::rt {

// `type` must be one of the float8 types (is_float8); anything else reads as e4m3fn.
float float8_to_float(DType type, uint8_t bits);
uint8_t float8_from_double(DType type, double v, bool saturate);
inline uint8_t float8_from_float(DType type, float v, bool saturate) {
  return float8_from_double(type, static_cast<double>(v), saturate);
}

// Whole arrays, for kernels that compute in float and store float8 (Cast, QuantizeLinear,
// DequantizeLinear): the same bits as the functions above, element by element.
void widen_float8(DType type, const uint8_t* src, float* dst, int64_t n);
void narrow_to_float8(DType type, const float* src, uint8_t* dst, int64_t n, bool saturate);

}  // namespace sod2::rt
