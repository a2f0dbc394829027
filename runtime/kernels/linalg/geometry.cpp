#include "runtime/kernels/linalg/geometry.h"

#include <algorithm>

#include "runtime/kernels/linalg/common.h"

namespace sod2::rt {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace

Expected<WindowAttrs> read_window_attrs(const Attrs& attrs, const char* op) {
  WindowAttrs w;
  std::string ap;
  SOD2_ATTR(ap, attrs.get_string("auto_pad", "NOTSET"));
  if (ap == "NOTSET")
    w.auto_pad = AutoPad::kNotSet;
  else if (ap == "SAME_UPPER")
    w.auto_pad = AutoPad::kSameUpper;
  else if (ap == "SAME_LOWER")
    w.auto_pad = AutoPad::kSameLower;
  else if (ap == "VALID")
    w.auto_pad = AutoPad::kValid;
  else
    return invalid_argument(std::string(op) + ": unknown auto_pad '" + ap + "'");
  SOD2_ATTR(w.kernel_shape, attrs.get_ints("kernel_shape"));
  SOD2_ATTR(w.strides, attrs.get_ints("strides"));
  SOD2_ATTR(w.dilations, attrs.get_ints("dilations"));
  SOD2_ATTR(w.pads, attrs.get_ints("pads"));
  int64_t ceil = 0;
  SOD2_ATTR(ceil, attrs.get_int("ceil_mode", 0));
  w.ceil_mode = ceil != 0;
  for (int64_t s : w.strides)
    if (s <= 0) return invalid_argument(std::string(op) + ": strides must be positive");
  for (int64_t d : w.dilations)
    if (d <= 0) return invalid_argument(std::string(op) + ": dilations must be positive");
  for (int64_t p : w.pads)
    if (p < 0) return invalid_argument(std::string(op) + ": pads must not be negative");
  return w;
}

Expected<Window3> resolve_window(const WindowAttrs& a, std::span<const int64_t> in,
                                 std::span<const int64_t> kernel, const char* op) {
  const size_t n = in.size();
  if (n < 1 || n > 3)
    return unsupported(std::string(op) + ": " + std::to_string(n) +
                       " spatial dims (1 to 3 supported)");
  if (kernel.size() != n)
    return invalid_argument(std::string(op) + ": kernel " + dims_string(kernel) +
                            " does not match " + std::to_string(n) + " spatial dims");
  auto check = [&](const std::vector<int64_t>& v, size_t want, const char* name) -> Status {
    if (!v.empty() && v.size() != want)
      return invalid_argument(std::string(op) + ": " + name + " has " + std::to_string(v.size()) +
                              " values, expected " + std::to_string(want));
    return Status::ok_status();
  };
  SOD2_RETURN_IF_ERROR(check(a.strides, n, "strides"));
  SOD2_RETURN_IF_ERROR(check(a.dilations, n, "dilations"));
  SOD2_RETURN_IF_ERROR(check(a.pads, 2 * n, "pads"));
  Window3 w;
  w.spatial = static_cast<int>(n);
  const size_t off = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    const size_t j = off + i;
    w.in[j] = in[i];
    w.k[j] = kernel[i];
    if (w.k[j] <= 0)
      return invalid_argument(std::string(op) + ": kernel " + dims_string(kernel) +
                              " must be positive");
    w.stride[j] = a.strides.empty() ? 1 : a.strides[i];
    w.dil[j] = a.dilations.empty() ? 1 : a.dilations[i];
    // Kernel, dilations and pads are the model's: their products and sums must fit int64.
    int64_t keff = 0, padded = 0;
    if (__builtin_mul_overflow(w.k[j] - 1, w.dil[j], &keff) || keff >= INT64_MAX / 4 ||
        (a.pads.size() == 2 * n &&
         (__builtin_add_overflow(w.in[j], a.pads[i], &padded) ||
          __builtin_add_overflow(padded, a.pads[i + n], &padded) || padded >= INT64_MAX / 4)))
      return invalid_argument(std::string(op) + ": kernel " + dims_string(kernel) +
                              ", dilations and pads are too large for input " + dims_string(in));
    ++keff;
    int64_t pb = 0, pe = 0, o = 0;
    switch (a.auto_pad) {
      case AutoPad::kNotSet:
        pb = a.pads.empty() ? 0 : a.pads[i];
        pe = a.pads.empty() ? 0 : a.pads[i + n];
        break;
      case AutoPad::kValid: break;
      case AutoPad::kSameUpper:
      case AutoPad::kSameLower: {
        o = ceil_div(w.in[j], w.stride[j]);
        const int64_t total = std::max<int64_t>(0, (o - 1) * w.stride[j] + keff - w.in[j]);
        pb = a.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
        pe = total - pb;
        break;
      }
    }
    if (a.auto_pad == AutoPad::kNotSet || a.auto_pad == AutoPad::kValid) {
      const int64_t span = w.in[j] + pb + pe - keff;
      if (span < 0) {
        if (w.in[j] != 0)
          return invalid_argument(std::string(op) + ": kernel " + dims_string(kernel) +
                                  " is larger than the padded input " + dims_string(in));
        o = 0;
      } else if (a.ceil_mode) {
        o = ceil_div(span, w.stride[j]) + 1;
        // The last window must start inside the input or its begin padding (as PyTorch/ORT).
        if ((o - 1) * w.stride[j] >= w.in[j] + pb) --o;
      } else {
        o = span / w.stride[j] + 1;
      }
    }
    w.pad_begin[j] = pb;
    w.pad_end[j] = pe;
    w.out[j] = o;
  }
  return w;
}

}  // namespace sod2::rt
