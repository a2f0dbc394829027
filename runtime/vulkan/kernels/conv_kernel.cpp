// Conv and FusedConv on shaders/conv.comp: direct convolution, 1-D to 3-D, any group count.
// Shapes and pads come from the CPU kernel's conv_shape, so both agree on every attribute.
#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/conv_internal.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {
namespace {

const std::vector<uint32_t> kConvSpirv =
#include "shaders/conv.comp.spv.inc"
    ;

constexpr int64_t kLocal = 64;        // invocations per workgroup (output positions)
constexpr int64_t kChannelBlock = 4;  // output channels per invocation (the shader's CB)

// Mirrors the shader's push constants.
struct ConvPush {
  uint32_t m, cg, mg;
  uint32_t in[3], out[3], k[3], stride[3], dil[3];
  int32_t pad[3];
  uint32_t x_off, w_off, y_off, b0_off, b1_off, res_off;
  uint32_t flags, act;
  float act_alpha, act_beta;
};
static_assert(sizeof(ConvPush) <= 128, "push constants are at most 128 bytes");

bool fits_i32(int64_t v) { return v >= 0 && v <= INT32_MAX; }

class VkConvKernel final : public BuiltinKernelBase {
 public:
  VkConvKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
               const ComputePipeline* pipe, WindowAttrs w, int64_t group, const Epilogue& epi)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)),
        pipe_(pipe),
        attrs_(std::move(w)),
        group_(group),
        epi_(epi) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    // Slot 2 is B unless the epilogue took it (a fused Conv that had no B).
    const Tensor* b = epi_.bias_input == 2 || epi_.residual_input == 2 ? nullptr : ctx.input(2);
    // More than 3 spatial dims: conv_shape's error or the CPU's own handling, not the shader's.
    if (x && x->shape.rank() > 5) return run_on_cpu(ctx, "Conv");
    SOD2_ASSIGN_OR_RETURN(ConvShape s, conv_shape(x, w, b, attrs_, group_, "Conv"));
    const Window3& g = s.win;
    const int64_t cg = s.c / s.group, mg = s.m / s.group;
    const int64_t P = g.out_size();
    const int64_t blocks = (mg + kChannelBlock - 1) / kChannelBlock;
    bool fits = (P + kLocal - 1) / kLocal <= kMaxGroups && s.group * blocks <= kMaxGroups &&
                s.n <= kMaxGroups && fits_i32(s.m) && fits_i32(cg);
    for (int i = 0; i < 3; ++i)
      fits = fits && fits_i32(g.in[i]) && fits_i32(g.out[i] * g.stride[i]) && fits_i32(g.k[i]) &&
             fits_i32(g.k[i] * g.dil[i]) && fits_i32(g.pad_begin[i]);
    if (!fits) return run_on_cpu(ctx, "Conv");

    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, s.out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    SOD2_ASSIGN_OR_RETURN(EpilogueBuffers e,
                          epilogue_buffers(*backend_, epi_, ctx, "Conv", *y, s.m, yb));
    const bool empty_input = x->numel() == 0 || w->numel() == 0;
    BufferRef xb = yb, wb = yb, bb = yb;
    if (!empty_input) {
      SOD2_ASSIGN_OR_RETURN(xb, read_input(*backend_, *x, *y));
      SOD2_ASSIGN_OR_RETURN(wb, read_input(*backend_, *w, *y));
    }
    if (b) {
      SOD2_ASSIGN_OR_RETURN(bb, read_input(*backend_, *b, *y));
    }
    if (!binding_covers(yb, y->numel()) ||
        (!empty_input && (!binding_covers(xb, x->numel()) || !binding_covers(wb, w->numel()))) ||
        (b && !binding_covers(bb, s.m)) ||
        ((e.flags & kFlagBias1) && !binding_covers(e.bias, s.m)) ||
        ((e.flags & kFlagResidual) && !binding_covers(e.residual, y->numel())))
      return run_on_cpu(ctx, "Conv");

    ConvPush p{};
    p.m = static_cast<uint32_t>(s.m);
    // No input channel to read (C = 0): the shader's loop over them runs zero times.
    p.cg = empty_input ? 0 : static_cast<uint32_t>(cg);
    p.mg = static_cast<uint32_t>(mg);
    for (int i = 0; i < 3; ++i) {
      p.in[i] = static_cast<uint32_t>(g.in[i]);
      p.out[i] = static_cast<uint32_t>(g.out[i]);
      p.k[i] = static_cast<uint32_t>(g.k[i]);
      p.stride[i] = static_cast<uint32_t>(g.stride[i]);
      p.dil[i] = static_cast<uint32_t>(g.dil[i]);
      p.pad[i] = static_cast<int32_t>(g.pad_begin[i]);
    }
    p.x_off = xb.word;
    p.w_off = wb.word;
    p.y_off = yb.word;
    p.b0_off = bb.word;
    p.b1_off = e.bias.word;
    p.res_off = e.residual.word;
    p.flags = e.flags | (b ? kFlagBias0 : 0u);
    p.act = e.act;
    p.act_alpha = e.alpha;
    p.act_beta = e.beta;
    return backend_->dispatch(*pipe_, {xb, wb, yb, bb, e.bias, e.residual}, &p,
                              static_cast<uint32_t>((P + kLocal - 1) / kLocal),
                              static_cast<uint32_t>(s.group * blocks), static_cast<uint32_t>(s.n));
  }

 private:
  const ComputePipeline* pipe_;
  WindowAttrs attrs_;
  int64_t group_;
  Epilogue epi_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_vk_conv(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, const Epilogue& epi,
                                               std::unique_ptr<Kernel> cpu, std::string* why) {
  SOD2_ASSIGN_OR_RETURN(WindowAttrs w, read_window_attrs(node.attrs, "Conv"));
  int64_t group = 1;
  SOD2_ATTR(group, node.attrs.get_int("group", 1));
  if (group <= 0) return invalid_argument("Conv: group must be positive");
  if (w.kernel_shape.size() > 3) {
    *why = node.op_type + ": " + std::to_string(w.kernel_shape.size()) + " spatial dims";
    return std::unique_ptr<Kernel>();
  }
  SOD2_ASSIGN_OR_RETURN(const ComputePipeline* pipe,
                        backend->pipeline("sod2.conv", kConvSpirv, 6, sizeof(ConvPush)));
  return std::unique_ptr<Kernel>(
      new VkConvKernel(std::move(backend), std::move(cpu), pipe, std::move(w), group, epi));
}

}  // namespace sod2::rt::vk
