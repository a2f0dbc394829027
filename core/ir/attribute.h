// A node attribute. Mirrors ONNX's AttributeProto: one type tag, the matching field filled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/tensor.h"

namespace sod2 {

class Graph;

enum class AttributeType {
  kUndefined,
  kFloat,
  kInt,
  kString,
  kTensor,
  kGraph,
  kFloats,
  kInts,
  kStrings,
  kTensors,
  kGraphs,
  kSparseTensor,
  kSparseTensors,  // densified into `tensors`
  kTypeProto,
  kTypeProtos,
};

std::string_view attribute_type_name(AttributeType type);

struct Attribute {
  std::string name;
  AttributeType type = AttributeType::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;  // shared so Nodes stay copyable; subgraphs are never mutated after import
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

inline std::string_view attribute_type_name(AttributeType type) {
  switch (type) {
    case AttributeType::kUndefined: return "undefined";
    case AttributeType::kFloat: return "float";
    case AttributeType::kInt: return "int";
    case AttributeType::kString: return "string";
    case AttributeType::kTensor: return "tensor";
    case AttributeType::kGraph: return "graph";
    case AttributeType::kFloats: return "floats";
    case AttributeType::kInts: return "ints";
    case AttributeType::kStrings: return "strings";
    case AttributeType::kTensors: return "tensors";
    case AttributeType::kGraphs: return "graphs";
    case AttributeType::kSparseTensor: return "sparse_tensor";
    case AttributeType::kSparseTensors: return "sparse_tensors";
    case AttributeType::kTypeProto: return "type_proto";
    case AttributeType::kTypeProtos: return "type_protos";
  }
  return "undefined";
}

}  // namespace sod2
