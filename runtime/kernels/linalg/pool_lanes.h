// MaxPool with planes in vector lanes (pool_lanes.cpp), for planes whose rows are too narrow to
// fill a vector: GoogLeNet's 3x3 pools on 14x14 and 7x7 maps ran at 2-11 GOP/s one plane at a
// time, where each plane's fixed costs outweigh its few dozen outputs.
#pragma once

#include <cstdint>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

// Whether the MaxPool kernel takes this path: float32, 1-D or 2-D, no Indices output, output
// rows no wider than a vector, and a padded plane small enough for the thread's scratch.
bool max_pool_lanes_applies(const Window3& g);

// Y = MaxPool(X) over `planes` planes (images times channels, consecutive in memory); the same
// values as the per-plane paths, 0 for a window that lies entirely in padding.
Status max_pool_lanes(KernelContext& ctx, const Window3& g, int64_t planes, const float* X,
                      float* Y);

}  // namespace sod2::rt
