#include "runtime/kernels/data/strided_copy.h"

#include <algorithm>
#include <cstring>

namespace sod2::rt {
namespace {

// Drops unit dims and merges neighbours that are contiguous in the source, so a view of a
// contiguous block becomes one dim and rows get as long as possible. Returns false when the view
// is empty.
bool simplify(const StridedView& in, StridedView* out) {
  out->rank = 0;
  for (int i = 0; i < in.rank; ++i) {
    if (in.dims[i] == 0) return false;
    if (in.dims[i] == 1) continue;
    if (out->rank > 0) {
      const int last = out->rank - 1;
      if (out->src_strides[last] == in.src_strides[i] * in.dims[i]) {
        out->dims[last] *= in.dims[i];
        out->src_strides[last] = in.src_strides[i];
        continue;
      }
    }
    out->push(in.dims[i], in.src_strides[i]);
  }
  return true;
}

template <typename T>
void copy_row_strided(T* dst, const T* src, int64_t n, int64_t stride) {
  if (stride == 0) {
    std::fill_n(dst, n, *src);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

void copy_row(uint8_t* dst, const uint8_t* src, size_t elem, int64_t n, int64_t stride) {
  if (stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * elem);
    return;
  }
  switch (elem) {
    case 1: copy_row_strided(dst, src, n, stride); return;
    case 2:
      copy_row_strided(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), n,
                       stride);
      return;
    case 4:
      copy_row_strided(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), n,
                       stride);
      return;
    case 8:
      copy_row_strided(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), n,
                       stride);
      return;
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + static_cast<size_t>(i) * elem,
                    src + static_cast<ptrdiff_t>(i * stride) * static_cast<ptrdiff_t>(elem), elem);
      }
  }
}

}  // namespace

void strided_copy(ThreadPool& pool, void* dst, const void* src, size_t elem_size,
                  const StridedView& view) {
  StridedView v;
  if (!simplify(view, &v)) return;
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  if (v.rank == 0) {
    std::memcpy(d, s, elem_size);
    return;
  }
  const int outer_rank = v.rank - 1;
  const int64_t row_len = v.dims[outer_rank];
  const int64_t row_stride = v.src_strides[outer_rank];
  int64_t rows = 1;
  for (int i = 0; i < outer_rank; ++i) rows *= v.dims[i];
  const auto elem = static_cast<ptrdiff_t>(elem_size);
  const size_t row_bytes = static_cast<size_t>(row_len) * elem_size;
  // Chunks of at least ~64 KiB so that threading pays for itself.
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((64u << 10) / row_bytes));

  pool.parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    // Position the odometer over the outer dims at row `begin`.
    int64_t idx[kMaxViewRank];
    int64_t offset = 0;
    int64_t r = begin;
    for (int i = outer_rank - 1; i >= 0; --i) {
      idx[i] = r % v.dims[i];
      r /= v.dims[i];
      offset += idx[i] * v.src_strides[i];
    }
    for (int64_t row = begin; row < end; ++row) {
      copy_row(d + static_cast<size_t>(row) * row_bytes, s + offset * elem, elem_size, row_len,
               row_stride);
      for (int i = outer_rank - 1; i >= 0; --i) {
        offset += v.src_strides[i];
        if (++idx[i] < v.dims[i]) break;
        offset -= idx[i] * v.src_strides[i];
        idx[i] = 0;
      }
    }
  });
}

}  // namespace sod2::rt
