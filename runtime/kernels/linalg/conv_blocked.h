// Dense and grouped (not depthwise) 1-D/2-D convolutions on oneDNN's JIT convolution in a
// channel-blocked layout (nChw16c on AVX-512, nChw8c on AVX2), where the GEMM library is oneDNN
// (x86-64). A grouped conv's groups must each fill whole blocks (RegNet's 16- and 8-wide).
//
// The blocked kernels measured 95-100% of FP32 peak on ResNet's 3x3 and 1x1 convs against
// 45-60% for im2col + GEMM or the direct loops on NCHW. Tensors stay NCHW between ops: the input
// is blocked once per run, and each thread unblocks the output channels it computed while they
// are still cached, applying the epilogue (bias, residual, activation) on the way, so the result
// is exactly what the NCHW paths' epilogue computes on the same sums.
//
// The threads of our pool each run a single-threaded primitive over their own part: a range of
// images, or, when there are fewer images than threads, a range of output-channel blocks.
// Primitives are kept per shape and part (dynamic dims make a few); constant weights are
// reordered into the primitive's layout once.
#pragma once

#include <memory>

#include "runtime/kernels/linalg/conv_internal.h"

namespace sod2::rt {

class BlockedConv {
 public:
  explicit BlockedConv(bool constant_weights);
  ~BlockedConv();
  BlockedConv(const BlockedConv&) = delete;
  BlockedConv& operator=(const BlockedConv&) = delete;

  // Runs the convolution when this path serves the shape (not depthwise, 1-D or 2-D, channel
  // counts per group that fill whole blocks, a JIT kernel for this CPU) and returns true;
  // returns false, having written nothing, when another path must run it.
  Expected<bool> run(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                     float* Y, const EpilogueRun& e);

  // At load, with constant weights W: reorders them for the kernels this path would run them
  // on, so the first run does not (and the copy is memory of the loaded model). Shapes it does
  // not serve, or primitives that turn out to want another layout, are left to run().
  void prepare(const Tensor& w, const WindowAttrs& attrs, int64_t group);

  // How many times weights were reordered so far (for tests: constant weights once per layout).
  int64_t weight_reorders() const;

  // Whether this build has the path at all (oneDNN is the GEMM library).
  static bool available();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sod2::rt
