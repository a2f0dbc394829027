// 8-bit integer GEMM for the quantized convolutions, exact in int32:
//
//   c[i * ldc + j] = sum over kk < k of (a[kk * lda + i] - a_zero) * b[j * ldb + kk]
//
// for i < m, j < n: A is stored K x M (an im2col tile: one row per tap, one column per output
// position, or a 1x1 convolution's input itself), B is N x K (a weight row per output channel).
// oneDNN's u8s8s32/s8s8s32 GEMM on x86-64 CPUs with VNNI (whose dot products do not saturate,
// unlike the older vpmaddubsw path, which oneDNN documents may saturate); elsewhere (arm64, or
// x86-64 without VNNI) a portable int32 loop the compiler vectorises. Both are exact.
// Single-threaded: callers tile the work over their pool.
#pragma once

#include <cstdint>

namespace sod2::rt::quant {

void igemm_serial(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda, int32_t a_zero,
                  const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc);
void igemm_serial(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, int32_t a_zero,
                  const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc);

// "oneDNN (VNNI)" or "portable": what igemm_serial runs on this machine.
const char* igemm_backend_name();

}  // namespace sod2::rt::quant
