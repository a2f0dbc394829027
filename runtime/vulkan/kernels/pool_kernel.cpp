// MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool on shaders/pool.comp. Windows come
// from the CPU kernel's resolve_window; a global pool is one window over the flattened plane.
#include <algorithm>
#include <limits>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {
namespace {

const std::vector<uint32_t> kPoolSpirv =
#include "shaders/pool.comp.spv.inc"
    ;

constexpr int64_t kLocal = 64;  // the shader's local_size_x

// Mirrors the shader's push constants.
struct PoolPush {
  uint32_t in[3], out[3], k[3], stride[3], dil[3];
  int32_t pad[3];
  int32_t end[3];
  uint32_t total;
  uint32_t x_off, y_off;
  uint32_t average, include_pad;
};
static_assert(sizeof(PoolPush) <= 128, "push constants are at most 128 bytes");

bool fits_i32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

enum class PoolOp { kMax, kAverage, kGlobalMax, kGlobalAverage };

class VkPoolKernel final : public BuiltinKernelBase {
 public:
  VkPoolKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
               const ComputePipeline* pipe, std::string op, PoolOp kind, WindowAttrs w,
               bool include_pad)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        op_(std::move(op)),
        kind_(kind),
        attrs_(std::move(w)),
        include_pad_(include_pad) {}

  Status run(KernelContext& ctx) override {
    const char* op = op_.c_str();
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(op_ + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
    Window3 g;
    Shape out;
    if (kind_ == PoolOp::kGlobalMax || kind_ == PoolOp::kGlobalAverage) {
      if (x->shape.rank() < 2)
        return invalid_argument(op_ + ": X " + x->shape.to_string() + " must have rank at least 2");
      out = x->shape;
      for (int i = 2; i < out.rank(); ++i) out[i] = 1;
      const int64_t planes = out.numel();
      const int64_t plane = planes == 0 ? 0 : x->numel() / planes;
      if (planes > 0 && plane == 0 && kind_ == PoolOp::kGlobalMax)
        return invalid_argument(op_ + ": X " + x->shape.to_string() +
                                " has no elements to take the maximum of");
      g.in[2] = g.k[2] = plane;
    } else {
      const int r = x->shape.rank();
      if (r < 3)
        return invalid_argument(op_ + ": X " + x->shape.to_string() + " must have rank at least 3");
      if (attrs_.kernel_shape.size() != static_cast<size_t>(r - 2))
        return invalid_argument(op_ + ": kernel_shape " + dims_string(attrs_.kernel_shape) +
                                " does not fit X " + x->shape.to_string());
      SOD2_ASSIGN_OR_RETURN(
          g, resolve_window(attrs_, x->shape.dims().subspan(2), attrs_.kernel_shape, op));
      out.push_back(x->shape[0]);
      out.push_back(x->shape[1]);
      for (int i = 0; i < g.spatial; ++i) out.push_back(g.out[3 - g.spatial + i]);
    }
    const int64_t total = out.numel();
    const int64_t groups = (total + kLocal - 1) / kLocal;
    const int64_t gx = std::min(groups, kMaxGroups);
    const int64_t gy = gx == 0 ? 0 : (groups + gx - 1) / gx;
    bool fits = gy <= kMaxGroups && total <= int64_t{UINT32_MAX};
    for (int i = 0; i < 3; ++i)
      fits = fits && fits_i32(g.in[i] + g.pad_end[i]) && fits_i32(g.out[i] * g.stride[i]) &&
             fits_i32(g.k[i] * g.dil[i] + g.in[i] + g.pad_begin[i]);
    if (!fits) return run_on_cpu(ctx, op);

    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (total == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    BufferRef xb = yb;
    if (x->numel() > 0) {
      SOD2_ASSIGN_OR_RETURN(xb, read_input(*backend_, *x, *y));
    }
    if (!binding_covers(yb, total) || !binding_covers(xb, x->numel())) return run_on_cpu(ctx, op);

    PoolPush p{};
    for (int i = 0; i < 3; ++i) {
      p.in[i] = static_cast<uint32_t>(g.in[i]);
      p.out[i] = static_cast<uint32_t>(g.out[i]);
      p.k[i] = static_cast<uint32_t>(g.k[i]);
      p.stride[i] = static_cast<uint32_t>(g.stride[i]);
      p.dil[i] = static_cast<uint32_t>(g.dil[i]);
      p.pad[i] = static_cast<int32_t>(g.pad_begin[i]);
      p.end[i] = static_cast<int32_t>(g.in[i] + g.pad_end[i]);
    }
    p.total = static_cast<uint32_t>(total);
    p.x_off = xb.word;
    p.y_off = yb.word;
    p.average = kind_ == PoolOp::kAverage || kind_ == PoolOp::kGlobalAverage ? 1 : 0;
    p.include_pad = include_pad_ ? 1 : 0;
    return backend_->dispatch(*pipe_, {xb, yb}, &p, static_cast<uint32_t>(gx),
                              static_cast<uint32_t>(gy));
  }

 private:
  const ComputePipeline* pipe_;
  std::string op_;
  PoolOp kind_;
  WindowAttrs attrs_;
  bool include_pad_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_vk_pool(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, std::unique_ptr<Kernel> cpu,
                                               std::string* why) {
  const std::string& op = node.op_type;
  PoolOp kind = PoolOp::kMax;
  WindowAttrs w;
  int64_t include_pad = 0;
  if (op == "GlobalMaxPool" || op == "GlobalAveragePool") {
    kind = op == "GlobalMaxPool" ? PoolOp::kGlobalMax : PoolOp::kGlobalAverage;
  } else {
    kind = op == "MaxPool" ? PoolOp::kMax : PoolOp::kAverage;
    SOD2_ASSIGN_OR_RETURN(w, read_window_attrs(node.attrs, op.c_str()));
    if (w.kernel_shape.empty()) return invalid_argument(op + ": needs kernel_shape");
    SOD2_ATTR(include_pad, node.attrs.get_int("count_include_pad", 0));
    if (kind == PoolOp::kMax && node.num_outputs > 1) {
      *why = "MaxPool: the Indices output is not on Vulkan";
      return std::unique_ptr<Kernel>();
    }
    if (kind == PoolOp::kAverage) {
      for (int64_t d : w.dilations) {
        if (d != 1) {
          *why = "AveragePool: dilations are not on Vulkan";
          return std::unique_ptr<Kernel>();
        }
      }
    }
    if (w.kernel_shape.size() > 3) {
      *why = op + ": " + std::to_string(w.kernel_shape.size()) + " spatial dims";
      return std::unique_ptr<Kernel>();
    }
  }
  SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                        backend->pipeline("sod2.pool", kPoolSpirv, 2, sizeof(PoolPush)));
  return std::unique_ptr<Kernel>(new VkPoolKernel(std::move(backend), std::move(cpu), pipe, op,
                                                  kind, std::move(w), include_pad != 0));
}

}  // namespace sod2::rt::vk
