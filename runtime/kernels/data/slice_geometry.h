// Slice's and Transpose's index arithmetic, shared by the CPU kernels and the Vulkan kernels so
// both derive the same view and report the same errors.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

struct SliceParams {
  int count = 0;  // number of sliced axes
  int64_t starts[kMaxRank], ends[kMaxRank], axes[kMaxRank], steps[kMaxRank];
};

// Per input dim: the result's extent, its first index and its step (1 for unsliced dims).
struct SliceGeometry {
  Shape out;
  int64_t first[kMaxRank] = {};
  int64_t step[kMaxRank] = {};
};

// Slice-1: starts, ends and axes are attributes; steps are 1.
Expected<SliceParams> read_slice_attrs(const Attrs& attrs);

// Slice-10+: starts, ends, axes and steps are inputs 1..4 (input 0 is not looked at).
Expected<SliceParams> read_slice_inputs(KernelContext& ctx);

// The view of `in` that `p` selects, clamped as ONNX specifies.
Expected<SliceGeometry> resolve_slice(const Shape& in, const SliceParams& p);

// Transpose's `perm` attribute for an input of `rank` into `perm` (reversed when `attr` is empty).
Status resolve_transpose_perm(std::span<const int64_t> attr, int rank, int* perm);

}  // namespace sod2::rt
