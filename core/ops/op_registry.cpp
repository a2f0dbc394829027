#include "core/ops/op_registry.h"

#include <algorithm>

namespace sod2 {

const OpRegistry& OpRegistry::standard() {
  // Built on first use (thread-safe static init); explicit calls, no static-registration magic,
  // so linking a family can never be silently dropped.
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_elementwise_ops(r);
    register_reduction_ops(r);
    register_normalization_ops(r);
    register_shape_ops(r);
    register_crop_pad_ops(r);
    register_indexing_ops(r);
    register_linalg_ops(r);
    register_conv_pool_ops(r);
    register_resize_ops(r);
    register_recurrent_ops(r);
    register_control_flow_ops(r);
    register_sequence_ops(r);
    register_misc_ops(r);
    for (const auto& [op, rule] : op_work_table()) r.set_work(op, rule);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpSpec spec) {
  auto& list = specs_[spec.op_type];
  list.push_back(std::move(spec));
  std::sort(list.begin(), list.end(),
            [](const OpSpec& a, const OpSpec& b) { return a.since < b.since; });
}

bool OpRegistry::set_work(std::string_view op_type, WorkRule rule) {
  auto it = specs_.find(std::string(op_type));
  if (it == specs_.end()) return false;
  for (OpSpec& s : it->second) s.work = rule;
  return true;
}

const OpSpec* OpRegistry::find(std::string_view op_type, int64_t opset) const {
  auto it = specs_.find(std::string(op_type));
  if (it == specs_.end()) return nullptr;
  const OpSpec* found = nullptr;
  for (const OpSpec& s : it->second)
    if (s.since <= opset) found = &s;
  // A model may import an opset older than our first spec of an op; the oldest spec still
  // describes it better than nothing.
  return found ? found : &it->second.front();
}

const std::vector<OpSpec>* OpRegistry::versions(std::string_view op_type) const {
  auto it = specs_.find(std::string(op_type));
  return it == specs_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::op_types() const {
  std::vector<std::string> out;
  for (const auto& [name, list] : specs_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const OpSpec* find_op_spec(const Node& node) {
  if (!node.domain.empty()) return nullptr;
  return OpRegistry::standard().find(node.op_type, node.opset);
}

OpClass op_class_of(const Node& node) {
  const OpSpec* spec = find_op_spec(node);
  return spec ? spec->op_class : OpClass::kUnknown;
}

}  // namespace sod2
