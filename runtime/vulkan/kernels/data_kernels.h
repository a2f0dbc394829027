// Hand-written shaders that move float32 data: Transpose, Concat, Slice, Gather, and the shape
// ops that copy their input unchanged (Reshape, Flatten, Squeeze, Unsqueeze).
#pragma once

#include <memory>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::rt::vk {

// Whether one of these shaders is written for the op (whatever its dtypes and attributes).
bool data_shader_op(const std::string& domain, const std::string& op_type);

// nullptr with `why` when `node` is not one of these or a case they do not take (see
// make_builtin_kernel for the contract).
Expected<std::unique_ptr<Kernel>> make_data_kernel(VulkanBackend& backend, const NodeInfo& node,
                                                   std::unique_ptr<Kernel>& cpu, std::string* why);

}  // namespace sod2::rt::vk
