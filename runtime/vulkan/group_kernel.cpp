#include "runtime/vulkan/group_kernel.h"

#include <algorithm>

#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"
#include "runtime/vulkan/shader_interface.h"

namespace sod2::rt::vk {
namespace {

class ElementwiseGroupKernel final : public Kernel {
 public:
  ElementwiseGroupKernel(VulkanBackend& b, const GpuKernelDesc& g,
                         std::unique_ptr<ComputePipeline> pipeline)
      : backend_(b), group_(g), pipeline_(std::move(pipeline)) {}

  Status run(KernelContext& ctx) override {
    const size_t k = group_.inputs.size();
    const int rank = group_.rank;
    // The output shape: every input broadcast (numpy rules) to the rank RDP derived.
    int64_t dims[kMaxGpuRank];
    std::fill(dims, dims + rank, 1);
    for (size_t i = 0; i < k; ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return internal_error("group '" + group_.name + "' is missing an input");
      // The shader reads 4-byte floats; a package may name a value of any type.
      if (t->dtype != DType::kFloat) {
        return invalid_model("group '" + group_.name + "' reads a " + dtype_name(t->dtype) +
                             " input; its shader reads float32");
      }
      const int r = t->shape.rank();
      if (r > rank) {
        return internal_error("group '" + group_.name + "': an input of shape " +
                              t->shape.to_string() + " has more dims than the output's " +
                              std::to_string(rank));
      }
      for (int d = 0; d < r; ++d) {
        const int64_t v = t->shape[d];
        int64_t& o = dims[rank - r + d];
        if (v == o || v == 1) continue;
        if (o != 1) {
          return invalid_argument("group '" + group_.name + "': shapes " + t->shape.to_string() +
                                  " cannot broadcast to the others'");
        }
        o = v;
      }
    }
    Shape shape;
    for (int d = 0; d < rank; ++d) shape.push_back(dims[d]);
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kFloat, shape));
    const int64_t n = shape.numel();
    if (n == 0) return Status::ok_status();
    if (n > int64_t{0xFFFFFFFF}) {
      return unsupported("group '" + group_.name + "': " + std::to_string(n) +
                         " elements exceed the shader's 32-bit index");
    }
    // Inputs after the output: growing the arena for the output re-bases them.
    SOD2_ASSIGN_OR_RETURN(BufferRef out_ref, backend_.write_buffer(*out));
    // A device whose bindings span fewer bytes than a tensor (maxStorageBufferRange is 128 MiB
    // on some phones) cannot run the group, and there is no CPU kernel to hand the run to.
    auto too_big = [&] {
      return unsupported("group '" + group_.name + "': a tensor of its " + std::to_string(n) +
                         " elements is beyond this Vulkan device's binding range");
    };
    if (!binding_covers(out_ref, n)) return too_big();
    BufferRef refs[kMaxGpuKernelInputs];
    uint32_t push[32] = {};
    uint32_t* p = push;
    *p++ = static_cast<uint32_t>(n);
    *p++ = out_ref.word;
    uint32_t* offsets = p;
    p += k;
    for (int d = 0; d < rank; ++d) *p++ = static_cast<uint32_t>(dims[d]);
    for (size_t i = 0; i < k; ++i) {
      const Tensor& t = *ctx.input(i);
      // An invocation reads an input element only where it writes the output element of the
      // same index when the input is not broadcast.
      SOD2_ASSIGN_OR_RETURN(refs[i], read_input(backend_, t, *out, t.shape == out->shape));
      if (!binding_covers(refs[i], t.numel())) return too_big();
      offsets[i] = refs[i].word;
      const int r = t.shape.rank();
      int64_t stride = 1;
      uint32_t strides[kMaxGpuRank] = {};
      for (int d = r - 1; d >= 0; --d) {
        strides[rank - r + d] = t.shape[d] == 1 ? 0u : static_cast<uint32_t>(stride);
        stride *= t.shape[d];
      }
      for (int d = 0; d < rank; ++d) *p++ = strides[d];
    }
    const uint64_t groups =
        (static_cast<uint64_t>(n) + kGpuGroupLocalSize - 1) / kGpuGroupLocalSize;
    const uint32_t gx = static_cast<uint32_t>(std::min<uint64_t>(groups, 65535));
    const uint32_t gy = static_cast<uint32_t>((groups + gx - 1) / gx);
    const ComputePipeline* pipe = pipeline_.get();
    switch (k) {
      case 0: return backend_.dispatch(*pipe, {out_ref}, push, gx, gy);
      case 1: return backend_.dispatch(*pipe, {refs[0], out_ref}, push, gx, gy);
      case 2: return backend_.dispatch(*pipe, {refs[0], refs[1], out_ref}, push, gx, gy);
      case 3: return backend_.dispatch(*pipe, {refs[0], refs[1], refs[2], out_ref}, push, gx, gy);
      default:
        return backend_.dispatch(*pipe, {refs[0], refs[1], refs[2], refs[3], out_ref}, push, gx,
                                 gy);
    }
  }

 private:
  VulkanBackend& backend_;
  const GpuKernelDesc group_;
  // The group's own: programs name their groups alike ("ew0"), so no cache by name may hold it.
  std::unique_ptr<ComputePipeline> pipeline_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_elementwise_group_kernel(VulkanBackend& backend,
                                                                const GpuKernelDesc& group) {
  if (group.rank < 0 || group.rank > kMaxGpuRank ||
      group.inputs.size() > static_cast<size_t>(kMaxGpuKernelInputs) ||
      gpu_group_push_words(static_cast<uint32_t>(group.inputs.size()),
                           static_cast<uint32_t>(group.rank)) > 32) {
    return invalid_model("generated group '" + group.name + "' has rank " +
                         std::to_string(group.rank) + " and " +
                         std::to_string(group.inputs.size()) +
                         " inputs, beyond what its push "
                         "constants can hold");
  }
  const uint32_t buffers = static_cast<uint32_t>(group.inputs.size() + 1);
  const uint32_t push_bytes = 4 * gpu_group_push_words(static_cast<uint32_t>(group.inputs.size()),
                                                       static_cast<uint32_t>(group.rank));
  // The shader comes from a package: checked before any driver sees it.
  SOD2_RETURN_IF_ERROR(check_shader_interface(group.spirv, buffers, push_bytes, group.name));
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<ComputePipeline> pipeline,
                        ComputePipeline::create(backend.context_ptr(), "group " + group.name,
                                                group.spirv, buffers, push_bytes));
  return std::unique_ptr<Kernel>(new ElementwiseGroupKernel(backend, group, std::move(pipeline)));
}

}  // namespace sod2::rt::vk
