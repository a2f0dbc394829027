// Ops that change only the shape: Reshape, Flatten, Squeeze, Unsqueeze. The bytes (or a string
// tensor's strings) are copied unchanged, unless the memory plan made the output a view of the
// input (runtime/program/byte_views.h): the executor then hands out the input's own bytes.
#include <algorithm>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

Status copy_with_shape(KernelContext& ctx, const Tensor& in, const Shape& shape, const char* op) {
  if (in.dtype == DType::kString) {
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, in.dtype, shape));
    copy_elements(in, *out);
    return Status::ok_status();
  }
  SOD2_RETURN_IF_ERROR(require_fixed_size(in.dtype, op));
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, in.dtype, shape));
  if (out->data != in.data) parallel_memcpy(ctx.pool(), out->data, in.data, in.bytes());
  return Status::ok_status();
}

// ONNX Reshape's rule: 0 copies the input dim at that position (unless allowzero), one -1 is
// inferred from the element count.
Expected<Shape> reshape_target(const Shape& in, const int64_t* spec, int n, bool allowzero) {
  int64_t dims[kMaxRank];
  int infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (int i = 0; i < n; ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) return invalid_argument("Reshape: more than one -1 in shape");
      infer_at = i;
      dims[i] = 1;
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= in.rank()) {
        return invalid_argument("Reshape: shape[" + std::to_string(i) +
                                "] is 0 but the input has rank " + std::to_string(in.rank()));
      }
      d = in[i];
    }
    if (d < 0) {
      return invalid_argument("Reshape: invalid dim " + std::to_string(d) + " in shape");
    }
    has_zero |= d == 0;
    dims[i] = d;
    if (!mul_fits(known, d, &known)) return invalid_argument("Reshape: shape is too large");
  }
  const int64_t total = in.numel();
  if (infer_at >= 0) {
    if (has_zero && allowzero) {
      return invalid_argument("Reshape: -1 together with a 0 dim under allowzero");
    }
    if (known == 0 || total % known != 0) {
      return invalid_argument("Reshape: cannot infer the -1 dim of a shape with " +
                              std::to_string(known) + " elements from an input of " +
                              std::to_string(total));
    }
    dims[infer_at] = total / known;
  } else if (known != total) {
    return invalid_argument("Reshape: input of shape " + in.to_string() + " (" +
                            std::to_string(total) + " elements) cannot become " +
                            std::to_string(known) + " elements");
  }
  return Shape(std::span<const int64_t>(dims, static_cast<size_t>(n)));
}

class ReshapeKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  // `attr_shape` set for Reshape-1, where the shape is an attribute.
  ReshapeKernel(bool allowzero, bool shape_from_attr, std::vector<int64_t> attr_shape)
      : allowzero_(allowzero), shape_from_attr_(shape_from_attr), attr_rank_(0) {
    for (size_t i = 0; i < attr_shape.size(); ++i) attr_shape_[i] = attr_shape[i];
    attr_rank_ = static_cast<int>(attr_shape.size());
  }

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Reshape: missing data input");
    int64_t spec[kMaxRank];
    int n = attr_rank_;
    if (shape_from_attr_) {
      std::copy_n(attr_shape_, n, spec);
    } else {
      const Tensor* shape = ctx.input(1);
      if (!shape) return invalid_argument("Reshape: missing shape input");
      if (shape->dtype != DType::kInt64) {
        return invalid_argument("Reshape: shape must be int64");
      }
      SOD2_ASSIGN_OR_RETURN(n, read_int_list(*shape, spec, kMaxRank, "Reshape", "shape"));
    }
    SOD2_ASSIGN_OR_RETURN(Shape out, reshape_target(data->shape, spec, n, allowzero_));
    return copy_with_shape(ctx, *data, out, "Reshape");
  }

 private:
  bool allowzero_;
  bool shape_from_attr_;
  int64_t attr_shape_[kMaxRank] = {};
  int attr_rank_;
};

class FlattenKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  explicit FlattenKernel(int64_t axis) : axis_(axis) {}
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Flatten: missing input");
    const int rank = data->shape.rank();
    int64_t axis = axis_;
    if (axis < -rank || axis > rank) {
      return invalid_argument("Flatten: axis " + std::to_string(axis) +
                              " is out of range for rank " + std::to_string(rank));
    }
    if (axis < 0) axis += rank;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < rank; ++i) (i < axis ? outer : inner) *= data->shape[i];
    return copy_with_shape(ctx, *data, Shape{outer, inner}, "Flatten");
  }

 private:
  int64_t axis_;
};

// Squeeze and Unsqueeze take axes from an attribute (before opset 13) or an input.
struct AxesSource {
  bool from_input = false;
  bool attr_present = false;
  std::vector<int64_t> attr;

  // Fills `axes`; returns the count, or -1 when none were given (Squeeze then drops every 1).
  Expected<int> read(KernelContext& ctx, int64_t* axes, int max_count, const char* op) const {
    if (from_input) {
      const Tensor* t = ctx.input(1);
      if (!t) return -1;
      if (t->dtype != DType::kInt64)
        return invalid_argument(std::string(op) + ": axes must be int64");
      return read_int_list(*t, axes, max_count, op, "axes");
    }
    if (!attr_present) return -1;
    if (attr.size() > static_cast<size_t>(max_count)) {
      return invalid_argument(std::string(op) + ": too many axes");
    }
    std::copy(attr.begin(), attr.end(), axes);
    return static_cast<int>(attr.size());
  }
};

class SqueezeKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  explicit SqueezeKernel(AxesSource axes) : axes_(std::move(axes)) {}
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Squeeze: missing input");
    const Shape& in = data->shape;
    int64_t axes[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, axes_.read(ctx, axes, kMaxRank, "Squeeze"));
    bool drop[kMaxRank] = {};
    if (n < 0) {
      for (int i = 0; i < in.rank(); ++i) drop[i] = in[i] == 1;
    } else {
      for (int k = 0; k < n; ++k) {
        SOD2_ASSIGN_OR_RETURN(int a, normalize_axis(axes[k], in.rank(), "Squeeze"));
        if (in[a] != 1) {
          return invalid_argument("Squeeze: axis " + std::to_string(axes[k]) + " has size " +
                                  std::to_string(in[a]) + ", not 1");
        }
        drop[a] = true;
      }
    }
    Shape out;
    for (int i = 0; i < in.rank(); ++i)
      if (!drop[i]) out.push_back(in[i]);
    return copy_with_shape(ctx, *data, out, "Squeeze");
  }

 private:
  AxesSource axes_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  explicit UnsqueezeKernel(AxesSource axes) : axes_(std::move(axes)) {}
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Unsqueeze: missing input");
    const Shape& in = data->shape;
    int64_t axes[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, axes_.read(ctx, axes, kMaxRank, "Unsqueeze"));
    if (n < 0) return invalid_argument("Unsqueeze: axes are required");
    const int out_rank = in.rank() + n;
    if (out_rank > kMaxRank) {
      return unsupported("Unsqueeze: result rank " + std::to_string(out_rank) +
                         " is above the maximum " + std::to_string(kMaxRank));
    }
    bool inserted[kMaxRank] = {};
    for (int k = 0; k < n; ++k) {
      SOD2_ASSIGN_OR_RETURN(int a, normalize_axis(axes[k], out_rank, "Unsqueeze"));
      if (inserted[a]) {
        return invalid_argument("Unsqueeze: axis " + std::to_string(axes[k]) + " is repeated");
      }
      inserted[a] = true;
    }
    Shape out;
    for (int i = 0, next = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
    return copy_with_shape(ctx, *data, out, "Unsqueeze");
  }

 private:
  AxesSource axes_;
};

Expected<AxesSource> axes_from_attr(const NodeInfo& node, const char* op) {
  AxesSource src;
  src.attr_present = node.attrs.has("axes");
  SOD2_ASSIGN_OR_RETURN(src.attr, read_axes_attr(node.attrs, "axes", op));
  return src;
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_reshape_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> shape, node.attrs.get_ints("shape"));
  if (shape.size() > static_cast<size_t>(kMaxRank)) {
    return unsupported("Reshape: target rank " + std::to_string(shape.size()) + " above maximum");
  }
  return make_kernel<ReshapeKernel>(false, true, std::move(shape));
}

Expected<std::unique_ptr<Kernel>> make_reshape_v5(const NodeInfo& node) {
  int64_t allowzero = 0;
  if (node.opset >= 14) {
    SOD2_ASSIGN_OR_RETURN(allowzero, node.attrs.get_int("allowzero", 0));
  }
  return make_kernel<ReshapeKernel>(allowzero != 0, false, std::vector<int64_t>{});
}

Expected<std::unique_ptr<Kernel>> make_flatten(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
  return make_kernel<FlattenKernel>(axis);
}

Expected<std::unique_ptr<Kernel>> make_squeeze_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(AxesSource src, axes_from_attr(node, "Squeeze"));
  return make_kernel<SqueezeKernel>(std::move(src));
}

Expected<std::unique_ptr<Kernel>> make_squeeze_v13(const NodeInfo& node) {
  AxesSource src;
  src.from_input = true;
  return make_kernel<SqueezeKernel>(std::move(src));
}

Expected<std::unique_ptr<Kernel>> make_unsqueeze_v1(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(AxesSource src, axes_from_attr(node, "Unsqueeze"));
  if (!src.attr_present) return invalid_model("Unsqueeze: attribute 'axes' is missing");
  return make_kernel<UnsqueezeKernel>(std::move(src));
}

Expected<std::unique_ptr<Kernel>> make_unsqueeze_v13(const NodeInfo& node) {
  AxesSource src;
  src.from_input = true;
  return make_kernel<UnsqueezeKernel>(std::move(src));
}

}  // namespace sod2::rt
