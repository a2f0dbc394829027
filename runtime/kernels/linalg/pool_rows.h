// MaxPool separably on row buffers (pool_rows.cpp), for 1-D and 2-D float windows with
// horizontal stride 1 or 2: ResNet's and SqueezeNet's 3x3 stride-2 pools on 112x112 and 111x111
// maps ran at 9-14 GOP/s with every tap of every output its own deinterleaving load, and planes
// whose rows have border outputs were first copied with -inf around them.
#pragma once

#include <cstdint>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

// Whether the MaxPool kernel can take this path: float32, at most one depth tap, horizontal
// stride 1 or 2, and row buffers small enough for the thread's scratch.
bool max_pool_rows_applies(const Window3& g);

// Y = MaxPool(X) over `planes` planes (images times channels, consecutive in memory): the same
// values as the windowed path, 0 for a window that lies entirely in padding.
Status max_pool_rows(KernelContext& ctx, const Window3& g, int64_t planes, const float* X,
                     float* Y);

}  // namespace sod2::rt
