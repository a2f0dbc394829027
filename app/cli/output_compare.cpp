#include "app/cli/output_compare.h"

#include <cmath>
#include <cstring>
#include <string>

#include "runtime/tensor/float8.h"
#include "runtime/tensor/narrow_float.h"

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
    case rt::DType::kFloat16: return rt::half_to_float(t.as<const uint16_t>()[i]);
    case rt::DType::kBFloat16: return rt::bfloat16_to_float(t.as<const uint16_t>()[i]);
    case rt::DType::kFloat8E4M3FN:
    case rt::DType::kFloat8E4M3FNUZ:
    case rt::DType::kFloat8E5M2:
    case rt::DType::kFloat8E5M2FNUZ: return rt::float8_to_float(t.dtype, t.as<const uint8_t>()[i]);
    default: return std::nan("");
  }
}

// Types element() reads (strings are compared as strings; others never as equal by accident).
bool comparable(rt::DType t) {
  switch (t) {
    case rt::DType::kFloat:
    case rt::DType::kDouble:
    case rt::DType::kInt64:
    case rt::DType::kInt32:
    case rt::DType::kInt16:
    case rt::DType::kInt8:
    case rt::DType::kUint8:
    case rt::DType::kBool:
    case rt::DType::kUint16:
    case rt::DType::kUint32:
    case rt::DType::kUint64:
    case rt::DType::kFloat16:
    case rt::DType::kBFloat16:
    case rt::DType::kFloat8E4M3FN:
    case rt::DType::kFloat8E4M3FNUZ:
    case rt::DType::kFloat8E5M2:
    case rt::DType::kFloat8E5M2FNUZ: return true;
    default: return false;
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
  if (actual.dtype == rt::DType::kString) {
    // Strings match exactly or not at all: a mismatch counts as an error of 1.
    for (int64_t i = 0; i < n; ++i) {
      const bool same = actual.as<const std::string>()[i] == expected.as<const std::string>()[i];
      c.mismatches += !same;
      if (!same) c.max_abs = c.max_rel = 1;
    }
    return c;
  }
  if (!comparable(actual.dtype)) {
    c.comparable = false;
    c.mismatches = n;
    return c;
  }
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
