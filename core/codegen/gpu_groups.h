// Finds the fused elementwise groups of a program's main graph and compiles a compute shader
// for each (ProgramDesc::gpu_kernels; DESIGN §5). The CPU runs a group's nodes one by one as
// before; a Vulkan session runs the group as one dispatch.
//
// A group is a run of consecutive main-graph nodes, each a float32 elementwise op the generator
// knows, where every value produced inside is read only inside (never a graph output, never
// read by a control-flow body) and each node after the first reads one of them. Consecutive,
// because the memory plan was made for the nodes' own order: an outside node between two of
// them could reuse the bytes of an input the group still reads. Scalar float constants become
// literals in the shader; other inputs are bindings, at most kMaxGpuKernelInputs and as many as
// the push constants have room for at the output's rank.
#pragma once

#include <functional>
#include <string>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::codegen {

struct GpuCodegenStats {
  int groups = 0;         // gpu_kernels added
  int grouped_nodes = 0;  // nodes they cover
  int shaders = 0;        // distinct shaders compiled (identical sources are compiled once)
  double compile_ms = 0;
};

// `rank_of(value name)`: the main-graph value's rank as RDP derived it, -1 when unknown.
Status add_gpu_kernels(rt::ProgramDesc& program,
                       const std::function<int(const std::string&)>& rank_of,
                       GpuCodegenStats* stats = nullptr);

}  // namespace sod2::codegen
