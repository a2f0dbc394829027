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
  // The CPU runtime runs node by node for now, so by default every value gets arena bytes; a
  // fused plan keeps group-internal values out of the arena (they then live on the heap).
  bool fuse = false;
};

Expected<rt::ProgramDesc> compile_model(const Model& model, const CompileOptions& options = {});

}  // namespace sod2::package
