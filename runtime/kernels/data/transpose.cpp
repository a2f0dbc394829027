// Transpose and the two ops that are a reshape plus a fixed transpose, DepthToSpace and
// SpaceToDepth. All three describe a strided view of the input for strided_copy.
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/data_geometry.h"
#include "runtime/kernels/data/factories.h"
#include "runtime/kernels/data/strided_copy.h"

namespace sod2::rt {
namespace {

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(std::vector<int64_t> perm) : perm_(std::move(perm)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Transpose: missing input");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "Transpose"));
    const Shape& in = data->shape;
    const int rank = in.rank();
    int perm[kMaxRank];
    SOD2_RETURN_IF_ERROR(resolve_transpose_perm(perm_, rank, perm));
    int64_t in_strides[kMaxRank];
    row_major_strides(in, in_strides);
    Shape out_shape;
    StridedView view;
    for (int i = 0; i < rank; ++i) {
      out_shape.push_back(in[perm[i]]);
      view.push(in[perm[i]], in_strides[perm[i]]);
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data->dtype, out_shape));
    strided_copy(ctx.pool(), out->data, data->data, dtype_size(data->dtype), view);
    return Status::ok_status();
  }

 private:
  std::vector<int64_t> perm_;
};

// Copies `data` viewed as `split_dims` (a row-major reshape of it) and permuted by `perm`.
Status copy_permuted(KernelContext& ctx, const Tensor& data, const int64_t* split_dims,
                     const int* perm, int rank, const Shape& out_shape) {
  int64_t strides[kMaxRank];
  row_major_strides(Shape(std::span<const int64_t>(split_dims, static_cast<size_t>(rank))),
                    strides);
  StridedView view;
  for (int i = 0; i < rank; ++i) view.push(split_dims[perm[i]], strides[perm[i]]);
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data.dtype, out_shape));
  strided_copy(ctx.pool(), out->data, data.data, dtype_size(data.dtype), view);
  return Status::ok_status();
}

class DepthToSpaceKernel final : public Kernel {
 public:
  DepthToSpaceKernel(int64_t block, bool crd) : block_(block), crd_(crd) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("DepthToSpace: missing input");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "DepthToSpace"));
    const Shape& s = data->shape;
    if (s.rank() != 4)
      return invalid_argument("DepthToSpace: input must be 4-D, got " + s.to_string());
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = block_;
    if (c % (b * b) != 0) {
      return invalid_argument("DepthToSpace: channels " + std::to_string(c) +
                              " are not divisible by blocksize^2 = " + std::to_string(b * b));
    }
    const int64_t oc = c / (b * b);
    const Shape out_shape{n, oc, h * b, w * b};
    if (crd_) {
      const int64_t dims[6] = {n, oc, b, b, h, w};
      const int perm[6] = {0, 1, 4, 2, 5, 3};
      return copy_permuted(ctx, *data, dims, perm, 6, out_shape);
    }
    const int64_t dims[6] = {n, b, b, oc, h, w};
    const int perm[6] = {0, 3, 4, 1, 5, 2};
    return copy_permuted(ctx, *data, dims, perm, 6, out_shape);
  }

 private:
  int64_t block_;
  bool crd_;
};

class SpaceToDepthKernel final : public Kernel {
 public:
  explicit SpaceToDepthKernel(int64_t block) : block_(block) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("SpaceToDepth: missing input");
    SOD2_RETURN_IF_ERROR(require_fixed_size(data->dtype, "SpaceToDepth"));
    const Shape& s = data->shape;
    if (s.rank() != 4)
      return invalid_argument("SpaceToDepth: input must be 4-D, got " + s.to_string());
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = block_;
    if (h % b != 0 || w % b != 0) {
      return invalid_argument("SpaceToDepth: spatial dims " + s.to_string() +
                              " are not divisible by blocksize " + std::to_string(b));
    }
    const int64_t dims[6] = {n, c, h / b, b, w / b, b};
    const int perm[6] = {0, 3, 5, 1, 2, 4};
    return copy_permuted(ctx, *data, dims, perm, 6, Shape{n, c * b * b, h / b, w / b});
  }

 private:
  int64_t block_;
};

Expected<int64_t> read_blocksize(const NodeInfo& node, const char* op) {
  SOD2_ASSIGN_OR_RETURN(int64_t b, node.attrs.get_int("blocksize", 0));
  if (b <= 0 || b > (int64_t{1} << 20)) {
    return invalid_model(std::string(op) + ": blocksize must be positive, got " +
                         std::to_string(b));
  }
  return b;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_transpose(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> perm, node.attrs.get_ints("perm"));
  if (perm.size() > static_cast<size_t>(kMaxRank)) {
    return unsupported("Transpose: perm longer than the maximum rank");
  }
  return make_kernel<TransposeKernel>(std::move(perm));
}

Expected<std::unique_ptr<Kernel>> make_depth_to_space(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node, "DepthToSpace"));
  std::string mode = "DCR";
  if (node.opset >= 11) {
    SOD2_ASSIGN_OR_RETURN(mode, node.attrs.get_string("mode", "DCR"));
  }
  if (mode != "DCR" && mode != "CRD") {
    return unsupported("DepthToSpace: mode '" + mode + "'");
  }
  return make_kernel<DepthToSpaceKernel>(b, mode == "CRD");
}

Expected<std::unique_ptr<Kernel>> make_space_to_depth(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t b, read_blocksize(node, "SpaceToDepth"));
  return make_kernel<SpaceToDepthKernel>(b);
}

}  // namespace sod2::rt
