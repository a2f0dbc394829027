// Builds what the runtime executes (runtime/program/program.h) from an optimised model: the graphs
// in the planned order with each node's kernel description, initializers and Constant outputs as
// constants, how input dims bind symbols, and the memory plan compiled over those symbols. The
// package writer serialises exactly this; `sod2 run MODEL.onnx` runs it in memory.
#pragma once

#include <optional>
#include <vector>

#include "core/ir/model.h"
#include "core/opt/memory_plan.h"
#include "core/package/kernel_fusion.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::package {

// An IR tensor as a runtime tensor. Errors: strings, complex, sparse, a rank above kMaxRank.
Expected<rt::HostTensor> to_host_tensor(const Tensor& t, const std::string& what);

rt::DType to_rt_dtype(DataType t);

// `fused` (optional, per group of plan.fusion): the groups that run as one fused kernel; every
// other node runs on its own. Errors: a value or attribute the runtime cannot represent (a rank
// above rt::kMaxRank, a sparse or string tensor, a graph input dim that is an expression), named.
Expected<rt::ProgramDesc> build_program(
    const Model& model, const RdpResult& rdp, const opt::MemoryPlan& plan,
    const std::vector<std::optional<FusedKernel>>* fused = nullptr);

}  // namespace sod2::package
