// What a node may do in a fused group (DESIGN §5, "Fusion"): its op's role (core/ops/op_support.h)
// decides which neighbours it can absorb.
#pragma once

#include "core/ir/node.h"
#include "core/ops/op_support.h"

namespace sod2::opt {

// The enum and each op's role live in the per-op table (core/ops/op_support.h).
using sod2::fusion_role_name;
using sod2::FusionRole;

// The role of a standard-domain node; kOpaque for anything else.
FusionRole fusion_role(const Node& node);

}  // namespace sod2::opt
