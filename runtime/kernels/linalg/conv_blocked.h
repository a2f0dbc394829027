// Dense and grouped (not depthwise) 1-D/2-D convolutions on oneDNN's JIT convolution in a
// channel-blocked layout (nChw16c on AVX-512, nChw8c on AVX2), where the GEMM library is oneDNN
// (x86-64). A grouped conv's groups must each fill whole blocks (RegNet's 16- and 8-wide); an
// ungrouped conv's channels are padded to whole blocks where they do not fill them.
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
#include <span>

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
  // returns false, having written nothing, when another path must run it. With `held`, X and/or
  // Y (and the residual) are channel-blocked with held.block channels per block: they are read
  // and written as they are, and 1x1 convolutions run here too.
  Expected<bool> run(KernelContext& ctx, const ConvShape& s, const float* X, const float* W,
                     float* Y, const EpilogueRun& e, BlockedTensors held = {});

  // At load, with constant weights W: reorders them for the kernels this path would run them
  // on, so the first run does not (and the copy is memory of the loaded model). Shapes it does
  // not serve, or primitives that turn out to want another layout, are left to run().
  // `held`: the conv's tensors are held blocked, so a pointwise conv runs here too.
  void prepare(const Tensor& w, const WindowAttrs& attrs, int64_t group, bool held = false);

  // How many times weights were reordered so far (for tests: constant weights once per layout).
  int64_t weight_reorders() const;
  // How many parts of images ran as Winograd convolutions so far (for tests).
  int64_t winograd_parts() const;

  // Whether this build has the path at all (oneDNN is the GEMM library).
  static bool available();
  // For tests: run() declines every shape (returns false), so callers' other paths run, those
  // of tensors held blocked included.
  static void set_declines_for_testing(bool declines);

  // Channels per block of its layout on this CPU: 16 with AVX-512, 8 with AVX2, 0 without the
  // path.
  static int block_width();
  // Whether a convolution of these weights ([M, C / group, kH, kW]) and group can read X and
  // write Y blocked with `block` channels per block: 2-D, not depthwise, the tensor's channels
  // and a group's whole blocks. Where the path still does not serve the conv as it is held (no
  // JIT kernel for the shape, an image wholly in the padding), the Conv kernel converts the held
  // tensors around its NCHW paths: one conversion there rather than at every value tied to them.
  static bool can_read_blocked(std::span<const int64_t> w_dims, int64_t group, int block);
  static bool can_write_blocked(std::span<const int64_t> w_dims, int64_t group, int block);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sod2::rt
