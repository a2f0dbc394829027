// 8-bit integer GEMM for the quantized convolutions, exact in int32:
//
//   c[i * ldc + j] = sum over kk < k of w[i * ldw + kk] * (x[kk * ldx + j] - x_zero)
//
// for i < m (output channels), j < n (output positions): W is the int8 weights, a row per output
// channel; X an int8 im2col tile (a row per tap, a column per output position). uint8
// activations are passed flipped to int8 (v ^ 0x80 = v - 128, zero point - 128), which changes no
// difference v - zero_point. oneDNN's s8s8s32 GEMM on x86-64 CPUs with VNNI, whose dot products
// do not saturate (oneDNN documents that its older vpmaddubsw path may); on arm64 CPUs with the
// Armv8.2 dot product instructions (SDOT: most phone cores since 2017) our own kernel, four taps
// per instruction over 8x8 tiles, both operands packed into quads of taps per call; elsewhere a
// portable int32 loop the compiler vectorises. All exact. Single-threaded: callers tile the work
// over their pool.
#pragma once

#include <cstdint>

namespace sod2::rt::quant {

void igemm_serial(int64_t m, int64_t n, int64_t k, const int8_t* w, int64_t ldw, const int8_t* x,
                  int64_t ldx, int32_t x_zero, int32_t* c, int64_t ldc);

// The natural layout of a matrix product (MatMulInteger, QLinearMatMul), exact in int32:
//
//   c[i * ldc + j] = sum over kk < k of (a[i * lda + kk] - a_zero) * b[kk * ldb + j]
//
// with A the 8-bit activations (M x K, row-major) and B int8 (K x N). oneDNN's u8s8s32/s8s8s32
// GEMM on CPUs with VNNI, the SDOT kernel on arm64 CPUs with the dot product instructions, a
// portable int32 loop (vectorised over j) elsewhere.
void igemm_rows(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda, int32_t a_zero,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc);
void igemm_rows(int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda, int32_t a_zero,
                const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc);

// "oneDNN (VNNI)", "arm64 dot product (SDOT)" or "portable": what igemm_serial runs on this
// machine.
const char* igemm_backend_name();

}  // namespace sod2::rt::quant
