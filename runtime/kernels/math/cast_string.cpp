#include "runtime/kernels/math/cast_string.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

#include "runtime/kernels/math/half_float.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

bool is_float(DType t) {
  return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16 || t == DType::kBFloat16;
}

// The shortest text that reads back as the same value (what numpy and ONNX's test data write).
template <class F>
std::string write_float(F v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v < 0 ? "-INF" : "INF";
  char buf[40];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class T>
std::string write_int(T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// ASCII case-insensitive equality, for the special float names.
bool same_name(std::string_view s, std::string_view name) {
  if (s.size() != name.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i] >= 'a' && s[i] <= 'z' ? static_cast<char>(s[i] - 32) : s[i];
    if (c != name[i]) return false;
  }
  return true;
}

Expected<double> read_float(const std::string& s) {
  std::string_view v = s;
  bool negative = false;
  if (!v.empty() && (v[0] == '+' || v[0] == '-')) {
    negative = v[0] == '-';
    v.remove_prefix(1);
  }
  if (same_name(v, "NAN")) return std::nan("");
  if (same_name(v, "INF") || same_name(v, "INFINITY")) return negative ? -HUGE_VAL : HUGE_VAL;
  double d = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), d);
  if (v.empty() || r.ec == std::errc::invalid_argument || r.ptr != v.data() + v.size())
    return invalid_argument("Cast: '" + s + "' is not a number");
  // Out of range: from_chars leaves d alone; the spec's answer is an infinity or zero.
  if (r.ec == std::errc::result_out_of_range) d = std::strtod(std::string(v).c_str(), nullptr);
  return negative ? -d : d;
}

template <class T>
Expected<T> read_int(const std::string& s) {
  std::string_view v = s;
  if (!v.empty() && v[0] == '+') v.remove_prefix(1);
  T x{};
  auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size())
    return invalid_argument("Cast: '" + s + "' is not an integer in the target type's range");
  return x;
}

}  // namespace

bool string_castable(DType t) {
  switch (t) {
    case DType::kFloat:
    case DType::kDouble:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt8:
    case DType::kUint8:
    case DType::kInt16:
    case DType::kUint16:
    case DType::kInt32:
    case DType::kUint32:
    case DType::kInt64:
    case DType::kUint64:
    case DType::kString: return true;
    default: return false;
  }
}

Status cast_to_strings(const Tensor& x, const Tensor& y) {
  std::string* out = y.as<std::string>();
  const int64_t n = x.numel();
  if (x.dtype == DType::kString) {
    copy_elements(x, y);
    return Status::ok_status();
  }
  if (is_float(x.dtype)) {
    return visit_dtype_narrow("Cast", x.dtype, [&]<class T>(Tag<T>) -> Status {
      for (int64_t i = 0; i < n; ++i) {
        const T v = x.as<const T>()[i];
        if constexpr (kIsNarrowFloat<T>) {
          out[i] = write_float(to_float(v));
        } else if constexpr (std::is_same_v<T, double>) {
          out[i] = write_float(v);
        } else {
          out[i] = write_float(static_cast<float>(v));
        }
      }
      return Status::ok_status();
    });
  }
  return visit_dtype("Cast", x.dtype, [&]<class T>(Tag<T>) -> Status {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < n; ++i) out[i] = write_int(x.as<const T>()[i]);
      return Status::ok_status();
    } else {
      return unsupported(std::string("Cast: ") + dtype_name(x.dtype) + " to string");
    }
  });
}

Status cast_from_strings(const Tensor& x, const Tensor& y) {
  const std::string* in = x.as<const std::string>();
  const int64_t n = x.numel();
  if (y.dtype == DType::kString) {
    copy_elements(x, y);
    return Status::ok_status();
  }
  if (is_float(y.dtype)) {
    return visit_dtype_narrow("Cast", y.dtype, [&]<class T>(Tag<T>) -> Status {
      for (int64_t i = 0; i < n; ++i) {
        SOD2_ASSIGN_OR_RETURN(const double d, read_float(in[i]));
        if constexpr (kIsNarrowFloat<T>) {
          y.as<T>()[i] = narrow_from<T>(d);
        } else {
          y.as<T>()[i] = static_cast<T>(d);
        }
      }
      return Status::ok_status();
    });
  }
  return visit_dtype("Cast", y.dtype, [&]<class T>(Tag<T>) -> Status {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      for (int64_t i = 0; i < n; ++i) {
        SOD2_ASSIGN_OR_RETURN(y.as<T>()[i], read_int<T>(in[i]));
      }
      return Status::ok_status();
    } else {
      return unsupported(std::string("Cast: string to ") + dtype_name(y.dtype));
    }
  });
}

}  // namespace sod2::rt::math
