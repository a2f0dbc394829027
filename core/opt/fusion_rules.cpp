#include "core/opt/fusion_rules.h"

namespace sod2::opt {

FusionRole fusion_role(const Node& node) {
  if (!node.domain.empty()) return FusionRole::kOpaque;
  const OpSupport* row = find_op_support(node.op_type);
  return row ? row->role : FusionRole::kOpaque;
}

}  // namespace sod2::opt
