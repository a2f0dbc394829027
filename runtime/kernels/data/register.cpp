// Maps the data family's ops to their factories, each from the opset where its behaviour starts.
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt {

void register_data_kernels(KernelRegistry& r) {
  r.add("", "Reshape", 1, make_reshape_v1);
  r.add("", "Reshape", 5, make_reshape_v5);
  r.add("", "Flatten", 1, make_flatten);
  r.add("", "Squeeze", 1, make_squeeze_v1);
  r.add("", "Squeeze", 13, make_squeeze_v13);
  r.add("", "Unsqueeze", 1, make_unsqueeze_v1);
  r.add("", "Unsqueeze", 13, make_unsqueeze_v13);
  r.add("", "Transpose", 1, make_transpose);
  r.add("", "DepthToSpace", 1, make_depth_to_space);
  r.add("", "SpaceToDepth", 1, make_space_to_depth);
  r.add("", "Concat", 1, make_concat);
  r.add("", "Split", 1, make_split_v1);
  r.add("", "Split", 13, make_split_v13);
  r.add("", "Split", 18, make_split_v18);
  r.add("", "CenterCropPad", 18, make_center_crop_pad);
  r.add("", "Col2Im", 18, make_col2im);
  r.add("", "AffineGrid", 20, make_affine_grid);
  r.add("", "Slice", 1, make_slice_v1);
  r.add("", "Slice", 10, make_slice_v10);
  r.add("", "Expand", 8, make_expand);
  r.add("", "Tile", 6, make_tile);
  r.add("", "Gather", 1, make_gather);
  r.add("", "GatherElements", 11, make_gather_elements);
  r.add("", "GatherND", 11, make_gather_nd);
  r.add("", "Shape", 1, make_shape_v1);
  r.add("", "Shape", 15, make_shape_v15);
  r.add("", "Size", 1, make_size);
  r.add("", "ConstantOfShape", 9, make_constant_of_shape);
  r.add("", "Range", 11, make_range);
  r.add("", "Constant", 1, make_constant);
  r.add("", "Pad", 1, make_pad_v1);
  r.add("", "Pad", 2, make_pad_v2);
  r.add("", "Pad", 11, make_pad_v11);
  for (int v : {18, 19}) r.add("", "Pad", v, make_pad_v11);  // axes input; wrap mode
  r.add("", "ScatterND", 11, make_scatter_nd);
  r.add("", "ScatterElements", 11, make_scatter_elements);
  r.add("", "ScatterND", 18, make_scatter_nd);  // reduction max/min
  r.add("", "ScatterElements", 18, make_scatter_elements);
  r.add("", "Scatter", 9, make_scatter);
  r.add("", "OneHot", 9, make_one_hot);
  r.add("", "Trilu", 14, make_trilu);
  r.add("", "EyeLike", 9, make_eye_like);
  r.add("", "NonZero", 9, make_nonzero);
  r.add("", "NonMaxSuppression", 10, make_non_max_suppression);
  r.add("", "Compress", 9, make_compress);
  r.add("", "Unique", 11, make_unique);
  r.add("", "ReverseSequence", 10, make_reverse_sequence);
  r.add("", "RoiAlign", 10, make_roi_align);
  r.add("", "RoiAlign", 16, make_roi_align);
  r.add("", "GridSample", 16, make_grid_sample);
  r.add("", "GridSample", 20, make_grid_sample);  // modes linear/cubic; 4-D or 5-D X
}

}  // namespace sod2::rt
