#include "runtime/kernels/data/data_geometry.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/data/common.h"

namespace sod2::rt {
namespace {

// The first index and the number of elements ONNX's clamping gives for one axis.
void clamp_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first,
                int64_t* count) {
  if (dim == 0) {
    *first = 0;
    *count = 0;
    return;
  }
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    *first = start;
    *count = end > start ? (end - start - 1) / step + 1 : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    *first = start;
    // -step cannot overflow: steps are clamped to >= -INT64_MAX.
    *count = start > end ? (start - end - 1) / -step + 1 : 0;
  }
}

}  // namespace

Expected<SliceParams> read_slice_attrs(const Attrs& attrs) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> starts, attrs.get_ints("starts"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> ends, attrs.get_ints("ends"));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> axes, attrs.get_ints("axes"));
  if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size())) {
    return invalid_model("Slice: starts, ends and axes differ in length");
  }
  if (starts.size() > static_cast<size_t>(kMaxRank)) return invalid_model("Slice: too many axes");
  SliceParams p;
  p.count = static_cast<int>(starts.size());
  for (int k = 0; k < p.count; ++k) {
    p.starts[k] = starts[static_cast<size_t>(k)];
    p.ends[k] = ends[static_cast<size_t>(k)];
    p.axes[k] = axes.empty() ? k : axes[static_cast<size_t>(k)];
    p.steps[k] = 1;
  }
  return p;
}

Expected<SliceParams> read_slice_inputs(KernelContext& ctx) {
  const Tensor* starts = ctx.input(1);
  const Tensor* ends = ctx.input(2);
  if (!starts || !ends) return invalid_argument("Slice: data, starts and ends are required");
  SliceParams p;
  SOD2_ASSIGN_OR_RETURN(p.count, read_int_list(*starts, p.starts, kMaxRank, "Slice", "starts"));
  SOD2_ASSIGN_OR_RETURN(int n_ends, read_int_list(*ends, p.ends, kMaxRank, "Slice", "ends"));
  if (n_ends != p.count) {
    return invalid_argument("Slice: " + std::to_string(p.count) + " starts but " +
                            std::to_string(n_ends) + " ends");
  }
  if (const Tensor* axes = ctx.input(3)) {
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*axes, p.axes, kMaxRank, "Slice", "axes"));
    if (n != p.count) return invalid_argument("Slice: axes and starts differ in length");
  } else {
    for (int k = 0; k < p.count; ++k) p.axes[k] = k;
  }
  if (const Tensor* steps = ctx.input(4)) {
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*steps, p.steps, kMaxRank, "Slice", "steps"));
    if (n != p.count) return invalid_argument("Slice: steps and starts differ in length");
  } else {
    for (int k = 0; k < p.count; ++k) p.steps[k] = 1;
  }
  return p;
}

Expected<SliceGeometry> resolve_slice(const Shape& in, const SliceParams& p) {
  const int rank = in.rank();
  SliceGeometry g;
  g.out = in;
  for (int i = 0; i < rank; ++i) g.step[i] = 1;
  bool seen[kMaxRank] = {};
  for (int k = 0; k < p.count; ++k) {
    SOD2_ASSIGN_OR_RETURN(int a, normalize_axis(p.axes[k], rank, "Slice"));
    if (seen[a])
      return invalid_argument("Slice: axis " + std::to_string(p.axes[k]) + " is repeated");
    seen[a] = true;
    if (p.steps[k] == 0) return invalid_argument("Slice: step is 0");
    g.step[a] = std::max(p.steps[k], -std::numeric_limits<int64_t>::max());
    clamp_axis(in[a], p.starts[k], p.ends[k], g.step[a], &g.first[a], &g.out[a]);
  }
  return g;
}

Status resolve_transpose_perm(std::span<const int64_t> attr, int rank, int* perm) {
  if (attr.empty()) {
    for (int i = 0; i < rank; ++i) perm[i] = rank - 1 - i;
    return Status::ok_status();
  }
  if (attr.size() != static_cast<size_t>(rank)) {
    return invalid_argument("Transpose: perm has " + std::to_string(attr.size()) +
                            " entries for an input of rank " + std::to_string(rank));
  }
  bool seen[kMaxRank] = {};
  for (int i = 0; i < rank; ++i) {
    SOD2_ASSIGN_OR_RETURN(perm[i], normalize_axis(attr[i], rank, "Transpose"));
    if (seen[perm[i]]) return invalid_argument("Transpose: perm is not a permutation");
    seen[perm[i]] = true;
  }
  return Status::ok_status();
}

Expected<Shape> concat_output_shape(KernelContext& ctx, int64_t axis_attr, int* axis) {
  const size_t n = ctx.num_inputs();
  if (n == 0 || !ctx.input(0)) return invalid_argument("Concat: no inputs");
  const Tensor& first = *ctx.input(0);
  SOD2_RETURN_IF_ERROR(require_fixed_size(first.dtype, "Concat"));
  const int rank = first.shape.rank();
  if (rank == 0) return invalid_argument("Concat: inputs must have rank >= 1");
  SOD2_ASSIGN_OR_RETURN(*axis, normalize_axis(axis_attr, rank, "Concat"));
  Shape out_shape = first.shape;
  int64_t axis_total = 0;
  for (size_t k = 0; k < n; ++k) {
    const Tensor* t = ctx.input(k);
    if (!t) return invalid_argument("Concat: input " + std::to_string(k) + " is missing");
    if (t->dtype != first.dtype) {
      return invalid_argument("Concat: input " + std::to_string(k) + " has type " +
                              dtype_name(t->dtype) + ", input 0 has " + dtype_name(first.dtype));
    }
    bool same = t->shape.rank() == rank;
    for (int i = 0; same && i < rank; ++i) same = i == *axis || t->shape[i] == first.shape[i];
    if (!same) {
      return invalid_argument("Concat: input " + std::to_string(k) + " has shape " +
                              t->shape.to_string() + ", input 0 has " + first.shape.to_string());
    }
    if (__builtin_add_overflow(axis_total, t->shape[*axis], &axis_total)) {
      return invalid_argument("Concat: result is too large");
    }
  }
  out_shape[*axis] = axis_total;
  return checked_shape(out_shape.dims().data(), rank, dtype_size(first.dtype), "Concat");
}

Expected<Shape> gather_output_shape(const Shape& data, const Shape& indices, int64_t axis_attr,
                                    size_t elem_size, int* axis) {
  SOD2_ASSIGN_OR_RETURN(*axis, normalize_axis(axis_attr, data.rank(), "Gather"));
  const int out_rank = data.rank() - 1 + indices.rank();
  int64_t dims[kMaxRank * 2];
  int r = 0;
  for (int i = 0; i < *axis; ++i) dims[r++] = data[i];
  for (int i = 0; i < indices.rank(); ++i) dims[r++] = indices[i];
  for (int i = *axis + 1; i < data.rank(); ++i) dims[r++] = data[i];
  return checked_shape(dims, out_rank, elem_size, "Gather");
}

}  // namespace sod2::rt
