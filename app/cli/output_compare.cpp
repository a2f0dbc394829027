#include "app/cli/output_compare.h"

#include <cmath>

namespace sod2::cli {
namespace {

double element(const rt::Tensor& t, int64_t i) {
  switch (t.dtype) {
    case rt::DType::kFloat: return t.as<const float>()[i];
    case rt::DType::kDouble: return t.as<const double>()[i];
    case rt::DType::kInt64: return static_cast<double>(t.as<const int64_t>()[i]);
    case rt::DType::kInt32: return t.as<const int32_t>()[i];
    case rt::DType::kInt16: return t.as<const int16_t>()[i];
    case rt::DType::kInt8: return t.as<const int8_t>()[i];
    case rt::DType::kUint8:
    case rt::DType::kBool: return t.as<const uint8_t>()[i];
    case rt::DType::kUint16: return t.as<const uint16_t>()[i];
    case rt::DType::kUint32: return t.as<const uint32_t>()[i];
    case rt::DType::kUint64: return static_cast<double>(t.as<const uint64_t>()[i]);
    default: return std::nan("");
  }
}

}  // namespace

Comparison compare_tensors(const rt::Tensor& actual, const rt::Tensor& expected, double rtol,
                           double atol) {
  Comparison c;
  c.shape_matches = actual.shape == expected.shape;
  c.dtype_matches = actual.dtype == expected.dtype;
  if (!c.shape_matches || !c.dtype_matches) return c;
  const int64_t n = actual.numel();
  for (int64_t i = 0; i < n; ++i) {
    const double a = element(actual, i), e = element(expected, i);
    if (std::isnan(a) || std::isnan(e)) {
      c.mismatches += std::isnan(a) != std::isnan(e);
      continue;
    }
    const double d = std::fabs(a - e);
    c.max_abs = std::max(c.max_abs, d);
    if (e != 0) c.max_rel = std::max(c.max_rel, d / std::fabs(e));
    c.mismatches += d > atol + rtol * std::fabs(e);
  }
  return c;
}

}  // namespace sod2::cli
