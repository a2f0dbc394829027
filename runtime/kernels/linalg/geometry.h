// Window geometry shared by Conv, ConvTranspose and the pools: attribute parsing, auto_pad, and
// output sizes. Spatial ranks 1..3 are handled as 3-D with leading unit dims.
#pragma once

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

// Computes pads and output sizes of a convolution / pooling window over spatial dims `in`
// (1..3 of them) with kernel `kernel`. `op` names the op in errors.
Expected<Window3> resolve_window(const WindowAttrs& a, std::span<const int64_t> in,
                                 std::span<const int64_t> kernel, const char* op);

}  // namespace sod2::rt
