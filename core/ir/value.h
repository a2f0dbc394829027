// A named SSA value of one graph: graph input, initializer, node output, or a reference a subgraph
// makes to a value of an enclosing graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/data_type.h"
#include "core/ir/dim.h"

namespace sod2 {

class Graph;

using ValueId = int32_t;
using NodeId = int32_t;
inline constexpr ValueId kNoValue = -1;  // an omitted optional input/output ("" in ONNX)
inline constexpr NodeId kNoNode = -1;

enum class ValueKind { kGraphInput, kInitializer, kNodeOutput, kOuterScope };

// What the value holds; only tensors carry a dtype and shape.
enum class TypeCategory { kTensor, kSparseTensor, kSequence, kMap, kOptional, kUnknown };

const char* value_kind_name(ValueKind kind);
const char* type_category_name(TypeCategory c);

struct Value {
  std::string name;
  ValueKind kind = ValueKind::kNodeOutput;
  TypeCategory category = TypeCategory::kUnknown;
  DataType dtype = DataType::kUndefined;
  ShapeDecl shape;  // as declared in the file (graph input/output or value_info)

  NodeId producer = kNoNode;  // for kNodeOutput
  int32_t producer_output = -1;
  std::vector<NodeId> consumers;  // each consuming node once, in node order

  int32_t initializer = -1;  // index into Graph::initializers() for kInitializer

  // For kOuterScope: where the name resolves in an enclosing graph.
  const Graph* outer_graph = nullptr;
  ValueId outer_value = kNoValue;
};

inline const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kGraphInput: return "input";
    case ValueKind::kInitializer: return "initializer";
    case ValueKind::kNodeOutput: return "node_output";
    case ValueKind::kOuterScope: return "outer_scope";
  }
  return "node_output";
}

inline const char* type_category_name(TypeCategory c) {
  switch (c) {
    case TypeCategory::kTensor: return "tensor";
    case TypeCategory::kSparseTensor: return "sparse_tensor";
    case TypeCategory::kSequence: return "sequence";
    case TypeCategory::kMap: return "map";
    case TypeCategory::kOptional: return "optional";
    case TypeCategory::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace sod2
