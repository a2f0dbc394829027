// GLSL compute shaders to SPIR-V, in process (shaderc), for the shaders the compiler generates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::codegen {

// Compiles one compute shader for Vulkan 1.1, optimised for speed. `name` names it in errors.
Expected<std::vector<uint32_t>> compile_compute_shader(const std::string& glsl,
                                                       const std::string& name);

}  // namespace sod2::codegen
