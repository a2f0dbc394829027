#include "runtime/kernels/data/common.h"

#include <algorithm>
#include <cmath>

#include "runtime/tensor/float8.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::rt {
namespace {

template <typename T>
void store_as(double v, void* dst) {
  const T t = static_cast<T>(v);
  std::memcpy(dst, &t, sizeof(T));
}

}  // namespace

Expected<int> normalize_axis(int64_t axis, int rank, const char* op) {
  if (axis < -rank || axis >= rank) {
    return invalid_argument(std::string(op) + ": axis " + std::to_string(axis) +
                            " is out of range for rank " + std::to_string(rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

Expected<int> read_int_list(const Tensor& t, int64_t* out, int max_count, const char* op,
                            const char* what) {
  if (t.dtype != DType::kInt64 && t.dtype != DType::kInt32) {
    return invalid_argument(std::string(op) + ": " + what + " must be int32 or int64, not " +
                            dtype_name(t.dtype));
  }
  if (t.shape.rank() > 1) {
    return invalid_argument(std::string(op) + ": " + what + " must be 1-D, got shape " +
                            t.shape.to_string());
  }
  const int64_t n = t.numel();
  if (n > max_count) {
    return invalid_argument(std::string(op) + ": " + what + " has " + std::to_string(n) +
                            " values, more than the " + std::to_string(max_count) + " allowed");
  }
  for (int64_t i = 0; i < n; ++i) out[i] = load_index(t, i);
  return static_cast<int>(n);
}

Expected<double> read_scalar_double(const Tensor& t, const char* op, const char* what) {
  if (t.numel() != 1) {
    return invalid_argument(std::string(op) + ": " + what + " must hold one value, got shape " +
                            t.shape.to_string());
  }
  switch (t.dtype) {
    case DType::kFloat: return static_cast<double>(*t.as<const float>());
    case DType::kDouble: return *t.as<const double>();
    case DType::kInt8: return static_cast<double>(*t.as<const int8_t>());
    case DType::kUint8: return static_cast<double>(*t.as<const uint8_t>());
    case DType::kInt16: return static_cast<double>(*t.as<const int16_t>());
    case DType::kUint16: return static_cast<double>(*t.as<const uint16_t>());
    case DType::kInt32: return static_cast<double>(*t.as<const int32_t>());
    case DType::kUint32: return static_cast<double>(*t.as<const uint32_t>());
    case DType::kInt64: return static_cast<double>(*t.as<const int64_t>());
    case DType::kUint64: return static_cast<double>(*t.as<const uint64_t>());
    case DType::kBool: return *t.as<const uint8_t>() ? 1.0 : 0.0;
    default: break;
  }
  return unsupported(std::string(op) + ": " + what + " of type " + dtype_name(t.dtype));
}

Expected<int64_t> read_scalar_int(const Tensor& t, const char* op, const char* what) {
  if (t.dtype == DType::kInt64 || t.dtype == DType::kInt32) {
    if (t.numel() != 1) {
      return invalid_argument(std::string(op) + ": " + what + " must hold one value, got shape " +
                              t.shape.to_string());
    }
    return load_index(t, 0);
  }
  SOD2_ASSIGN_OR_RETURN(double v, read_scalar_double(t, op, what));
  if (!(v >= -9.2e18 && v <= 9.2e18)) {
    return invalid_argument(std::string(op) + ": " + what + " is not a representable integer");
  }
  return static_cast<int64_t>(v);
}

Expected<Shape> checked_shape(const int64_t* dims, int rank, size_t elem_size, const char* op) {
  if (rank > kMaxRank) {
    return unsupported(std::string(op) + ": result rank " + std::to_string(rank) +
                       " is above the maximum " + std::to_string(kMaxRank));
  }
  int64_t n = static_cast<int64_t>(std::max<size_t>(elem_size, 1));
  for (int i = 0; i < rank; ++i) {
    if (dims[i] < 0) {
      return invalid_argument(std::string(op) + ": result dim " + std::to_string(i) +
                              " is negative (" + std::to_string(dims[i]) + ")");
    }
    if (!mul_fits(n, dims[i], &n)) {
      return invalid_argument(std::string(op) + ": result is too large to address");
    }
  }
  return Shape(std::span<const int64_t>(dims, static_cast<size_t>(rank)));
}

Status require_fixed_size(DType t, const char* op) {
  if (dtype_size(t) == 0) {
    return unsupported(std::string(op) + ": tensors of type " + dtype_name(t));
  }
  return Status::ok_status();
}

Status require_index_type(DType t, const char* op, const char* what) {
  if (t != DType::kInt32 && t != DType::kInt64) {
    return invalid_argument(std::string(op) + ": " + what + " must be int32 or int64, not " +
                            dtype_name(t));
  }
  return Status::ok_status();
}

Status store_scalar(DType dtype, double v, void* dst) {
  switch (dtype) {
    case DType::kFloat: store_as<float>(v, dst); break;
    case DType::kDouble: store_as<double>(v, dst); break;
    case DType::kInt8: store_as<int8_t>(v, dst); break;
    case DType::kUint8: store_as<uint8_t>(v, dst); break;
    case DType::kInt16: store_as<int16_t>(v, dst); break;
    case DType::kUint16: store_as<uint16_t>(v, dst); break;
    case DType::kInt32: store_as<int32_t>(v, dst); break;
    case DType::kUint32: store_as<uint32_t>(v, dst); break;
    case DType::kInt64: store_as<int64_t>(v, dst); break;
    case DType::kUint64: store_as<uint64_t>(v, dst); break;
    case DType::kBool: store_as<uint8_t>(v != 0 ? 1 : 0, dst); break;
    case DType::kFloat16: {
      const uint16_t h = double_to_half(v);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::kBFloat16: {
      const uint16_t h = double_to_bfloat16(v);
      std::memcpy(dst, &h, 2);
      break;
    }
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      *static_cast<uint8_t*>(dst) = float8_from_double(dtype, v, /*saturate=*/true);
      break;
    default: return unsupported(std::string("a scalar of type ") + dtype_name(dtype));
  }
  return Status::ok_status();
}

void fill_elements(void* dst, const void* value, size_t elem_size, int64_t count) {
  if (count <= 0) return;
  auto* d = static_cast<uint8_t*>(dst);
  switch (elem_size) {
    case 1: std::memset(d, *static_cast<const uint8_t*>(value), static_cast<size_t>(count)); return;
    case 2: {
      uint16_t v;
      std::memcpy(&v, value, 2);
      std::fill_n(reinterpret_cast<uint16_t*>(d), count, v);
      return;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, value, 4);
      std::fill_n(reinterpret_cast<uint32_t*>(d), count, v);
      return;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, value, 8);
      std::fill_n(reinterpret_cast<uint64_t*>(d), count, v);
      return;
    }
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(d + i * elem_size, value, elem_size);
  }
}

void parallel_memcpy(ThreadPool& pool, void* dst, const void* src, size_t bytes) {
  constexpr int64_t kChunk = 1 << 18;  // below this, threading costs more than it saves
  if (bytes == 0) return;
  const auto n = static_cast<int64_t>((bytes + kChunk - 1) / kChunk);
  if (n <= 1 || pool.num_threads() == 1) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  pool.parallel_for(n, 1, [&](int64_t b, int64_t e) {
    const size_t lo = static_cast<size_t>(b * kChunk);
    const size_t hi = std::min(bytes, static_cast<size_t>(e * kChunk));
    std::memcpy(d + lo, s + lo, hi - lo);
  });
}

Status index_out_of_range(const char* op, int64_t index, int axis, int64_t dim) {
  return invalid_argument(std::string(op) + ": index " + std::to_string(index) +
                          " is out of range for axis " + std::to_string(axis) + " of size " +
                          std::to_string(dim));
}

Expected<std::vector<int64_t>> read_axes_attr(const Attrs& attrs, const char* name,
                                              const char* op) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.get_ints(name));
  if (v.size() > static_cast<size_t>(2 * kMaxRank)) {
    return invalid_model(std::string(op) + ": attribute '" + name + "' has too many values");
  }
  return v;
}

}  // namespace sod2::rt
