// GraphProto → Graph, recursively through subgraph attributes. Names resolve local-first, then
// through enclosing graphs; every outer-scope read becomes a kOuterScope value in each graph on the
// way and an implicit input of the node that owns the subgraph.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/onnx/four_bit.h"
#include "core/onnx/tensor_import.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

// State shared by every graph of one model.
struct ModelScope {
  const Model* model = nullptr;  // opset imports
  TensorSource tensors;
  Diagnostics* diagnostics = nullptr;
  std::unordered_set<std::string> node_names;  // model-wide, so names identify nodes uniquely
  std::unordered_map<std::string, int64_t> name_counters;
  // Initializers and Constant outputs that were int4/uint4 in the file, checked once the whole
  // model is read (check_four_bit_uses).
  FourBitValues four_bit_values;
};

class GraphImporter {
 public:
  GraphImporter(ModelScope* scope, GraphImporter* parent, int depth)
      : scope_(scope), parent_(parent), depth_(depth) {}

  Expected<std::shared_ptr<Graph>> import(const onnx::GraphProto& proto,
                                          const std::string& fallback_name);

  // Names this graph read from enclosing graphs, in first-use order.
  const std::vector<std::string>& captured() const { return captured_; }

 private:
  // Local value for `name`, creating a kOuterScope value if an enclosing graph defines it.
  ValueId resolve(const std::string& name);
  std::string unique_node_name(const onnx::NodeProto& node);
  Status declare_inputs_and_initializers(const onnx::GraphProto& proto);
  Status declare_node_outputs(const onnx::GraphProto& proto);
  void apply_value_info(const onnx::GraphProto& proto);
  Status import_node(const onnx::NodeProto& proto, size_t index);
  Expected<Attribute> import_attribute(const onnx::AttributeProto& proto, const std::string& label,
                                       const std::string& node_name,
                                       std::vector<std::string>* captured);
  Status import_outputs(const onnx::GraphProto& proto);
  std::string where() const;
  Status check_not_shadowing(const std::string& name, const std::string& what) const;
  Status check_control_flow_arity(const Node& node, const std::string& label) const;

  ModelScope* scope_;
  GraphImporter* parent_;
  int depth_;
  std::shared_ptr<Graph> graph_;
  std::vector<std::string> node_names_;  // final name per node index
  std::vector<std::string> captured_;
};

}  // namespace sod2::onnx_import
