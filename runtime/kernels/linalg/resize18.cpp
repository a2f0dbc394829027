// Resize-18/19 on top of the Resize kernel (resize.cpp): the `axes` attribute (scales, sizes and
// roi for those dims only) and keep_aspect_ratio_policy (sizes fitted to one scale). The wrapper
// expands scales/sizes/roi to every dim and hands them to the Resize-13 kernel. With a policy,
// the fitted sizes round(scale * in) go to the kernel, which then samples with size / in per axis
// rather than the one fitted scale (the same where the sizes come out exact). antialias is the
// inner kernel's (it reads the attribute at opset 18 and later).
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

enum class Policy { kStretch, kNotLarger, kNotSmaller };

// Passes the inner kernel's outputs and scratch through to the outer context.
class ForwardAllocator final : public OutputAllocator {
 public:
  explicit ForwardAllocator(KernelContext& ctx) : ctx_(ctx) {}
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    return ctx_.output(index, dtype, shape);
  }
  Expected<void*> scratch(size_t bytes) override { return ctx_.scratch(bytes); }

 private:
  KernelContext& ctx_;
};

class Resize18Kernel final : public Kernel {
 public:
  Resize18Kernel(std::unique_ptr<Kernel> inner, std::vector<int64_t> axes, Policy policy)
      : inner_(std::move(inner)), axes_(std::move(axes)), policy_(policy) {}

  // The inner kernel holds X and Y in channel blocks; the axes and policy only rewrite scales
  // and sizes.
  BlockedIo blocked_io(int block) const override { return inner_->blocked_io(block); }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    inner_->use_blocked(block, inputs, output);
  }

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Resize: needs input X");
    const int r = x->shape.rank();
    const Tensor* scales = ctx.input(2);
    const Tensor* sizes = ctx.input(3);
    if (scales && scales->numel() == 0) scales = nullptr;
    if (sizes && sizes->numel() == 0) sizes = nullptr;
    if (axes_.empty() && policy_ == Policy::kStretch) return inner_->run(ctx);

    // The dims the values describe.
    const int k = axes_.empty() ? r : static_cast<int>(axes_.size());
    if (k > r) return invalid_argument("Resize: more axes than dims of X " + x->shape.to_string());
    std::array<int, kMaxRank> dim_of{};
    std::array<bool, kMaxRank> named{};
    for (int j = 0; j < k; ++j) {
      const int64_t a = axes_.empty() ? j : axes_[static_cast<size_t>(j)];
      const int64_t d = a < 0 ? a + r : a;
      if (d < 0 || d >= r || named[static_cast<size_t>(d)])
        return invalid_argument("Resize: axes value " + std::to_string(a) +
                                " is out of range or repeated for X " + x->shape.to_string());
      named[static_cast<size_t>(d)] = true;
      dim_of[static_cast<size_t>(j)] = static_cast<int>(d);
    }
    // Full-rank copies: scale 1 and the input's size on the dims not named.
    std::array<float, kMaxRank> full_scales{};
    std::array<int64_t, kMaxRank> full_sizes{};
    for (int i = 0; i < r; ++i) {
      full_scales[static_cast<size_t>(i)] = 1.f;
      full_sizes[static_cast<size_t>(i)] = x->shape[i];
    }
    if (sizes) {
      if (sizes->dtype != DType::kInt64) return unsupported_dtype("Resize", "sizes", sizes->dtype);
      if (sizes->numel() != k)
        return invalid_argument("Resize: sizes " + sizes->shape.to_string() + " must have " +
                                std::to_string(k) + " values for X " + x->shape.to_string());
      const int64_t* sz = sizes->as<int64_t>();
      for (int j = 0; j < k; ++j)
        if (sz[j] < 0) return invalid_argument("Resize: negative size " + std::to_string(sz[j]));
      if (policy_ != Policy::kStretch) {
        // One scale for every named dim: the largest that fits in the sizes (not_larger) or the
        // smallest that covers them (not_smaller); each size is round(scale * input size).
        double fit = policy_ == Policy::kNotLarger ? INFINITY : 0.0;
        for (int j = 0; j < k; ++j) {
          const int64_t in = x->shape[dim_of[static_cast<size_t>(j)]];
          const double s = in == 0 ? 1.0 : static_cast<double>(sz[j]) / static_cast<double>(in);
          fit = policy_ == Policy::kNotLarger ? std::min(fit, s) : std::max(fit, s);
        }
        for (int j = 0; j < k; ++j) {
          const int d = dim_of[static_cast<size_t>(j)];
          // One dim's large size times another dim's length can pass int64 (UB to convert).
          const double fitted = std::round(fit * static_cast<double>(x->shape[d]));
          if (!(fitted >= 0 && fitted < 9.0e18))
            return invalid_argument("Resize: sizes fitted by keep_aspect_ratio_policy give dim " +
                                    std::to_string(d) + " of X " + x->shape.to_string() +
                                    " an invalid size");
          full_sizes[static_cast<size_t>(d)] = static_cast<int64_t>(fitted);
        }
      } else {
        for (int j = 0; j < k; ++j)
          full_sizes[static_cast<size_t>(dim_of[static_cast<size_t>(j)])] = sz[j];
      }
    } else if (scales) {
      if (scales->dtype != DType::kFloat)
        return unsupported_dtype("Resize", "scales", scales->dtype);
      if (scales->numel() != k)
        return invalid_argument("Resize: scales " + scales->shape.to_string() + " must have " +
                                std::to_string(k) + " values for X " + x->shape.to_string());
      for (int j = 0; j < k; ++j)
        full_scales[static_cast<size_t>(dim_of[static_cast<size_t>(j)])] = scales->as<float>()[j];
    } else {
      return invalid_argument("Resize: needs scales or sizes");
    }
    // The same inputs with full-rank scales or sizes.
    Tensor full;
    Shape one_dim{static_cast<int64_t>(r)};
    if (sizes) {
      full = Tensor{DType::kInt64, one_dim, full_sizes.data()};
    } else {
      full = Tensor{DType::kFloat, one_dim, full_scales.data()};
    }
    // roi (tf_crop_and_resize) lists starts then ends of the named axes: spread it to every dim,
    // the others keeping the whole [0, 1] box.
    const Tensor* roi = ctx.input(1);
    std::array<float, 2 * kMaxRank> full_roi{};
    Tensor roi_full;
    if (roi && !axes_.empty() && roi->numel() == 2 * k && k < r) {
      if (roi->dtype != DType::kFloat) return unsupported_dtype("Resize", "roi", roi->dtype);
      for (int i = 0; i < r; ++i) full_roi[static_cast<size_t>(r + i)] = 1.f;
      for (int j = 0; j < k; ++j) {
        const auto d = static_cast<size_t>(dim_of[static_cast<size_t>(j)]);
        full_roi[d] = roi->as<float>()[j];
        full_roi[static_cast<size_t>(r) + d] = roi->as<float>()[k + j];
      }
      roi_full = Tensor{DType::kFloat, Shape{2 * static_cast<int64_t>(r)}, full_roi.data()};
      roi = &roi_full;
    }
    std::array<const Tensor*, 4> in{x, roi, sizes ? nullptr : &full, sizes ? &full : nullptr};
    ForwardAllocator forward(ctx);
    KernelContext inner_ctx(std::span<const Tensor* const>(in.data(), in.size()), &forward,
                            &ctx.pool());
    return inner_->run(inner_ctx);
  }

 private:
  std::unique_ptr<Kernel> inner_;
  std::vector<int64_t> axes_;
  Policy policy_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_resize_v18(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> inner, make_resize(node));
  std::vector<int64_t> axes;
  std::string policy_name;
  SOD2_ATTR(axes, node.attrs.get_ints("axes"));
  SOD2_ATTR(policy_name, node.attrs.get_string("keep_aspect_ratio_policy", "stretch"));
  if (axes.size() > static_cast<size_t>(kMaxRank))
    return invalid_model("Resize: more than " + std::to_string(kMaxRank) + " axes");
  Policy policy = Policy::kStretch;
  if (policy_name == "not_larger")
    policy = Policy::kNotLarger;
  else if (policy_name == "not_smaller")
    policy = Policy::kNotSmaller;
  else if (policy_name != "stretch")
    return invalid_model("Resize: unknown keep_aspect_ratio_policy '" + policy_name + "'");
  return std::unique_ptr<Kernel>(new Resize18Kernel(std::move(inner), std::move(axes), policy));
}

}  // namespace sod2::rt
