// The kernel of a generated elementwise group (ProgramDesc::gpu_kernels): the group's inputs
// broadcast to the output's shape, which it computes here, and one dispatch of the group's
// shader with the dims and strides as push constants. The push block's layout is the
// generator's (core/codegen/elementwise_shader.h): n, out offset, each input's offset, the
// output dims, then each input's strides, all 32-bit.
#pragma once

#include <memory>

#include "runtime/program/program.h"
#include "runtime/kernels/kernel.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::rt::vk {

Expected<std::unique_ptr<Kernel>> make_elementwise_group_kernel(VulkanBackend& backend,
                                                                const GpuKernelDesc& group);

}  // namespace sod2::rt::vk
