// Helpers shared by the data-movement kernels: axis and index normalisation, reading small int
// lists and scalars from inputs, building shapes from values with overflow checks, and writing a
// scalar of any dtype. None of them touch the heap except to build an error message.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

// `axis` in [-rank, rank) mapped to [0, rank); an invalid_argument error naming `op` otherwise.
Expected<int> normalize_axis(int64_t axis, int rank, const char* op);

// Reads a 0-D or 1-D int32/int64 tensor of at most `max_count` values into `out`; returns the
// count. `what` names the input in errors ("Reshape: shape ...").
Expected<int> read_int_list(const Tensor& t, int64_t* out, int max_count, const char* op,
                            const char* what);

// The single value of a 0-D or 1-element numeric tensor, as double / int64.
Expected<double> read_scalar_double(const Tensor& t, const char* op, const char* what);
Expected<int64_t> read_scalar_int(const Tensor& t, const char* op, const char* what);

// A shape from dims computed from data: rank <= kMaxRank, every dim >= 0, and the element count
// (and its byte size for `elem_size`) representable in int64.
Expected<Shape> checked_shape(const int64_t* dims, int rank, size_t elem_size, const char* op);

// a * b for non-negative a, b, or false when it overflows int64.
inline bool mul_fits(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out >= 0;
}

// An error for tensors whose elements have no fixed size (strings).
Status require_fixed_size(DType t, const char* op);
Status require_index_type(DType t, const char* op, const char* what);

// Writes `v` converted to `dtype` at `dst` (float16/bfloat16 rounded to nearest even).
Status store_scalar(DType dtype, double v, void* dst);

// Fills `count` elements of `elem_size` bytes at `dst` with copies of the element at `value`.
void fill_elements(void* dst, const void* value, size_t elem_size, int64_t count);

// Copies `bytes` from src to dst, split across the pool when large.
void parallel_memcpy(ThreadPool& pool, void* dst, const void* src, size_t bytes);

// The index element `i` of an int32/int64 tensor.
inline int64_t load_index(const Tensor& t, int64_t i) {
  return t.dtype == DType::kInt32 ? t.as<const int32_t>()[i] : t.as<const int64_t>()[i];
}

// `index` in [-dim, dim) wrapped once into [0, dim); false when out of range.
inline bool wrap_index(int64_t index, int64_t dim, int64_t* out) {
  if (index < 0) index += dim;
  if (index < 0 || index >= dim) return false;
  *out = index;
  return true;
}

Status index_out_of_range(const char* op, int64_t index, int axis, int64_t dim);

// Attribute helpers for factories: an int list attribute checked to fit kMaxRank.
Expected<std::vector<int64_t>> read_axes_attr(const Attrs& attrs, const char* name, const char* op);

// Factory boilerplate: wraps a constructed kernel.
template <typename K, typename... Args>
Expected<std::unique_ptr<Kernel>> make_kernel(Args&&... args) {
  return std::unique_ptr<Kernel>(new K(std::forward<Args>(args)...));
}

}  // namespace sod2::rt
