// Builds what the runtime executes (runtime/exec/program.h) from an optimised model: the graphs
// in the planned order with each node's kernel description, initializers and Constant outputs as
// constants, how input dims bind symbols, and the memory plan compiled over those symbols. The
// package writer serialises exactly this; `sod2 run MODEL.onnx` runs it in memory.
#pragma once

#include "core/ir/model.h"
#include "core/opt/memory_plan.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "runtime/exec/program.h"

namespace sod2::package {

// An IR tensor as a runtime tensor. Errors: strings, complex, sparse, a rank above kMaxRank.
Expected<rt::HostTensor> to_host_tensor(const Tensor& t, const std::string& what);

// Errors: a value or attribute the runtime cannot represent (a rank above rt::kMaxRank, a
// sparse or string tensor, a graph input dim that is an expression), named.
Expected<rt::ProgramDesc> build_program(const Model& model, const RdpResult& rdp,
                                        const opt::MemoryPlan& plan);

}  // namespace sod2::package
