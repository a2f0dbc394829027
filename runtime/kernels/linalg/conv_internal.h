// Conv's shape checks and forward pass, shared with ConvTranspose's checks.
#pragma once

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/geometry.h"

namespace sod2::rt {

struct ConvShape {
  int64_t n = 0, c = 0, m = 0, group = 1;
  Window3 win;
  Shape out;
};

// Validates X, W, B (dtypes, ranks, group, kernel_shape) and computes the output shape.
Expected<ConvShape> conv_shape(const Tensor* x, const Tensor* w, const Tensor* b,
                               const WindowAttrs& attrs, int64_t group, const char* op);

// Y = conv(X, W) followed by the epilogue (which carries the op's bias).
Status conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                    float* Y, const EpilogueRun& e);

// The depthwise case of conv_forward (one input channel per group, 1-D or 2-D).
Status depthwise_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                         float* Y, const EpilogueRun& e);

// Dense direct convolution (conv_direct.cpp): whether it serves this shape, and the run.
bool direct_conv_applies(const ConvShape& s);
Status direct_conv_forward(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                           float* Y, const EpilogueRun& e);

}  // namespace sod2::rt
