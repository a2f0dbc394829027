// The hand-written compute shaders (runtime/vulkan/shaders): MatMul and Gemm (tiled), Conv
// (direct, depthwise included), the pools, and the fused contractions of the CPU runtime
// (FusedConv / FusedMatMul / FusedGemm with their epilogue, runtime/kernels/linalg/fused_ops.h).
#pragma once

#include <memory>
#include <string>

#include "runtime/kernels/kernel.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace sod2::rt::vk {

// Whether one of these shaders is written for the op (whatever its dtypes and attributes): the
// standard MatMul, Gemm, Conv and pools, and the sod2 domain's fused contractions.
bool builtin_shader_op(const std::string& domain, const std::string& op_type);

// The kernel for `node`, or nullptr with `why` ("Conv: only float32") when no hand-written
// shader covers it. `cpu` is the node's CPU kernel: a Vulkan kernel hands it a run whose shapes
// the shader cannot take (after backend.sync(), counted with count_runtime_fallback()).
Expected<std::unique_ptr<Kernel>> make_builtin_kernel(VulkanBackend& backend, const NodeInfo& node,
                                                      std::unique_ptr<Kernel> cpu,
                                                      std::string* why);

}  // namespace sod2::rt::vk
