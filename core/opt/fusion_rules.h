// What each operator may do in a fused group (DESIGN §5, "Fusion"): the role decides which
// neighbours it can absorb. Roles are about loop structure, not about shapes; fusion.cpp checks
// shapes with RDP's facts.
#pragma once

#include "core/ir/node.h"

namespace sod2::opt {

enum class FusionRole {
  kElementwise,    // one output element from the same element of each (broadcast) input
  kContraction,    // Conv, ConvTranspose, MatMul, Gemm: takes elementwise epilogues
  kNormalization,  // Softmax, LogSoftmax, LayerNormalization...: prologue and epilogue
  kReduction,      // Reduce*, global pools: elementwise prologue and epilogue
  kOpaque,         // layout, indexing, control flow...: always its own kernel
};

const char* fusion_role_name(FusionRole role);

// The role of a standard-domain node; kOpaque for anything else.
FusionRole fusion_role(const Node& node);

}  // namespace sod2::opt
