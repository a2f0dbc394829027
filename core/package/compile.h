// An ONNX model to what the runtime executes, in one call: RDP under the given ranges, the memory
// plan, the program. What `sod2 run MODEL.onnx` and the package writer start from.
#pragma once

#include "core/ir/model.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/exec/program.h"

namespace sod2::package {

struct CompileOptions {
  RdpOptions rdp;
  // Run the fused groups the CPU runtime has kernels for (kernel_fusion.h) as one kernel each,
  // their inside values out of the arena; false: every node alone, every value in the arena.
  bool fuse = true;
  // Also carry the size-bucketed plan versions (plan_versions.h); the session runs each binding
  // with its cell's version.
  bool plan_versions = true;
  // Generate and compile a compute shader per fused elementwise group (core/codegen), for the
  // Vulkan backend. Off by default: it costs compile time the CPU never benefits from.
  bool gpu_kernels = false;
};

Expected<rt::ProgramDesc> compile_model(const Model& model, const CompileOptions& options = {});

}  // namespace sod2::package
