// Opset 18-20 data ops: CenterCropPad (18; any fixed-size type), Col2Im (18) and AffineGrid (20)
// on float32.
//
// CenterCropPad: each named axis (default all) of size n becomes the target t: a centred crop
// starting at (n - t) / 2, or a centred zero pad with (t - n) / 2 before (the ONNX reference's
// floor on the left). Col2Im sums the columns of [N, C * prod(block), L] back into the image
// [N, C, image...] (the inverse of im2col with dilations, pads, strides). AffineGrid maps the
// normalised base grid ([-1, 1], pixel centres or corners) through theta [N, 2, 3] / [N, 3, 4].
#include <cstring>
#include <string>
#include <vector>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *shape = ctx.input(1);
    if (!x || !shape) return invalid_argument("CenterCropPad: input_data and shape are required");
    SOD2_RETURN_IF_ERROR(require_fixed_size(x->dtype, "CenterCropPad"));
    const int r = x->shape.rank();
    int64_t target[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int k, read_int_list(*shape, target, kMaxRank, "CenterCropPad", "shape"));
    const size_t named = axes_.empty() ? static_cast<size_t>(r) : axes_.size();
    if (static_cast<size_t>(k) != named)
      return invalid_argument("CenterCropPad: shape has " + std::to_string(k) + " values for " +
                              std::to_string(named) + " axes");
    int64_t dims[kMaxRank], offset[kMaxRank] = {};  // input index = output index + offset
    for (int i = 0; i < r; ++i) dims[i] = x->shape[i];
    bool seen[kMaxRank] = {};
    for (int j = 0; j < k; ++j) {
      int a = j;
      if (!axes_.empty()) {
        SOD2_ASSIGN_OR_RETURN(a, normalize_axis(axes_[static_cast<size_t>(j)], r, "CenterCropPad"));
      }
      if (seen[a]) return invalid_argument("CenterCropPad: axis " + std::to_string(a) + " repeats");
      seen[a] = true;
      const int64_t t = target[j], n = x->shape[a];
      if (t < 0) return invalid_argument("CenterCropPad: negative size " + std::to_string(t));
      dims[a] = t;
      offset[a] = t <= n ? (n - t) / 2 : -((t - n) / 2);
    }
    const size_t elem = dtype_size(x->dtype);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, r, elem, "CenterCropPad"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out_shape));
    const int64_t total = out_shape.numel();
    if (total == 0) return Status::ok_status();
    int64_t in_strides[kMaxRank];
    row_major_strides(x->shape, in_strides);
    const auto* src = static_cast<const uint8_t*>(x->data);
    auto* dst = static_cast<uint8_t*>(y->data);
    int64_t idx[kMaxRank] = {};
    for (int64_t e = 0; e < total; ++e) {
      int64_t off = 0;
      bool inside = true;
      for (int i = 0; i < r && inside; ++i) {
        const int64_t s = idx[i] + offset[i];
        inside = s >= 0 && s < x->shape[i];
        off += s * in_strides[i];
      }
      uint8_t* d = dst + static_cast<size_t>(e) * elem;
      if (inside)
        std::memcpy(d, src + static_cast<size_t>(off) * elem, elem);
      else
        std::memset(d, 0, elem);
      for (int i = r - 1; i >= 0; --i) {
        if (++idx[i] < dims[i]) break;
        idx[i] = 0;
      }
    }
    return Status::ok_status();
  }

 private:
  std::vector<int64_t> axes_;
};

class Col2ImKernel final : public Kernel {
 public:
  Col2ImKernel(std::vector<int64_t> dil, std::vector<int64_t> pads, std::vector<int64_t> strides)
      : dil_(std::move(dil)), pads_(std::move(pads)), strides_(std::move(strides)) {}

  Status run(KernelContext& ctx) override {
    const Tensor *x = ctx.input(0), *image = ctx.input(1), *block = ctx.input(2);
    if (!x || !image || !block)
      return invalid_argument("Col2Im: input, image_shape and block_shape are required");
    if (x->dtype != DType::kFloat)
      return unsupported("Col2Im: element type " + std::string(dtype_name(x->dtype)) +
                         " is not supported");
    int64_t img[kMaxRank], blk[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*image, img, kMaxRank - 2, "Col2Im", "image_shape"));
    SOD2_ASSIGN_OR_RETURN(int nb,
                          read_int_list(*block, blk, kMaxRank - 2, "Col2Im", "block_shape"));
    if (n != nb || n == 0)
      return invalid_argument(
          "Col2Im: image_shape and block_shape must have the same, non-zero "
          "length");
    auto attr_at = [&](const std::vector<int64_t>& v, size_t i, int64_t fallback) {
      return v.empty() ? fallback : v[i];
    };
    if ((!dil_.empty() && dil_.size() != static_cast<size_t>(n)) ||
        (!strides_.empty() && strides_.size() != static_cast<size_t>(n)) ||
        (!pads_.empty() && pads_.size() != static_cast<size_t>(2 * n)))
      return invalid_argument("Col2Im: dilations, strides and pads must match the " +
                              std::to_string(n) + " image dims");
    if (x->shape.rank() != 3)
      return invalid_argument("Col2Im: input must be [N, C * prod(block_shape), L], got " +
                              x->shape.to_string());
    int64_t k = 1, l = 1, blocks[kMaxRank], d[kMaxRank], st[kMaxRank], pb[kMaxRank];
    for (int i = 0; i < n; ++i) {
      d[i] = attr_at(dil_, static_cast<size_t>(i), 1);
      st[i] = attr_at(strides_, static_cast<size_t>(i), 1);
      pb[i] = attr_at(pads_, static_cast<size_t>(i), 0);
      const int64_t pe = attr_at(pads_, static_cast<size_t>(i + n), 0);
      if (img[i] < 0 || blk[i] <= 0 || d[i] <= 0 || st[i] <= 0 || pb[i] < 0 || pe < 0)
        return invalid_argument("Col2Im: sizes, dilations and strides must be positive");
      constexpr int64_t kBig = int64_t{1} << 30;  // keeps the products below from overflowing
      if (img[i] > kBig || blk[i] > kBig || d[i] > kBig || pb[i] > kBig || pe > kBig)
        return invalid_argument("Col2Im: sizes, dilations or pads are too large");
      const int64_t span = d[i] * (blk[i] - 1) + 1, padded = img[i] + pb[i] + pe;
      blocks[i] = padded < span ? 0 : (padded - span) / st[i] + 1;
      if (!mul_fits(k, blk[i], &k) || !mul_fits(l, blocks[i], &l))
        return invalid_argument("Col2Im: block sizes overflow");
    }
    const int64_t batch = x->shape[0];
    if (x->shape[1] % k != 0 || x->shape[2] != l)
      return invalid_argument("Col2Im: input " + x->shape.to_string() + " does not fit " +
                              std::to_string(k) + " block elements and " + std::to_string(l) +
                              " blocks");
    const int64_t c = x->shape[1] / k;
    int64_t dims[kMaxRank] = {batch, c};
    for (int i = 0; i < n; ++i) dims[2 + i] = img[i];
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, n + 2, sizeof(float), "Col2Im"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out_shape));
    float* out = y->as<float>();
    std::fill_n(out, out_shape.numel(), 0.f);
    // No columns: the image stays zero. batch * C * k can be huge next to an L of 0, and is not
    // iterated.
    if (batch == 0 || c == 0 || l == 0) return Status::ok_status();
    const float* in = x->as<float>();
    int64_t plane = 1;
    for (int i = 0; i < n; ++i) plane *= img[i];
    for (int64_t bc = 0; bc < batch * c; ++bc) {
      float* dstp = out + bc * plane;
      for (int64_t ki = 0; ki < k; ++ki) {
        int64_t kidx[kMaxRank], rem = ki;
        for (int i = n - 1; i >= 0; --i) {
          kidx[i] = rem % blk[i];
          rem /= blk[i];
        }
        const float* srcp = in + (bc * k + ki) * l;
        for (int64_t li = 0; li < l; ++li) {
          int64_t r2 = li, pos = 0;
          bool inside = true;
          for (int i = n - 1; i >= 0; --i) {
            const int64_t lidx = r2 % blocks[i];
            r2 /= blocks[i];
            const int64_t p = lidx * st[i] - pb[i] + kidx[i] * d[i];
            inside = inside && p >= 0 && p < img[i];
            int64_t stride = 1;
            for (int j = i + 1; j < n; ++j) stride *= img[j];
            pos += p * stride;
          }
          if (inside) dstp[pos] += srcp[li];
        }
      }
    }
    return Status::ok_status();
  }

 private:
  std::vector<int64_t> dil_, pads_, strides_;
};

class AffineGridKernel final : public Kernel {
 public:
  explicit AffineGridKernel(bool align) : align_(align) {}

  Status run(KernelContext& ctx) override {
    const Tensor *theta = ctx.input(0), *size = ctx.input(1);
    if (!theta || !size) return invalid_argument("AffineGrid: theta and size are required");
    if (theta->dtype != DType::kFloat)
      return unsupported("AffineGrid: element type " + std::string(dtype_name(theta->dtype)) +
                         " is not supported");
    int64_t sz[5];
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*size, sz, 5, "AffineGrid", "size"));
    if (n != 4 && n != 5)
      return invalid_argument("AffineGrid: size must be [N, C, H, W] or [N, C, D, H, W]");
    const int sp = n - 2;  // 2 or 3 spatial dims
    const Shape want{sz[0], sp, sp + 1};
    if (theta->shape != want)
      return invalid_argument("AffineGrid: theta must be " + want.to_string() + ", got " +
                              theta->shape.to_string());
    int64_t dims[5] = {sz[0]};
    for (int i = 0; i < sp; ++i) dims[1 + i] = sz[2 + i];
    dims[1 + sp] = sp;
    for (int i = 0; i < n; ++i)
      if (sz[i] < 0) return invalid_argument("AffineGrid: negative size");
    SOD2_ASSIGN_OR_RETURN(Shape out_shape,
                          checked_shape(dims, sp + 2, sizeof(float), "AffineGrid"));
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out_shape));
    // An empty grid: N * D * H can be huge next to a W of 0 and is not iterated.
    if (out_shape.numel() == 0) return Status::ok_status();
    auto base = [&](int64_t i, int64_t len) -> float {
      if (align_)
        return len <= 1 ? -1.f : -1.f + 2.f * static_cast<float>(i) / static_cast<float>(len - 1);
      return (2.f * static_cast<float>(i) + 1.f) / static_cast<float>(len) - 1.f;
    };
    const float* th = theta->as<float>();
    float* out = y->as<float>();
    const int64_t depth = sp == 3 ? sz[2] : 1, h = sz[n - 2], w = sz[n - 1];
    for (int64_t b = 0; b < sz[0]; ++b) {
      const float* t = th + b * sp * (sp + 1);
      for (int64_t zi = 0; zi < depth; ++zi)
        for (int64_t yi = 0; yi < h; ++yi)
          for (int64_t xi = 0; xi < w; ++xi) {
            // Coordinates in (x, y[, z]) order, then 1.
            float c[4] = {base(xi, w), base(yi, h), sp == 3 ? base(zi, depth) : 1.f, 1.f};
            if (sp == 2) c[2] = 1.f;
            for (int r = 0; r < sp; ++r) {
              float acc = 0.f;
              for (int j = 0; j <= sp; ++j) acc += t[r * (sp + 1) + j] * c[j];
              *out++ = acc;
            }
          }
    }
    return Status::ok_status();
  }

 private:
  bool align_;
};

}  // namespace

KernelOr make_center_crop_pad(const NodeInfo& node) {
  std::vector<int64_t> axes;
  if (node.attrs.has("axes")) {
    SOD2_ASSIGN_OR_RETURN(axes, node.attrs.get_ints("axes"));
  }
  if (axes.size() > static_cast<size_t>(kMaxRank))
    return invalid_model("CenterCropPad: too many axes");
  return make_kernel<CenterCropPadKernel>(std::move(axes));
}

KernelOr make_col2im(const NodeInfo& node) {
  std::vector<int64_t> dil, pads, strides;
  SOD2_ASSIGN_OR_RETURN(dil, node.attrs.get_ints("dilations"));
  SOD2_ASSIGN_OR_RETURN(pads, node.attrs.get_ints("pads"));
  SOD2_ASSIGN_OR_RETURN(strides, node.attrs.get_ints("strides"));
  return make_kernel<Col2ImKernel>(std::move(dil), std::move(pads), std::move(strides));
}

KernelOr make_affine_grid(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t align, node.attrs.get_int("align_corners", 0));
  return make_kernel<AffineGridKernel>(align != 0);
}

}  // namespace sod2::rt
