// The shape and index arithmetic of the data-movement ops (Slice, Transpose, Concat, Gather),
// shared by the CPU kernels and the Vulkan kernels so both derive the same result and report the
// same errors.
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

// Concat's result: every input present, of one fixed-size dtype and rank >= 1, equal to input 0
// except along `axis_attr` (normalised into `*axis`), its byte size within range.
Expected<Shape> concat_output_shape(KernelContext& ctx, int64_t axis_attr, int* axis);

// Gather's result: data's dims before `axis_attr` (normalised into `*axis`), the indices' dims,
// then data's dims after it.
Expected<Shape> gather_output_shape(const Shape& data, const Shape& indices, int64_t axis_attr,
                                    size_t elem_size, int* axis);

}  // namespace sod2::rt
