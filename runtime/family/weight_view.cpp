#include "runtime/family/weight_view.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <string>

namespace sod2::rt {
namespace {

std::string n(int64_t v) { return std::to_string(v); }

// Calls f(out_index, base_index) for every element of the window in row-major order.
template <typename F>
void for_each_window_element(const WeightView& v, const Shape& base_dims, F&& f) {
  const int rank = v.dims.rank();
  int64_t base_strides[kMaxRank];
  row_major_strides(base_dims, base_strides);
  const int64_t total = v.dims.numel();
  if (total == 0) return;
  int64_t idx[kMaxRank] = {};
  int64_t start = 0;
  for (int d = 0; d < rank; ++d) start += v.offsets[d] * base_strides[d];
  const int64_t inner = rank == 0 ? 1 : v.dims[rank - 1];
  for (int64_t out = 0; out < total; out += inner) {
    int64_t b = start;
    for (int d = 0; d + 1 < rank; ++d) b += idx[d] * base_strides[d];
    for (int64_t k = 0; k < inner; ++k) f(out + k, b + k);
    for (int d = rank - 2; d >= 0; --d) {
      if (++idx[d] < v.dims[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

Status check_weight_view(const WeightView& v, const Tensor& base, const std::string& what) {
  SOD2_RETURN_IF_ERROR(check_weight_view_layout(v, base, what));
  return check_weight_view_escapes(v, what);
}

Status check_weight_view_layout(const WeightView& v, const Tensor& base, const std::string& what) {
  const int rank = v.dims.rank();
  if (rank != base.shape.rank()) {
    return parse_error(what + ": a view of rank " + n(rank) + " of a base of rank " +
                       n(base.shape.rank()));
  }
  for (int d = 0; d < rank; ++d) {
    if (v.dims[d] < 0 || v.offsets[d] < 0 || v.offsets[d] > base.shape[d] ||
        v.dims[d] > base.shape[d] - v.offsets[d]) {
      return parse_error(what + ": dim " + n(d) + " takes [" + n(v.offsets[d]) + ", +" +
                         n(v.dims[d]) + ") of a base dim of " + n(base.shape[d]));
    }
  }
  if (v.scale_axis < 0) {
    if (v.scale_axis != -1 || !v.scales.empty() || !v.residual.empty() || !v.escapes.empty()) {
      return parse_error(what + ": a plain window with a scale, a residual or escapes");
    }
    return Status::ok_status();
  }
  if (base.dtype != DType::kFloat) {
    return parse_error(what + ": a scaled view of a " + std::string(dtype_name(base.dtype)) +
                       " tensor (only float32 is scaled)");
  }
  if (v.scale_axis >= rank) {
    return parse_error(what + ": scale axis " + n(v.scale_axis) + " of a rank-" + n(rank) +
                       " view");
  }
  if (static_cast<int64_t>(v.scales.size()) != v.dims[v.scale_axis]) {
    return parse_error(what + ": " + n(static_cast<int64_t>(v.scales.size())) +
                       " scales for an axis of " + n(v.dims[v.scale_axis]));
  }
  const int64_t numel = v.dims.numel();
  if (!v.residual.empty() && static_cast<int64_t>(v.residual.size()) != (numel + 3) / 4) {
    return parse_error(what + ": a residual of " + n(static_cast<int64_t>(v.residual.size())) +
                       " bytes for " + n(numel) + " elements");
  }
  return Status::ok_status();
}

Status check_weight_view_escapes(const WeightView& v, const std::string& what) {
  const int64_t numel = v.dims.numel();
  int64_t escapes = 0;
  if (!v.residual.empty()) {
    for (int64_t i = 0; i < numel; ++i)
      escapes += residual_code(v.residual, i) == ResidualCode::kEscape;
  }
  if (escapes != static_cast<int64_t>(v.escapes.size())) {
    return parse_error(what + ": the residual has " + n(escapes) + " escape codes but " +
                       n(static_cast<int64_t>(v.escapes.size())) + " escape values are stored");
  }
  return Status::ok_status();
}

int64_t contiguous_window_offset(const WeightView& v, const Tensor& base) {
  if (v.scale_axis >= 0) return -1;
  const int rank = v.dims.rank();
  // One run of the base when the window is 1 wide in its leading dims, cuts at most the next one
  // and takes every later dim whole.
  int k = 0;
  while (k < rank && v.dims[k] == 1) ++k;
  for (int d = k + 1; d < rank; ++d)
    if (v.dims[d] != base.shape[d]) return -1;
  int64_t strides[kMaxRank];
  row_major_strides(base.shape, strides);
  int64_t start = 0;
  for (int d = 0; d < rank; ++d) start += v.offsets[d] * strides[d];
  return start * static_cast<int64_t>(dtype_size(base.dtype));
}

void materialize_weight_view(const WeightView& v, const Tensor& base, void* out) {
  if (v.scale_axis < 0) {
    const size_t elem = dtype_size(base.dtype);
    const auto* src = static_cast<const uint8_t*>(base.data);
    auto* dst = static_cast<uint8_t*>(out);
    for_each_window_element(v, base.shape, [&](int64_t o, int64_t b) {
      std::memcpy(dst + o * elem, src + b * elem, elem);
    });
    return;
  }
  int64_t strides[kMaxRank];
  row_major_strides(v.dims, strides);
  const int64_t axis_stride = strides[v.scale_axis];
  const int64_t axis_len = v.dims[v.scale_axis];
  const float* src = base.as<const float>();
  auto* dst = static_cast<float*>(out);
  size_t next_escape = 0;
  for_each_window_element(v, base.shape, [&](int64_t o, int64_t b) {
    const float s = v.scales[static_cast<size_t>((o / axis_stride) % axis_len)];
    // One float32 multiply, rounded to nearest: what the writer verified against.
    float x = src[b] * s;
    switch (residual_code(v.residual, o)) {
      case ResidualCode::kExact: break;
      case ResidualCode::kUp: x = std::nextafter(x, INFINITY); break;
      case ResidualCode::kDown: x = std::nextafter(x, -INFINITY); break;
      case ResidualCode::kEscape: x = std::bit_cast<float>(v.escapes[next_escape++]); break;
    }
    dst[o] = x;
  });
}

}  // namespace sod2::rt
