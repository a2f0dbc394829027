#include "core/onnx/op_schema_check.h"

#include "core/onnx/opset_changes.h"
#include "onnx/defs/schema.h"

namespace sod2::onnx_import {
namespace {

const char* attr_type_name(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT: return "float";
    case onnx::AttributeProto::INT: return "int";
    case onnx::AttributeProto::STRING: return "string";
    case onnx::AttributeProto::TENSOR: return "tensor";
    case onnx::AttributeProto::GRAPH: return "graph";
    case onnx::AttributeProto::SPARSE_TENSOR: return "sparse_tensor";
    case onnx::AttributeProto::TYPE_PROTO: return "type_proto";
    case onnx::AttributeProto::FLOATS: return "floats";
    case onnx::AttributeProto::INTS: return "ints";
    case onnx::AttributeProto::STRINGS: return "strings";
    case onnx::AttributeProto::TENSORS: return "tensors";
    case onnx::AttributeProto::GRAPHS: return "graphs";
    case onnx::AttributeProto::SPARSE_TENSORS: return "sparse_tensors";
    case onnx::AttributeProto::TYPE_PROTOS: return "type_protos";
    default: return "undefined";
  }
}

std::string domain_label(const std::string& domain) {
  return domain.empty() ? std::string("ai.onnx") : domain;
}

}  // namespace

onnx::AttributeProto::AttributeType effective_attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.has_sparse_tensor()) return onnx::AttributeProto::SPARSE_TENSOR;
  if (a.has_tp()) return onnx::AttributeProto::TYPE_PROTO;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  if (a.tensors_size()) return onnx::AttributeProto::TENSORS;
  if (a.graphs_size()) return onnx::AttributeProto::GRAPHS;
  if (a.sparse_tensors_size()) return onnx::AttributeProto::SPARSE_TENSORS;
  if (a.type_protos_size()) return onnx::AttributeProto::TYPE_PROTOS;
  return onnx::AttributeProto::UNDEFINED;
}

int64_t max_known_opset(const std::string& domain) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = ranges.find(domain);
  return it == ranges.end() ? 0 : it->second.second;
}

Status check_node_schema(const onnx::NodeProto& node, const std::string& label,
                         const std::string& domain, int64_t opset, Diagnostics* diagnostics) {
  const int64_t known = max_known_opset(domain);
  if (known == 0) return {};  // a custom domain: nothing to check against; RDP marks it unknown
  const int64_t effective = std::min(opset, known);
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      node.op_type(), static_cast<int>(effective), domain);
  if (!schema) {
    std::string msg = label + ": op '" + node.op_type() + "' is not defined in domain '" +
                      domain_label(domain) + "' at opset " + std::to_string(opset);
    if (opset > known)
      msg += " (this build's libonnx defines opsets up to " + std::to_string(known) + ")";
    return invalid_model(msg);
  }
  if (opset > known) {
    if (const OpsetChange* c = change_after(node.op_type(), known, opset)) {
      return unsupported(label + ": opset " + std::to_string(c->version) + " changed '" +
                         node.op_type() + "' (" + std::string(c->what) +
                         ") and this build knows its definition only up to opset " +
                         std::to_string(known));
    }
  }
  if (schema->Deprecated()) {
    diagnostics->push_back({Severity::kWarning,
                            "op '" + node.op_type() + "' is deprecated at opset " +
                                std::to_string(opset),
                            node.name()});
  }
  // Arity is only authoritative where we read the op with the model's own opset.
  const bool exact = opset <= known;
  const int n_in = node.input_size(), n_out = node.output_size();
  if (exact && (n_in < schema->min_input() || n_in > schema->max_input())) {
    return invalid_model(label + ": has " + std::to_string(n_in) + " inputs but '" +
                         node.op_type() + "' at opset " + std::to_string(opset) + " takes " +
                         std::to_string(schema->min_input()) + " to " +
                         std::to_string(schema->max_input()));
  }
  if (exact && (n_out < schema->min_output() || n_out > schema->max_output())) {
    return invalid_model(label + ": has " + std::to_string(n_out) + " outputs but '" +
                         node.op_type() + "' at opset " + std::to_string(opset) + " gives " +
                         std::to_string(schema->min_output()) + " to " +
                         std::to_string(schema->max_output()));
  }
  const auto& declared = schema->attributes();
  for (const onnx::AttributeProto& attr : node.attribute()) {
    auto it = declared.find(attr.name());
    if (it == declared.end()) {
      diagnostics->push_back({Severity::kWarning,
                              "attribute '" + attr.name() + "' is not part of '" +
                                  node.op_type() + "' at opset " + std::to_string(opset) +
                                  " and is ignored",
                              node.name()});
      continue;
    }
    const auto actual = effective_attribute_type(attr);
    if (actual != it->second.type) {
      return invalid_model(label + ": attribute '" + attr.name() + "' must be of type " +
                           attr_type_name(it->second.type) + " but is " +
                           attr_type_name(actual));
    }
  }
  for (const auto& [name, spec] : declared) {
    if (!spec.required) continue;
    bool present = false;
    for (const auto& attr : node.attribute()) present = present || attr.name() == name;
    if (!present) {
      return invalid_model(label + ": required attribute '" + name + "' of '" + node.op_type() +
                           "' is missing");
    }
  }
  return {};
}

}  // namespace sod2::onnx_import
