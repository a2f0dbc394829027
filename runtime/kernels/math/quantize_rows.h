// QuantizeLinear's per-tensor arithmetic (linalg/quantize.h's quantize_floats) over n floats on
// this CPU's widest vectors: here, below both of its users, a fused elementwise group's 8-bit
// output (math) and QuantizeLinear's kernel and the int8 epilogues (linalg's quantize_row).
#pragma once

#include <cstdint>

namespace sod2::rt::math {

void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point, uint8_t* y);
void quantize_rows(const float* x, int64_t n, float scale, int32_t zero_point, int8_t* y);

}  // namespace sod2::rt::math
