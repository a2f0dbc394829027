// What the sequence and optional kernels share: reading their sequence input and a position,
// and making a sequence output (forward_value.h hands a value on).
#pragma once

#include <memory>
#include <string>

#include "runtime/kernels/forward_value.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor/sequence.h"

namespace sod2::rt {

// Input `i` as a sequence, or an error naming the op and what it got instead.
Expected<const Sequence*> sequence_input(const KernelContext& ctx, size_t i, const char* op);

// The position input `t` (a scalar int32/int64) as an index into a sequence of `size` elements:
// [-size, size - 1], or up to `size` when `one_past_end` (an insertion point); negative counts
// from the back.
Expected<size_t> sequence_position(const Tensor& t, size_t size, bool one_past_end, const char* op);

// An error naming `op` when a sequence of `count` elements would exceed kMaxSequenceElements.
Status check_sequence_length(size_t count, const char* op);

// The factory of a kernel that reads no attributes.
template <typename K>
Expected<std::unique_ptr<Kernel>> make_attributeless(const NodeInfo&) {
  return std::unique_ptr<Kernel>(std::make_unique<K>());
}

// A sequence output of `dtype` holding `seq`.
Status sequence_output(KernelContext& ctx, size_t o, std::shared_ptr<Sequence> seq);

}  // namespace sod2::rt
