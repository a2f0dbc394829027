// Conv's shape checks and forward pass, shared with ConvTranspose's checks.
#pragma once

#include <span>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

struct ConvShape {
  int64_t n = 0, c = 0, m = 0, group = 1;
  Window3 win;
  Shape out;
};

// Which of a convolution's tensors are held channel-blocked (kernel.h, BlockedIo) with `block`
// channels per block: X, and Y with the epilogue's residual.
struct BlockedTensors {
  int block = 0;
  bool input = false;
  bool output = false;
  bool any() const { return input || output; }
};

// Validates X, W, B (dtypes, ranks, group, kernel_shape) and computes the output shape.
Expected<ConvShape> conv_shape(const Tensor* x, const Tensor* w, const Tensor* b,
                               const WindowAttrs& attrs, int64_t group, const char* op);

// Y = conv(X, W) followed by the epilogue (which carries the op's bias).
Status conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                    float* Y, const EpilogueRun& e);

// 8-bit input for depthwise_forward: each plane is read as its values minus the zero point, as
// floats (the int8 convolutions' exact path, qlinear_conv.cpp).
struct DepthwiseInt8Input {
  DType type = DType::kUint8;  // kUint8 or kInt8
  const void* data = nullptr;
  int32_t zero_point = 0;
  // Called by the thread that wrote them, as soon as a work item's sums are in Y: positions
  // [q0, q1) of planes [plane0, plane0 + planes) (plane = image * channels + channel). The int8
  // convolution requantizes them there, while they are cached, instead of in a second pass over
  // the threads. nullptr: none.
  void (*finish)(const void* context, int64_t plane0, int64_t planes, int64_t q0,
                 int64_t q1) = nullptr;
  const void* finish_context = nullptr;
  // Or, where set and the item's channels are 16 vector lanes, the item's sums as the path holds
  // them, never written to Y: `count` positions from q0 of planes [plane0, plane0 + planes),
  // lanes[p * 16 + l] the sum of plane0 + l at position q0 + p.
  void (*finish_lanes)(const void* context, int64_t plane0, int64_t planes, int64_t q0,
                       int64_t count, const float* lanes) = nullptr;
};

// `count` values of x8 from element `first`, minus its zero point, as floats (exact). Inline so
// that it vectorises at the caller's SIMD level.
inline void centre_8bit(const DepthwiseInt8Input& x8, int64_t first, int64_t count, float* out) {
  const float zp = static_cast<float>(x8.zero_point);
  if (x8.type == DType::kUint8) {
    const uint8_t* __restrict x = static_cast<const uint8_t*>(x8.data) + first;
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(x[i]) - zp;
  } else {
    const int8_t* __restrict x = static_cast<const int8_t*>(x8.data) + first;
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(x[i]) - zp;
  }
}

// The depthwise case of conv_forward (one input channel per group, 1-D or 2-D). With x8, X is
// nullptr and the planes come from x8, centred one at a time in each thread's scratch.
Status depthwise_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                         float* Y, const EpilogueRun& e, const DepthwiseInt8Input* x8 = nullptr);

// Depthwise with channels in vector lanes (conv_depthwise_lanes.cpp), channel multiplier 1, 1-D
// or 2-D: whether the Conv kernel takes it for this shape rather than depthwise_forward, and the
// run (any shape it can serve; benches time it against the row path). With x8, X is nullptr and
// each item's input rows are centred from x8 as they are interleaved.
// With `held`, X and/or Y (and the residual) are channel-blocked, read and written as they are:
// the path's own layout, a narrow last block included, with nothing to interleave
// (depthwise_lanes_serves_blocked).
bool depthwise_lanes_applies(const ConvShape& s);
bool depthwise_lanes_serves_blocked(const ConvShape& s, int block);
Status depthwise_lanes_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                               const float* W, float* Y, const EpilogueRun& e,
                               const DepthwiseInt8Input* x8 = nullptr, BlockedTensors held = {});

// Dense direct convolution (conv_direct.cpp): whether it serves this shape, and the run.
bool direct_conv_applies(const ConvShape& s);
Status direct_conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                           float* Y, const EpilogueRun& e);

// Pointwise convolution with few input channels per group, NCHW, tiles summed and finished in
// registers (conv_pointwise.cpp): whether it serves this shape, and the run.
bool pointwise_narrow_applies(const ConvShape& s);
Status pointwise_narrow_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                                const float* W, float* Y, const EpilogueRun& e);

// Pointwise convolution of one position per image (conv_single_position.cpp): whether it serves
// the shape, and the run.
bool single_position_applies(const ConvShape& s);
Status single_position_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                               const float* W, float* Y, const EpilogueRun& e);

// Pointwise convolution of one group between channel-blocked tensors of `block` channels per
// block (conv_pointwise_blocked.cpp), on weights packed by pack_pointwise_blocked ([ceil(M /
// block)][C][block], from W [M, C]; a narrow last block's missing lanes zeros): whether it takes a
// conv of these attributes, weights [M, C, 1, 1] and groups (at this CPU's vector width), whether
// it serves the shape, and the run.
bool pointwise_blocked_takes(const WindowAttrs& attrs, std::span<const int64_t> w_dims,
                             int64_t group, int block);
bool pointwise_blocked_applies(const ConvShape& s, int block);
void pack_pointwise_blocked(const float* w, int64_t m, int64_t c, int block, float* out);
Status pointwise_blocked_forward(KernelContext& ctx, const ConvShape& s, const float* X,
                                 const float* packed_w, float* Y, const EpilogueRun& e);

}  // namespace sod2::rt
