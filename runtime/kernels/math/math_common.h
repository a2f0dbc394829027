// Helpers shared by the math kernels: dtype dispatch, axis normalisation, reading small int
// inputs (axes, k) without touching the heap, and the per-family registration hooks.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt::math {

// Elements per parallel_for chunk for cheap elementwise work; expensive ops use less.
inline constexpr int64_t kElementwiseGrain = 16384;
inline constexpr int64_t kTranscendentalGrain = 4096;
// The same for the vectorised float loops (vec_kernels.h), which do a chunk several times
// faster: a chunk should still take well over the few microseconds a worker needs to wake up.
inline constexpr int64_t kVecGrain = 32768;
inline constexpr int64_t kVecTranscendentalGrain = 16384;

template <class T>
using Tag = std::type_identity<T>;

// Element types by family, for `if constexpr` filters in dispatch lambdas.
template <class T>
inline constexpr bool kIsFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <class T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsNumeric = kIsFloat<T> || kIsInt<T>;
template <class T>
inline constexpr bool kIsSignedNumeric = kIsFloat<T> || (kIsInt<T> && std::is_signed_v<T>);

inline Status unsupported_dtype(const char* op, DType t) {
  return unsupported(std::string(op) + ": element type " + dtype_name(t) + " is not supported");
}

// Calls f(Tag<T>{}) for the C++ type of `t` (bool for kBool); types the runtime cannot compute
// with (string, float16, bfloat16) are an unsupported error naming `op`.
template <class F>
Status visit_dtype(const char* op, DType t, F&& f) {
  switch (t) {
    case DType::kFloat: return f(Tag<float>{});
    case DType::kDouble: return f(Tag<double>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUint8: return f(Tag<uint8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kUint16: return f(Tag<uint16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kUint32: return f(Tag<uint32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kUint64: return f(Tag<uint64_t>{});
    case DType::kBool: return f(Tag<bool>{});
    default: return unsupported_dtype(op, t);
  }
}

// Axis in [-rank, rank) to [0, rank); an invalid_argument error otherwise.
Status normalize_axis(const char* op, int64_t axis, int rank, int* out);

// The integer value of a one-element int32/int64 tensor (k, axis...).
Status read_scalar_int(const char* op, const char* what, const Tensor* t, int64_t* out);

// Reads an int64/int32 1-D axes tensor into `mask` (true = axis listed), normalised against
// `rank`; *count is how many axes it listed. Duplicates are an error.
Status read_axes_tensor(const char* op, const Tensor* t, int rank, bool* mask, int* count);
Status axes_to_mask(const char* op, const int64_t* axes, size_t n, int rank, bool* mask);

// The product of dims [from, to) of a shape.
inline int64_t dims_product(const Shape& s, int from, int to) {
  int64_t n = 1;
  for (int i = from; i < to; ++i) n *= s[i];
  return n;
}

// A string attribute (GCC 12 warns falsely when std::string passes through Expected inline).
Status get_string_attr(const NodeInfo& node, const char* name, const char* fallback,
                       std::string* out);

// The checks every factory makes: at least `min_inputs` present inputs.
Status require_inputs(const NodeInfo& node, size_t min_inputs);

// Registration hooks, one per source file.
void register_unary(KernelRegistry& r);
void register_binary(KernelRegistry& r);
void register_variadic(KernelRegistry& r);
void register_where_clip(KernelRegistry& r);
void register_cast(KernelRegistry& r);
void register_softmax(KernelRegistry& r);
void register_normalization(KernelRegistry& r);
void register_reduce(KernelRegistry& r);
void register_arg_reduce(KernelRegistry& r);
void register_topk(KernelRegistry& r);
void register_cumsum(KernelRegistry& r);
void register_loss(KernelRegistry& r);
void register_dropout(KernelRegistry& r);
void register_optimizers(KernelRegistry& r);
void register_signal(KernelRegistry& r);  // DFT, STFT, windows, MelWeightMatrix
void register_tfidf(KernelRegistry& r);
void register_gelu_rms(KernelRegistry& r);  // Gelu, Mish, Group/RMSNormalization
void register_bitwise(KernelRegistry& r);
void register_dft20(KernelRegistry& r);   // DFT-20 over the DFT-17 kernel
void register_random(KernelRegistry& r);  // RandomUniform/Normal(Like), Bernoulli, Multinomial
void register_fused_elementwise(KernelRegistry& r);  // sod2:FusedElementwise
void register_fused_softmax(KernelRegistry& r);      // sod2:FusedSoftmax

}  // namespace sod2::rt::math
