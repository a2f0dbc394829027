// Checks a package's SPIR-V before a driver sees it. A package is untrusted input, and drivers
// may crash on an invalid module or on a shader that reads bindings or push constants its
// pipeline does not provide, so a generated group's shader must be valid SPIR-V for Vulkan 1.1
// (SPIRV-Tools' validator) with one compute entry point `main` of kGpuGroupLocalSize
// invocations, need no capability beyond Shader, use only descriptor set 0 with bindings below
// `num_buffers`, and push at most `push_bytes` bytes of 32-bit scalars.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt::vk {

Status check_shader_interface(const std::vector<uint32_t>& spirv, uint32_t num_buffers,
                              uint32_t push_bytes, const std::string& name);

}  // namespace sod2::rt::vk
