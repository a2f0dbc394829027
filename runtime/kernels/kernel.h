// The CPU kernel interface. A kernel is created once per node when a model loads (reading and
// validating its attributes then), and run once per execution of the node.
//
// Inputs arrive as views; an omitted optional input is nullptr. A kernel computes its outputs'
// shapes itself and asks the context for their memory with output(): the executor hands out
// the bytes the memory plan reserved (checking that the shape fits what RDP predicted) or, for
// values the plan does not hold, other memory. A kernel never allocates tensors itself, and in
// the steady state it should not touch the heap at all (scratch comes from scratch()).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/attrs.h"
#include "runtime/tensor/tensor.h"
#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

// What a kernel factory knows about its node.
struct NodeInfo {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  int opset = 0;       // of the node's domain
  Attrs attrs;
  // Per input slot (omitted optional inputs included, as kUndefined with present = false).
  std::vector<DType> input_dtypes;
  std::vector<bool> input_present;
  std::vector<DType> output_dtypes;  // kUndefined where unknown
  size_t num_outputs = 0;
  // Per input slot: a program constant, the same tensor at the same address on every run of the
  // session (the session fills it; empty means none is known to be). A kernel may then derive
  // data from it once (narrow_float_kernel.h widens half-precision weights once).
  std::vector<bool> input_constant;
};

// Memory for outputs and scratch, provided by the executor.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  virtual Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) = 0;
  virtual Expected<void*> scratch(size_t bytes) = 0;
  // Output `index` is a non-tensor value (a sequence, or an optional holding nothing). Only the
  // session's allocator holds such values.
  virtual Status output_value(size_t index, HostTensor value) {
    (void)index;
    (void)value;
    return unsupported("sequence and optional values are only held by a session");
  }
};

class KernelContext {
 public:
  KernelContext(std::span<const Tensor* const> inputs, OutputAllocator* alloc, ThreadPool* pool)
      : inputs_(inputs), alloc_(alloc), pool_(pool) {}

  size_t num_inputs() const { return inputs_.size(); }
  // nullptr for an omitted optional input (or an index past the end).
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // The memory for output i with this type and shape; the view stays valid for this run.
  Expected<Tensor*> output(size_t i, DType dtype, const Shape& shape) {
    return alloc_->output(i, dtype, shape);
  }
  Status output_value(size_t i, HostTensor value) {
    return alloc_->output_value(i, std::move(value));
  }
  // Scratch bytes valid until the kernel returns, 64-byte aligned.
  Expected<void*> scratch(size_t bytes) { return alloc_->scratch(bytes); }
  ThreadPool& pool() { return *pool_; }
  // Whether a convolution may run as Winograd F(2x2, 3x3) where it qualifies
  // (SessionOptions::winograd): its results differ from the direct conv's in rounding only.
  bool winograd() const { return winograd_; }
  void set_winograd(bool on) { winograd_ = on; }

 private:
  std::span<const Tensor* const> inputs_;
  OutputAllocator* alloc_;
  ThreadPool* pool_;
  bool winograd_ = true;
};

// Channel-blocked values. Between kernels that can all read and write it, a main-graph [N, C, H, W]
// float tensor may be held as [N, C / block, H, W, block] (oneDNN's nChw16c / nChw8c): the same
// bytes in the arena in another order, so the memory plan is the plan either way, and blocked
// convolutions then pass their results on without converting them. Where C is not a multiple of
// `block`, the last block of each image is narrower, C % block channels per position
// (channel_blocks.h, held_block_width), so the bytes stay the same; only kernels that say so take
// such a narrow block. The session decides which values are held so
// (runtime/exec/blocked_values.h), from what each kernel says it can do, and tells each kernel
// before the first run.
struct BlockedIo {
  uint64_t inputs = 0;  // bit i: input slot i may arrive blocked
  bool output = false;  // output 0 may be written blocked
  uint64_t tied = 0;  // bit i: input slot i is held exactly as output 0 is (a residual, a pool's X)
  // Output 0 may be held blocked only where one of these input slots is (an elementwise op's
  // operands: a blocked one fixes the output's channels), though they need not agree.
  uint64_t follows = 0;
  // The blocked slots that also take a narrow last block: bit i for input slot i, and output 0.
  uint64_t narrow_inputs = 0;
  bool narrow_output = false;
  // Output 0's channels where the kernel knows them from its constants (a conv's M), else -1: a
  // value whose channels are not known to fill whole blocks needs narrow blocks at every end.
  int64_t channels = -1;
};

// What a kernel offers whose X (input slot 0) and Y are held alike, lane by lane, a narrow last
// block included (Pad, BatchNorm, Resize); and its block once the session chose (0: NCHW).
inline BlockedIo tied_blocked_io(int block) {
  BlockedIo io;
  if (block <= 0) return io;
  io.inputs = io.tied = io.narrow_inputs = uint64_t{1};
  io.output = io.narrow_output = true;
  return io;
}
inline int tied_block_used(int block, uint64_t inputs, bool output) {
  return (inputs & 1) != 0 && output ? block : 0;
}

// In a value held blocked, the block that starts at channel `first` holds this many channels per
// position: `block`, but for the last block of a channel count that is not a multiple of it.
inline int held_block_width(int block, int64_t channels, int64_t first) {
  const int64_t left = channels - first;
  return static_cast<int>(left < block ? left : block);
}

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Errors name what is wrong with the inputs ("Gather: index 7 is out of range for axis 0 of
  // size 5"); the executor adds the node's name.
  virtual Status run(KernelContext& ctx) = 0;
  // Called once after creation, when the model loads, with the program constants among the node's
  // inputs (nullptr in the other slots). A kernel may derive data from them here rather than on
  // its first run (the convolutions reorder their weights), so that work and its memory belong to
  // loading. Failing here fails the load.
  virtual Status prepare(std::span<const Tensor* const> constants) {
    (void)constants;
    return Status::ok_status();
  }
  // Whether run() handles inputs that are sequences or empty optionals (Tensor::is_tensor()
  // false); the session refuses to pass them to any other kernel.
  virtual bool takes_non_tensors() const { return false; }
  // Whether run() handles string tensors (elements are std::strings, not bytes); the session
  // refuses to pass them to any other kernel.
  virtual bool takes_strings() const { return false; }
  // Which of its values this kernel can take and give channel-blocked with `block` channels per
  // block (after prepare(), so it may depend on constant weights' shapes). Nothing by default.
  virtual BlockedIo blocked_io(int block) const {
    (void)block;
    return {};
  }
  // The session's choice, before the first run, within what blocked_io(block) offered: the input
  // slots that arrive blocked and whether output 0 is to be written blocked.
  virtual void use_blocked(int block, uint64_t inputs, bool output) {
    (void)block;
    (void)inputs;
    (void)output;
  }
};

// Validates the node's attributes and input types; an unsupported case (a mode, a dtype) is an
// `unsupported` error naming it.
using KernelFactory = Expected<std::unique_ptr<Kernel>> (*)(const NodeInfo& node);

}  // namespace sod2::rt
