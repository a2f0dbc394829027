// The kernel factories of the data family, one per op behaviour; register.cpp maps them to op
// names and the opsets where each behaviour starts.
#pragma once

#include <memory>

#include "runtime/kernels/kernel.h"

namespace sod2::rt {

using KernelOr = Expected<std::unique_ptr<Kernel>>;

// reshape.cpp
KernelOr make_reshape_v1(const NodeInfo& node);  // shape attribute
KernelOr make_reshape_v5(const NodeInfo& node);  // shape input (allowzero from 14)
KernelOr make_flatten(const NodeInfo& node);
KernelOr make_squeeze_v1(const NodeInfo& node);   // axes attribute
KernelOr make_squeeze_v13(const NodeInfo& node);  // axes input
KernelOr make_unsqueeze_v1(const NodeInfo& node);
KernelOr make_unsqueeze_v13(const NodeInfo& node);

// transpose.cpp
KernelOr make_transpose(const NodeInfo& node);
KernelOr make_depth_to_space(const NodeInfo& node);  // mode from 11
KernelOr make_space_to_depth(const NodeInfo& node);

// concat_split.cpp
KernelOr make_concat(const NodeInfo& node);
KernelOr make_split_v1(const NodeInfo& node);   // split attribute
KernelOr make_split_v13(const NodeInfo& node);  // split input
KernelOr make_split_v18(const NodeInfo& node);  // split input or num_outputs

// col2im.cpp (opsets 18-20)
KernelOr make_center_crop_pad(const NodeInfo& node);
KernelOr make_col2im(const NodeInfo& node);
KernelOr make_affine_grid(const NodeInfo& node);

// slice.cpp
KernelOr make_slice_v1(const NodeInfo& node);   // attributes
KernelOr make_slice_v10(const NodeInfo& node);  // inputs

// expand_tile.cpp
KernelOr make_expand(const NodeInfo& node);
KernelOr make_tile(const NodeInfo& node);

// gather.cpp
KernelOr make_gather(const NodeInfo& node);
KernelOr make_gather_elements(const NodeInfo& node);
KernelOr make_gather_nd(const NodeInfo& node);

// shape_ops.cpp
KernelOr make_shape_v1(const NodeInfo& node);
KernelOr make_shape_v15(const NodeInfo& node);  // start / end
KernelOr make_size(const NodeInfo& node);
KernelOr make_constant_of_shape(const NodeInfo& node);
KernelOr make_range(const NodeInfo& node);
KernelOr make_constant(const NodeInfo& node);

// pad.cpp
KernelOr make_pad_v1(const NodeInfo& node);   // 'paddings' attribute
KernelOr make_pad_v2(const NodeInfo& node);   // 'pads' and 'value' attributes
KernelOr make_pad_v11(const NodeInfo& node);  // pads and constant_value inputs

// scatter.cpp
KernelOr make_scatter_nd(const NodeInfo& node);        // reduction from 16
KernelOr make_scatter_elements(const NodeInfo& node);  // reduction from 16
KernelOr make_scatter(const NodeInfo& node);           // deprecated Scatter-9

// one_hot.cpp, trilu_eye_like.cpp
KernelOr make_one_hot(const NodeInfo& node);
KernelOr make_trilu(const NodeInfo& node);
KernelOr make_eye_like(const NodeInfo& node);

// Ops whose output size depends on values: nonzero.cpp, nms.cpp, compress.cpp
KernelOr make_nonzero(const NodeInfo& node);
KernelOr make_non_max_suppression(const NodeInfo& node);
KernelOr make_compress(const NodeInfo& node);
KernelOr make_unique(const NodeInfo& node);  // unique.cpp

// reverse_sequence.cpp, roi_align.cpp, grid_sample.cpp
KernelOr make_reverse_sequence(const NodeInfo& node);
KernelOr make_roi_align(const NodeInfo& node);  // coordinate_transformation_mode from 16
KernelOr make_grid_sample(const NodeInfo& node);

}  // namespace sod2::rt
