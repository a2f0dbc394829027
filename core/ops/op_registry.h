// One registry of standard ONNX operators: each op's SoD² class, its value inputs (inputs whose
// contents decide the output shape), its forward shape rule, per opset range, and the work it
// does (op_work.h). Families register
// themselves from one file each (elementwise_ops.cpp, shape_ops.cpp...).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/node.h"
#include "core/ops/infer_context.h"
#include "core/ops/op_class.h"
#include "core/ops/op_work.h"

namespace sod2 {

using ShapeRule = Status (*)(InferContext& ctx);

struct OpSpec {
  std::string op_type;
  int64_t since = 1;  // applies from this opset until the next spec of the same op
  OpClass op_class = OpClass::kISDOS;
  std::vector<int> value_inputs;
  ShapeRule rule = nullptr;
  WorkRule work = nullptr;  // the same for every version of an op (op_work_table)
};

class OpRegistry {
 public:
  // The ai.onnx domain, every family registered.
  static const OpRegistry& standard();

  void add(OpSpec spec);
  // Sets the work rule of every version of `op_type`; false when the op is not registered.
  bool set_work(std::string_view op_type, WorkRule rule);
  // The spec in force at `opset`; nullptr for an op this registry does not know.
  const OpSpec* find(std::string_view op_type, int64_t opset) const;
  std::vector<std::string> op_types() const;
  const std::vector<OpSpec>* versions(std::string_view op_type) const;

 private:
  std::unordered_map<std::string, std::vector<OpSpec>> specs_;  // each sorted by `since`
};

// The spec for a node of any domain: nullptr outside the standard domain (class unknown).
const OpSpec* find_op_spec(const Node& node);
OpClass op_class_of(const Node& node);

// Family registration, one per file.
void register_elementwise_ops(OpRegistry& registry);
void register_reduction_ops(OpRegistry& registry);
void register_normalization_ops(OpRegistry& registry);
void register_shape_ops(OpRegistry& registry);
void register_crop_pad_ops(OpRegistry& registry);
void register_indexing_ops(OpRegistry& registry);
void register_linalg_ops(OpRegistry& registry);
void register_conv_pool_ops(OpRegistry& registry);
void register_resize_ops(OpRegistry& registry);
void register_recurrent_ops(OpRegistry& registry);
void register_control_flow_ops(OpRegistry& registry);
void register_sequence_ops(OpRegistry& registry);
void register_misc_ops(OpRegistry& registry);

}  // namespace sod2
