// Moving channels between planes (NCHW) and channel blocks (position-major, `block` channels
// interleaved: out[p * block + j]), as oneDNN's nChw16c/8c and the channel-lane depthwise path
// read them.
#pragma once

#include <cstdint>

#include "runtime/kernels/kernel.h"
#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

// `count` positions of `channels` planes (`stride` floats apart, channels <= block) into
// out[p * block + j]; lanes j >= channels are written as zeros. block is 4, 8 or 16.
void block_positions(int block, int channels, const float* x, int64_t stride, int64_t count,
                     float* out);

// block_positions of 8-bit planes (uint8, or int8 where is_signed), each value minus zero_point as
// a float (exact): the int8 depthwise convolution's input, centred as it is interleaved.
void block_positions_8bit(int block, int channels, const void* x, bool is_signed,
                          int32_t zero_point, int64_t stride, int64_t count, float* out);

// block_positions and block_positions_8bit into rows: position p at out[(p / row_len) *
// row_stride + (p % row_len) * block], so a band of input rows lands straight in the rows of a
// padded buffer (row_stride floats apart) with no copy between.
void block_positions_rows(int block, int channels, const float* x, int64_t stride, int64_t count,
                          int64_t row_len, int64_t row_stride, float* out);
void block_positions_8bit_rows(int block, int channels, const void* x, bool is_signed,
                               int32_t zero_point, int64_t stride, int64_t count, int64_t row_len,
                               int64_t row_stride, float* out);

// The inverse: lanes [0, channels) of `count` blocked positions into planes `stride` apart.
void unblock_positions(int block, int channels, const float* in, int64_t count, int64_t stride,
                       float* y);

// A whole [images, channels, count] tensor into channel blocks ([images, ceil(channels / block),
// count, block]: a value held blocked, kernel.h; the last block's lanes past `channels` are zeros,
// as a blocked convolution's padded buffers want them), a block per task on `pool`; and back
// (the lanes that hold channels).
void block_tensor(ThreadPool& pool, int block, const float* x, int64_t images, int64_t channels,
                  int64_t count, float* out);
void unblock_tensor(ThreadPool& pool, int block, const float* in, int64_t images, int64_t channels,
                    int64_t count, float* y);

// block_tensor and unblock_tensor in the held layout (kernel.h, held_block_width): [images,
// channels, count] NCHW to and from blocks whose last one may be narrower (no padding lanes).
void hold_tensor(ThreadPool& pool, int block, const float* x, int64_t images, int64_t channels,
                 int64_t count, float* out);
void release_tensor(ThreadPool& pool, int block, const float* in, int64_t images, int64_t channels,
                    int64_t count, float* y);

}  // namespace sod2::rt
