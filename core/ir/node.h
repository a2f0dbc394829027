// An operator application. Inputs/outputs are ValueIds of the owning graph (kNoValue where an
// optional one is omitted); outer-scope names used by subgraphs are resolved to kOuterScope values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/value.h"

namespace sod2 {

struct Node {
  std::string name;  // unique within the model; generated ("Add_12") where the file left it empty
  std::string op_type;
  std::string domain;  // "" is the ONNX default domain ("ai.onnx" is normalised to "")
  int64_t opset = 0;   // the opset version the model imports for this node's domain
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::vector<Attribute> attributes;
  // Values of the owning graph that this node's subgraphs read by name (at any depth). They order
  // the node after their producers exactly like explicit inputs do.
  std::vector<ValueId> implicit_inputs;

  const Attribute* attribute(std::string_view attr_name) const {
    for (const Attribute& a : attributes)
      if (a.name == attr_name) return &a;
    return nullptr;
  }

  // The subgraphs this node owns (If branches, Loop/Scan bodies), in attribute order.
  std::vector<const Graph*> subgraphs() const {
    std::vector<const Graph*> out;
    for (const Attribute& a : attributes) {
      if (a.g) out.push_back(a.g.get());
      for (const auto& g : a.graphs) out.push_back(g.get());
    }
    return out;
  }
};

}  // namespace sod2
