// Pooling of channel-blocked values (kernel.h, BlockedIo): X and Y are [N, C / B, H, W, B], so
// each lane of a vector is one channel and every tap of an output is one vector load, with no
// conversion on either side. The same values as the NCHW paths: taps in the same order, max by
// the same comparison, the same divisor.
#pragma once

#include <cstdint>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

// Whether these paths serve the window: 2-D (or 1-D), float32, no Indices output.
bool blocked_pool_applies(const Window3& g);

// MaxPool (average false) or AveragePool over `blocks` blocks of `block` channels (16 or 8).
Status pool_blocked(KernelContext& ctx, bool average, bool include_pad, const Window3& g, int block,
                    int64_t blocks, const float* X, float* Y);

// GlobalAveragePool (average) or GlobalMaxPool of X [images, channels, count] held blocked
// (kernel.h: a narrow last block where channels is not a multiple of block) into Y [images,
// channels], the same in either layout.
void global_pool_blocked(ThreadPool& pool, bool average, int block, int64_t images,
                         int64_t channels, int64_t count, const float* X, float* Y);

}  // namespace sod2::rt
