// Window geometry shared by Conv, ConvTranspose and the pools: attribute parsing, auto_pad, and
// output sizes. Spatial ranks 1..3 are handled as 3-D with leading unit dims.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/attrs.h"

namespace sod2::rt {

enum class AutoPad : uint8_t { kNotSet, kSameUpper, kSameLower, kValid };

// The window attributes as written on the node (empty vectors where absent).
struct WindowAttrs {
  AutoPad auto_pad = AutoPad::kNotSet;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
  bool ceil_mode = false;
};

Expected<WindowAttrs> read_window_attrs(const Attrs& attrs, const char* op);

// Resolved geometry of one run, padded to 3 spatial dims (index 0 = depth).
struct Window3 {
  int spatial = 0;  // the op's own spatial rank (1..3)
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad_begin[3] = {0, 0, 0},
          pad_end[3] = {0, 0, 0};

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// Whether each output position is the input position of the same index: a 1x1 window at stride 1
// without pads (the pointwise convs' own paths need it).
inline bool keeps_positions(const Window3& g) {
  if (g.k_size() != 1) return false;
  for (int a = 0; a < 3; ++a)
    if (g.stride[a] != 1 || g.pad_begin[a] != 0 || g.pad_end[a] != 0) return false;
  return true;
}

// Computes pads and output sizes of a convolution / pooling window over spatial dims `in`
// (1..3 of them) with kernel `kernel`. `op` names the op in errors.
Expected<Window3> resolve_window(const WindowAttrs& a, std::span<const int64_t> in,
                                 std::span<const int64_t> kernel, const char* op);

// The two spatial axes of a 1-D or 2-D window (Window3's axes 1 and 2), as the direct kernels'
// jobs read them: input, output and kernel extents, strides, dilations and leading pads.
struct Window2D {
  int64_t ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, pt, pl;
};

inline Window2D window_2d(const Window3& g) {
  return Window2D{g.in[1],     g.in[2],     g.out[1], g.out[2], g.k[1],         g.k[2],
                  g.stride[1], g.stride[2], g.dil[1], g.dil[2], g.pad_begin[1], g.pad_begin[2]};
}

// Window of output index o on axis a: the first input index and how many taps are inside.
struct AxisWindow {
  int64_t start;   // input index of tap 0 (may be negative)
  int64_t t0, t1;  // taps [t0, t1) land inside the input
  int64_t padded;  // taps inside the padded extent (count_include_pad divisor factor)
};

inline AxisWindow axis_window(const Window3& g, int a, int64_t o) {
  AxisWindow w;
  w.start = o * g.stride[a] - g.pad_begin[a];
  const int64_t d = g.dil[a];
  // Tap t reads start + t*d; keep 0 <= start + t*d < in.
  w.t0 = w.start >= 0 ? 0 : (-w.start + d - 1) / d;
  const int64_t last = g.in[a] - 1 - w.start;
  w.t1 = last < 0 ? 0 : std::min(g.k[a], last / d + 1);
  if (w.t1 < w.t0) w.t1 = w.t0;
  // ORT's count_include_pad divisor: the window clipped to [-pad_begin, in + pad_end).
  const int64_t end = std::min(w.start + (g.k[a] - 1) * d + 1, g.in[a] + g.pad_end[a]);
  w.padded = (end - w.start + d - 1) / d;
  return w;
}

}  // namespace sod2::rt
