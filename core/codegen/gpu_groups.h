// Compiles a compute shader (ProgramDesc::gpu_kernels; DESIGN §5) for each main-graph node a
// Vulkan session can run as one generated dispatch: every sod2:FusedElementwise node (the
// elementwise groups fusion decided, core/package/elementwise_fusion.h) and every lone float32
// elementwise node the generator knows. Fusion is not decided here: the groups are the ones the
// memory plan was made for, so what the plan holds is what runs. Scalar float constants become
// literals in the shader; other inputs are bindings, at most kMaxGpuKernelInputs and as many as
// the push constants have room for at the output's rank (a node beyond that, in a program
// compiled for the CPU, stays on the CPU).
#pragma once

#include <functional>
#include <string>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::codegen {

struct GpuCodegenStats {
  int groups = 0;         // gpu_kernels added
  int grouped_nodes = 0;  // model nodes they cover (a fused node counts its members)
  int shaders = 0;        // distinct shaders compiled (identical sources are compiled once)
  double compile_ms = 0;
};

// `rank_of(value name)`: the main-graph value's rank as RDP derived it, -1 when unknown.
Status add_gpu_kernels(rt::ProgramDesc& program,
                       const std::function<int(const std::string&)>& rank_of,
                       GpuCodegenStats* stats = nullptr);

}  // namespace sod2::codegen
