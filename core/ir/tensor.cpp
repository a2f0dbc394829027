#include "core/ir/tensor.h"

#include <cmath>

namespace sod2 {
namespace {

template <typename T>
T load(const std::vector<uint8_t>& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

}  // namespace

std::optional<double> Tensor::double_at(int64_t i) const {
  if (i < 0 || i >= numel() || dtype_ == DataType::kString) return std::nullopt;
  const size_t elem = data_type_size(dtype_);
  if (elem == 0 || bytes_.size() < static_cast<size_t>(i + 1) * elem) return std::nullopt;
  switch (dtype_) {
    case DataType::kFloat: return load<float>(bytes_, i);
    case DataType::kDouble: return load<double>(bytes_, i);
    case DataType::kFloat16: return half_to_float(load<uint16_t>(bytes_, i));
    case DataType::kBFloat16: return bfloat16_to_float(load<uint16_t>(bytes_, i));
    case DataType::kUint8: return load<uint8_t>(bytes_, i);
    case DataType::kInt8: return load<int8_t>(bytes_, i);
    case DataType::kUint16: return load<uint16_t>(bytes_, i);
    case DataType::kInt16: return load<int16_t>(bytes_, i);
    case DataType::kInt32: return load<int32_t>(bytes_, i);
    case DataType::kInt64: return static_cast<double>(load<int64_t>(bytes_, i));
    case DataType::kUint32: return load<uint32_t>(bytes_, i);
    case DataType::kUint64: return static_cast<double>(load<uint64_t>(bytes_, i));
    case DataType::kBool: return load<uint8_t>(bytes_, i) != 0 ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

std::optional<int64_t> Tensor::int_at(int64_t i) const {
  if (i < 0 || i >= numel()) return std::nullopt;
  const size_t elem = data_type_size(dtype_);
  if (elem == 0 || bytes_.size() < static_cast<size_t>(i + 1) * elem) return std::nullopt;
  switch (dtype_) {
    case DataType::kInt64: return load<int64_t>(bytes_, i);
    case DataType::kUint64: {
      const uint64_t v = load<uint64_t>(bytes_, i);
      if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    default: break;
  }
  const std::optional<double> d = double_at(i);
  // Floats convert only when exact, so a shape never silently rounds.
  if (!d || !std::isfinite(*d) || std::trunc(*d) != *d || std::fabs(*d) > 9.0e15) return std::nullopt;
  return static_cast<int64_t>(*d);
}

}  // namespace sod2
