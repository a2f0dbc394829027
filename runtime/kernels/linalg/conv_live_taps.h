// Kernel taps that read only padding: a dilated conv wider than its input (DeepLab's atrous
// rates of 24 and 36 on a 14x14 map) multiplies zeros there for every output, so it can run on
// its live taps alone, with the padding they no longer reach removed and the same outputs.
#pragma once

#include <cstdint>

#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

// Per axis of a Window3, the taps [first, first + count) kept.
struct LiveTaps {
  int64_t first[3] = {0, 0, 0};
  int64_t count[3] = {1, 1, 1};
  bool trims = false;  // whether any tap is dropped
};

// The dead taps at either end of each axis that can go: every output reads padding there, and
// the padding they reach is at least as wide as what they span (pads stay non-negative).
LiveTaps live_taps(const Window3& g);

// `g` on the kept taps: their kernel, the pads shrunk by the dropped taps' reach, same outputs.
Window3 trimmed_window(const Window3& g, const LiveTaps& t);

// The kept taps of weights [rows, k0, k1, k2] (rows = output channels x input channels per
// group) into `out`, [rows, count0, count1, count2].
void copy_live_taps(const float* w, int64_t rows, const Window3& g, const LiveTaps& t, float* out);

}  // namespace sod2::rt
