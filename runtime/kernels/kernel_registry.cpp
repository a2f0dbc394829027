#include "runtime/kernels/kernel_registry.h"

#include <algorithm>

#include "runtime/kernels/narrow_float_kernel.h"

namespace sod2::rt {

void KernelRegistry::add(const std::string& domain, const std::string& op_type, int since_opset,
                         KernelFactory factory) {
  auto& list = entries_[{domain, op_type}];
  list.emplace_back(since_opset, factory);
  std::sort(list.begin(), list.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
}

KernelFactory KernelRegistry::find(const std::string& domain, const std::string& op_type,
                                   int opset) const {
  auto it = entries_.find({domain, op_type});
  if (it == entries_.end()) return nullptr;
  KernelFactory found = nullptr;
  for (const auto& [since, f] : it->second)
    if (since <= opset) found = f;
  return found;
}

Expected<std::unique_ptr<Kernel>> KernelRegistry::create(const NodeInfo& node) const {
  const std::string where = "node '" + node.name + "' (" + node.op_type + ")";
  KernelFactory f = find(node.domain, node.op_type, node.opset);
  if (!f) {
    const std::string op = node.domain.empty() ? node.op_type : node.domain + ":" + node.op_type;
    if (entries_.count({node.domain, node.op_type})) {
      return unsupported(where + ": no CPU kernel implements " + op + " at opset " +
                         std::to_string(node.opset));
    }
    return unsupported(where + ": no CPU kernel for " + op);
  }
  if (computes_through_float32(node)) {
    // A half-precision node of an op computed in float32 (narrow_float_kernel.h).
    auto wide = f(widened_to_float32(node));
    if (!wide.ok()) return wide.status().with_context(where);
    return make_narrow_float_kernel(node, std::move(*wide));
  }
  auto k = f(node);
  if (!k.ok()) return k.status().with_context(where);
  return k;
}

std::vector<std::string> KernelRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [key, list] : entries_)
    out.push_back(key.first.empty() ? key.second : key.first + ":" + key.second);
  return out;
}

}  // namespace sod2::rt
