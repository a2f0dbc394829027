// What the hand-written shaders' kernels share: the per-op factories builtin_kernels.cpp
// dispatches to, the epilogue's bindings, and the hand-over of a run to the CPU kernel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::rt::vk {

// Bits of the shaders' `flags` push constant (shaders/epilogue.glsl).
inline constexpr uint32_t kFlagBias0 = 1;          // the op's own bias (Conv B)
inline constexpr uint32_t kFlagBias1 = 2;          // the epilogue's bias
inline constexpr uint32_t kFlagResidual = 4;       // a residual
inline constexpr uint32_t kFlagResidualAfter = 8;  // y = act(acc + bias) + residual
inline constexpr uint32_t kFlagC = 16;             // Gemm's C

// Dispatch sizes every Vulkan device supports (maxComputeWorkGroupCount's guaranteed minimum).
inline constexpr int64_t kMaxGroups = 65535;

// State every builtin kernel holds: the backend it records into and the CPU kernel that takes
// the runs its shader cannot.
class BuiltinKernelBase : public Kernel {
 protected:
  BuiltinKernelBase(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu)
      : backend_(std::move(backend)), cpu_(std::move(cpu)) {}
  // Hands this run to the CPU kernel once the device work it may read has finished.
  Status run_on_cpu(KernelContext& ctx, const char* op);

  std::shared_ptr<VulkanBackend> backend_;
  std::unique_ptr<Kernel> cpu_;
};

// Whether a binding reaches all `numel` floats of its tensor, with word indices within 32 bits
// (the shaders index with uint).
bool binding_covers(const BufferRef& ref, int64_t numel);

// Where a shader reads input `t` while it writes `out`. The memory plan may give the output
// bytes an input no longer needs after this node; a shader whose invocations read other elements
// than they write would see them overwritten, so an overlapping input is read from a snapshot
// unless `same_index` (the shader reads element i only where it writes element i) and the two
// start together.
Expected<BufferRef> read_input(VulkanBackend& backend, const Tensor& t, const Tensor& out,
                               bool same_index = false);

// The epilogue's buffers for one run of an op writing `out` (at `out_ref`): its bias and
// residual bound where present (`out_ref` where not) and the flags that say which are. Checks
// the inputs as the CPU kernels do.
struct EpilogueBuffers {
  BufferRef bias, residual;
  uint32_t flags = 0;
  uint32_t act = 0;
  float alpha = 0.f, beta = 0.f;
};
Expected<EpilogueBuffers> epilogue_buffers(VulkanBackend& backend, const Epilogue& e,
                                           KernelContext& ctx, const char* op, const Tensor& out,
                                           int64_t channels, const BufferRef& out_ref);

// The factories: nullptr with `why` for a node the shader does not take.
Expected<std::unique_ptr<Kernel>> make_vk_matmul(std::shared_ptr<VulkanBackend> backend,
                                                 const NodeInfo& node, const Epilogue& epi,
                                                 std::unique_ptr<Kernel> cpu, std::string* why);
Expected<std::unique_ptr<Kernel>> make_vk_gemm(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, const Epilogue& epi,
                                               std::unique_ptr<Kernel> cpu, std::string* why);
Expected<std::unique_ptr<Kernel>> make_vk_conv(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, const Epilogue& epi,
                                               std::unique_ptr<Kernel> cpu, std::string* why);
Expected<std::unique_ptr<Kernel>> make_vk_pool(std::shared_ptr<VulkanBackend> backend,
                                               const NodeInfo& node, std::unique_ptr<Kernel> cpu,
                                               std::string* why);

}  // namespace sod2::rt::vk
