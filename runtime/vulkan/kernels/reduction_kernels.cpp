// The Reduce* ops, Softmax / LogSoftmax and LayerNormalization on shaders/reduce.comp,
// softmax.comp and layernorm.comp. Each views its input as rows reduced along one (possibly
// strided) dim, [outer, n, inner]; attributes and shapes are resolved as the CPU kernels
// (runtime/kernels/math/reduce.cpp, softmax.cpp, normalization.cpp) resolve them.
#include "runtime/vulkan/kernels/reduction_kernels.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/kernels/math/math_common.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {
namespace {

const std::vector<uint32_t> kReduceSpirv =
#include "shaders/reduce.comp.spv.inc"
    ;
const std::vector<uint32_t> kSoftmaxSpirv =
#include "shaders/softmax.comp.spv.inc"
    ;
const std::vector<uint32_t> kLayerNormSpirv =
#include "shaders/layernorm.comp.spv.inc"
    ;

constexpr int64_t kLocal = 128;  // the shaders' local_size_x
// From this row length on a workgroup shares each row; shorter rows take one invocation each,
// which keeps small reductions from leaving most of a workgroup idle.
constexpr int64_t kGroupRowMin = 64;

// Mirror the shaders' push constants.
struct ReducePush {
  uint32_t outer, n, inner, outputs;
  uint32_t x_off, y_off;
  uint32_t op, per_group;
};
struct SoftmaxPush {
  uint32_t outer, n, inner, rows;
  uint32_t x_off, y_off;
  uint32_t log_softmax, per_group;
};
struct LayerNormPush {
  uint32_t rows, n;
  uint32_t x_off, s_off, b_off, y_off;
  uint32_t s_stride, b_stride;
  uint32_t has_bias, per_group;
  float epsilon;
};
static_assert(sizeof(ReducePush) <= 128 && sizeof(SoftmaxPush) <= 128 &&
                  sizeof(LayerNormPush) <= 128,
              "push constants are at most 128 bytes");

bool fits_u32(int64_t v) { return v >= 0 && v <= int64_t{UINT32_MAX}; }

// The workgroups for `rows` rows of `n` elements: (x, y) of a 2-D grid the shaders flatten, or
// false when beyond the dispatch limits. `per_group` says how the shader walks them.
bool row_grid(int64_t rows, int64_t n, uint32_t* gx, uint32_t* gy, bool* per_group) {
  *per_group = n >= kGroupRowMin;
  const int64_t groups = *per_group ? rows : (rows + kLocal - 1) / kLocal;
  const int64_t x = std::min(groups, kMaxGroups);
  const int64_t y = x == 0 ? 0 : (groups + x - 1) / x;
  if (y > kMaxGroups) return false;
  *gx = static_cast<uint32_t>(x);
  *gy = static_cast<uint32_t>(y);
  return true;
}

// Codes of reduce.comp's `op`.
enum class ReduceOp : uint32_t { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSumExp, kSumSquare };

bool reduce_op_of(const std::string& op, ReduceOp* out) {
  static const std::pair<const char*, ReduceOp> kOps[] = {
      {"ReduceSum", ReduceOp::kSum},
      {"ReduceMean", ReduceOp::kMean},
      {"ReduceMax", ReduceOp::kMax},
      {"ReduceMin", ReduceOp::kMin},
      {"ReduceProd", ReduceOp::kProd},
      {"ReduceL1", ReduceOp::kL1},
      {"ReduceL2", ReduceOp::kL2},
      {"ReduceLogSumExp", ReduceOp::kLogSumExp},
      {"ReduceSumSquare", ReduceOp::kSumSquare}};
  for (const auto& [name, code] : kOps) {
    if (op == name) {
      *out = code;
      return true;
    }
  }
  return false;
}

// ---- Reduce*

struct ReduceAttrs {
  std::vector<int64_t> axes;  // from the attribute
  bool axes_input = false;    // axes come from input 1
  bool keepdims = true;
  bool noop_with_empty_axes = false;
};

class VkReduceKernel final : public BuiltinKernelBase {
 public:
  VkReduceKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
                 const ComputePipeline* pipe, std::string op, ReduceOp kind, ReduceAttrs attrs)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        op_(std::move(op)),
        kind_(kind),
        attrs_(std::move(attrs)) {}

  Status run(KernelContext& ctx) override {
    const char* op = op_.c_str();
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(op_ + ": input is missing");
    if (x->dtype != DType::kFloat) return run_on_cpu(ctx, op);
    const int rank = x->shape.rank();
    bool mask[kMaxRank] = {};
    int count = 0;
    if (attrs_.axes_input) {
      // Axes are int64, which no shader writes: their host bytes are current.
      if (const Tensor* axes = ctx.input(1))
        SOD2_RETURN_IF_ERROR(math::read_axes_tensor(op, axes, rank, mask, &count));
    } else {
      SOD2_RETURN_IF_ERROR(
          math::axes_to_mask(op, attrs_.axes.data(), attrs_.axes.size(), rank, mask));
      count = static_cast<int>(attrs_.axes.size());
    }
    // The no-op copies X: a sum over one element per output, which is exact.
    const bool copy = count == 0 && attrs_.noop_with_empty_axes;
    if (count == 0)
      for (int i = 0; i < rank; ++i) mask[i] = !copy;
    Shape out_shape;
    for (int i = 0; i < rank; ++i) {
      if (!mask[i]) {
        out_shape.push_back(x->shape[i]);
      } else if (attrs_.keepdims) {
        out_shape.push_back(1);
      }
    }
    // [outer, n, inner] around the reduced dims, which must be one block once unit dims are
    // skipped; reduced dims interleaved with kept ones are the CPU kernel's.
    int first = -1, last = -1;
    for (int i = 0; i < rank; ++i) {
      if (!mask[i] || x->shape[i] == 1) continue;
      if (first < 0) first = i;
      last = i;
    }
    for (int i = first + 1; first >= 0 && i < last; ++i)
      if (!mask[i] && x->shape[i] != 1) return run_on_cpu(ctx, op);
    int64_t outer = 1, n = 1, inner = 1;
    for (int i = 0; i < rank; ++i) {
      if (mask[i]) {
        n *= x->shape[i];
      } else if (first < 0 || i < first) {
        outer *= x->shape[i];
      } else {
        inner *= x->shape[i];
      }
    }
    const int64_t outputs = outer * inner;
    uint32_t gx = 0, gy = 0;
    bool per_group = false;
    if (!fits_u32(outer) || !fits_u32(n) || !fits_u32(inner) || !fits_u32(outputs) ||
        !row_grid(outputs, n, &gx, &gy, &per_group))
      return run_on_cpu(ctx, op);

    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out_shape));
    if (outputs == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    BufferRef xb = yb;
    if (x->numel() > 0) {
      // With one element per output each invocation reads only what it writes.
      SOD2_ASSIGN_OR_RETURN(xb, read_input(*backend_, *x, *y, n == 1));
    }
    if (!binding_covers(yb, outputs) || !binding_covers(xb, x->numel())) return run_on_cpu(ctx, op);

    ReducePush p{};
    p.outer = static_cast<uint32_t>(outer);
    p.n = static_cast<uint32_t>(n);
    p.inner = static_cast<uint32_t>(inner);
    p.outputs = static_cast<uint32_t>(outputs);
    p.x_off = xb.word;
    p.y_off = yb.word;
    p.op = static_cast<uint32_t>(copy ? ReduceOp::kSum : kind_);
    p.per_group = per_group ? 1 : 0;
    return backend_->dispatch(*pipe_, {xb, yb}, &p, gx, gy);
  }

 private:
  const ComputePipeline* pipe_;
  std::string op_;
  ReduceOp kind_;
  ReduceAttrs attrs_;
};

// ---- Softmax / LogSoftmax

class VkSoftmaxKernel final : public BuiltinKernelBase {
 public:
  VkSoftmaxKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
                  const ComputePipeline* pipe, bool log, int64_t axis, bool coerce_2d)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        log_(log),
        axis_(axis),
        coerce_2d_(coerce_2d) {}

  Status run(KernelContext& ctx) override {
    const char* op = log_ ? "LogSoftmax" : "Softmax";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op) + ": input is missing");
    if (x->dtype != DType::kFloat) return run_on_cpu(ctx, op);
    const int rank = x->shape.rank();
    int axis = 0;
    if (coerce_2d_ && axis_ == rank) {
      axis = rank;  // opset < 13 allows axis == rank: rows of one element
    } else {
      SOD2_RETURN_IF_ERROR(math::normalize_axis(op, axis_, std::max(rank, 1), &axis));
    }
    const int64_t outer = math::dims_product(x->shape, 0, std::min(axis, rank));
    int64_t n = 1, inner = 1;
    if (coerce_2d_) {
      n = math::dims_product(x->shape, std::min(axis, rank), rank);
    } else if (rank > 0) {
      n = x->shape[axis];
      inner = math::dims_product(x->shape, axis + 1, rank);
    }
    const int64_t rows = outer * inner;
    uint32_t gx = 0, gy = 0;
    bool per_group = false;
    if (!fits_u32(outer) || !fits_u32(n) || !fits_u32(inner) || !fits_u32(rows) ||
        !row_grid(rows, n, &gx, &gy, &per_group))
      return run_on_cpu(ctx, op);

    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, x->shape));
    if (x->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    // A row is read in full before any of it is written, and rows are written only by the
    // invocations that read them: Y may be X itself.
    SOD2_ASSIGN_OR_RETURN(BufferRef xb, read_input(*backend_, *x, *y, true));
    if (!binding_covers(yb, x->numel()) || !binding_covers(xb, x->numel()))
      return run_on_cpu(ctx, op);

    SoftmaxPush p{};
    p.outer = static_cast<uint32_t>(outer);
    p.n = static_cast<uint32_t>(n);
    p.inner = static_cast<uint32_t>(inner);
    p.rows = static_cast<uint32_t>(rows);
    p.x_off = xb.word;
    p.y_off = yb.word;
    p.log_softmax = log_ ? 1 : 0;
    p.per_group = per_group ? 1 : 0;
    return backend_->dispatch(*pipe_, {xb, yb}, &p, gx, gy);
  }

 private:
  const ComputePipeline* pipe_;
  bool log_;
  int64_t axis_;
  bool coerce_2d_;
};

// ---- LayerNormalization (output Y only)

class VkLayerNormKernel final : public BuiltinKernelBase {
 public:
  VkLayerNormKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
                    const ComputePipeline* pipe, int64_t axis, float epsilon)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        axis_(axis),
        epsilon_(epsilon) {}

  Status run(KernelContext& ctx) override {
    const char* op = "LayerNormalization";
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* bias = ctx.input(2);
    if (!x || !scale) return invalid_argument("LayerNormalization: needs X and Scale");
    if (x->dtype != DType::kFloat) return run_on_cpu(ctx, op);
    const int rank = x->shape.rank();
    int axis = 0;
    SOD2_RETURN_IF_ERROR(math::normalize_axis(op, axis_, rank, &axis));
    const int64_t rows = math::dims_product(x->shape, 0, axis);
    const int64_t n = math::dims_product(x->shape, axis, rank);
    SOD2_RETURN_IF_ERROR(check_param(scale, *x, n, "Scale"));
    if (bias) SOD2_RETURN_IF_ERROR(check_param(bias, *x, n, "B"));
    uint32_t gx = 0, gy = 0;
    bool per_group = false;
    if (!fits_u32(rows) || !fits_u32(n) || !row_grid(rows, n, &gx, &gy, &per_group))
      return run_on_cpu(ctx, op);

    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, x->shape));
    if (x->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    // Rows are read in full before they are written, each by its own invocations.
    SOD2_ASSIGN_OR_RETURN(BufferRef xb, read_input(*backend_, *x, *y, true));
    SOD2_ASSIGN_OR_RETURN(BufferRef sb, read_input(*backend_, *scale, *y));
    BufferRef bb = sb;
    if (bias) {
      SOD2_ASSIGN_OR_RETURN(bb, read_input(*backend_, *bias, *y));
    }
    if (!binding_covers(yb, x->numel()) || !binding_covers(xb, x->numel()) ||
        !binding_covers(sb, scale->numel()) || (bias && !binding_covers(bb, bias->numel())))
      return run_on_cpu(ctx, op);

    LayerNormPush p{};
    p.rows = static_cast<uint32_t>(rows);
    p.n = static_cast<uint32_t>(n);
    p.x_off = xb.word;
    p.s_off = sb.word;
    p.b_off = bb.word;
    p.y_off = yb.word;
    p.s_stride = scale->numel() == 1 ? 0 : 1;
    p.b_stride = bias && bias->numel() != 1 ? 1 : 0;
    p.has_bias = bias ? 1 : 0;
    p.per_group = per_group ? 1 : 0;
    p.epsilon = epsilon_;
    return backend_->dispatch(*pipe_, {xb, sb, bb, yb}, &p, gx, gy);
  }

 private:
  // The CPU kernel's checks, with its messages.
  static Status check_param(const Tensor* t, const Tensor& x, int64_t n, const char* what) {
    if (t->dtype != x.dtype) {
      return invalid_argument(std::string("LayerNormalization: ") + what + " has type " +
                              dtype_name(t->dtype) + ", X " + dtype_name(x.dtype));
    }
    if (t->numel() != n && t->numel() != 1) {
      return invalid_argument(std::string("LayerNormalization: ") + what + " of shape " +
                              t->shape.to_string() + " does not match the normalised dims of " +
                              x.shape.to_string());
    }
    return Status::ok_status();
  }

  const ComputePipeline* pipe_;
  int64_t axis_;
  float epsilon_;
};

// Whether the node's float inputs among the first `float_inputs` slots and all its outputs are
// float32 (types unknown at load would need a check per run; those nodes stay on the CPU).
bool float32_node(const NodeInfo& node, size_t float_inputs) {
  for (size_t i = 0; i < node.input_dtypes.size() && i < float_inputs; ++i) {
    const bool present = i >= node.input_present.size() || node.input_present[i];
    if (present && node.input_dtypes[i] != DType::kFloat) return false;
  }
  for (DType t : node.output_dtypes)
    if (t != DType::kFloat && t != DType::kUndefined) return false;
  return true;
}

}  // namespace

bool reduction_shader_op(const std::string& domain, const std::string& op_type) {
  ReduceOp unused = ReduceOp::kSum;
  return domain.empty() && (reduce_op_of(op_type, &unused) || op_type == "Softmax" ||
                            op_type == "LogSoftmax" || op_type == "LayerNormalization");
}

Expected<std::unique_ptr<Kernel>> make_reduction_kernel(VulkanBackend& backend,
                                                        const NodeInfo& node,
                                                        std::unique_ptr<Kernel>& cpu,
                                                        std::string* why) {
  const std::string& op = node.op_type;
  ReduceOp reduce = ReduceOp::kSum;
  const bool is_reduce = reduce_op_of(op, &reduce);
  const bool is_softmax = op == "Softmax" || op == "LogSoftmax";
  const bool is_layer_norm = op == "LayerNormalization";
  if (!reduction_shader_op(node.domain, op)) {
    *why = op + ": no hand-written shader";
    return std::unique_ptr<Kernel>();
  }
  // Reduce's axes input is int64 and read on the host; LayerNormalization's Scale and B must be
  // float like X.
  if (!float32_node(node, is_reduce ? 1 : node.input_dtypes.size())) {
    *why = op + ": only float32 is on Vulkan";
    return std::unique_ptr<Kernel>();
  }
  if (is_layer_norm && node.num_outputs > 1) {
    *why = "LayerNormalization: the Mean and InvStdDev outputs are not on Vulkan";
    return std::unique_ptr<Kernel>();
  }
  std::shared_ptr<VulkanBackend> shared = backend.weak_from_this().lock();
  if (!shared) return internal_error(op + ": the Vulkan backend is not shared-owned");

  if (is_reduce) {
    ReduceAttrs a;
    // ReduceSum took its axes as an input from opset 13, the others from 18.
    a.axes_input = node.opset >= (reduce == ReduceOp::kSum ? 13 : 18);
    SOD2_ASSIGN_OR_RETURN(int64_t keepdims, node.attrs.get_int("keepdims", 1));
    a.keepdims = keepdims != 0;
    if (a.axes_input) {
      SOD2_ASSIGN_OR_RETURN(int64_t noop, node.attrs.get_int("noop_with_empty_axes", 0));
      a.noop_with_empty_axes = noop != 0;
    } else {
      SOD2_ASSIGN_OR_RETURN(a.axes, node.attrs.get_ints("axes"));
      if (a.axes.size() > static_cast<size_t>(kMaxRank))
        return invalid_model(op + ": too many axes");
    }
    SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                          shared->pipeline("sod2.reduce", kReduceSpirv, 2, sizeof(ReducePush)));
    return std::unique_ptr<Kernel>(
        new VkReduceKernel(std::move(shared), std::move(cpu), pipe, op, reduce, std::move(a)));
  }
  if (is_softmax) {
    // Before opset 13 the input is coerced to 2-D at `axis` (default 1).
    const bool coerce_2d = node.opset < 13;
    SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", coerce_2d ? 1 : -1));
    SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                          shared->pipeline("sod2.softmax", kSoftmaxSpirv, 2, sizeof(SoftmaxPush)));
    return std::unique_ptr<Kernel>(new VkSoftmaxKernel(std::move(shared), std::move(cpu), pipe,
                                                       op == "LogSoftmax", axis, coerce_2d));
  }
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", -1));
  SOD2_ASSIGN_OR_RETURN(float epsilon, node.attrs.get_float("epsilon", 1e-5f));
  SOD2_ASSIGN_OR_RETURN(
      const ComputePipeline* pipe,
      shared->pipeline("sod2.layernorm", kLayerNormSpirv, 4, sizeof(LayerNormPush)));
  return std::unique_ptr<Kernel>(
      new VkLayerNormKernel(std::move(shared), std::move(cpu), pipe, axis, epsilon));
}

}  // namespace sod2::rt::vk
