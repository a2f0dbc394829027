#include "core/onnx/op_schema_check.h"

#include <algorithm>
#include <optional>

#include "core/onnx/op_definitions.h"
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

namespace {

std::optional<DefAttrType> def_type_of(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::INT: return DefAttrType::kInt;
    case onnx::AttributeProto::FLOAT: return DefAttrType::kFloat;
    case onnx::AttributeProto::STRING: return DefAttrType::kString;
    case onnx::AttributeProto::INTS: return DefAttrType::kInts;
    case onnx::AttributeProto::FLOATS: return DefAttrType::kFloats;
    case onnx::AttributeProto::STRINGS: return DefAttrType::kStrings;
    case onnx::AttributeProto::TENSOR: return DefAttrType::kTensor;
    case onnx::AttributeProto::GRAPH: return DefAttrType::kGraph;
    default: return std::nullopt;
  }
}

Status check_arity(const onnx::NodeProto& node, const std::string& label, int64_t opset, int min_in,
                   int max_in, int min_out, int max_out) {
  const int n_in = node.input_size(), n_out = node.output_size();
  auto bound = [](int v) { return v >= kVariadic ? std::string("any number") : std::to_string(v); };
  if (n_in < min_in || n_in > max_in) {
    return invalid_model(label + ": has " + std::to_string(n_in) + " inputs but '" +
                         node.op_type() + "' at opset " + std::to_string(opset) + " takes " +
                         std::to_string(min_in) + " to " + bound(max_in));
  }
  if (n_out < min_out || n_out > max_out) {
    return invalid_model(label + ": has " + std::to_string(n_out) + " outputs but '" +
                         node.op_type() + "' at opset " + std::to_string(opset) + " gives " +
                         std::to_string(min_out) + " to " + bound(max_out));
  }
  return {};
}

void warn_unknown_attribute(const onnx::NodeProto& node, const onnx::AttributeProto& attr,
                            int64_t opset, Diagnostics* diagnostics) {
  diagnostics->push_back({Severity::kWarning,
                          "attribute '" + attr.name() + "' is not part of '" + node.op_type() +
                              "' at opset " + std::to_string(opset) + " and is ignored",
                          node.name()});
}

Status missing_attribute(const std::string& label, const std::string& name,
                         const onnx::NodeProto& node) {
  return invalid_model(label + ": required attribute '" + name + "' of '" + node.op_type() +
                       "' is missing");
}

// A node of an opset beyond libonnx, against the project's own definition of that version.
// `older` is libonnx's definition of the op (nullptr for an op new since): an attribute it had
// that `def` dropped (ReduceMean's axes became an input at 18) would silently change the meaning,
// so it is an error rather than an ignored extra.
Status check_against_definition(const onnx::NodeProto& node, const std::string& label,
                                int64_t opset, const OpDefinition& def, const onnx::OpSchema* older,
                                Diagnostics* diagnostics) {
  SOD2_RETURN_IF_ERROR(check_arity(node, label, opset, def.min_inputs, def.max_inputs,
                                   def.min_outputs, def.max_outputs));
  for (const onnx::AttributeProto& attr : node.attribute()) {
    const DefAttr* spec = nullptr;
    for (const DefAttr& a : def.attrs)
      if (a.name == attr.name()) spec = &a;
    if (!spec) {
      if (older && older->attributes().count(attr.name())) {
        return invalid_model(label + ": attribute '" + attr.name() + "' is no longer part of '" +
                             node.op_type() + "' at opset " + std::to_string(opset) + " (opset " +
                             std::to_string(def.since) + ": " + std::string(def.what) + ")");
      }
      warn_unknown_attribute(node, attr, opset, diagnostics);
      continue;
    }
    const auto actual = effective_attribute_type(attr);
    if (def_type_of(actual) != spec->type) {
      return invalid_model(label + ": attribute '" + attr.name() + "' must be of type " +
                           def_attr_type_name(spec->type) + " but is " + attr_type_name(actual));
    }
  }
  for (const DefAttr& a : def.attrs) {
    if (!a.required) continue;
    bool present = false;
    for (const auto& attr : node.attribute()) present = present || attr.name() == a.name;
    if (!present) return missing_attribute(label, std::string(a.name), node);
  }
  return {};
}

bool sets_attribute(const onnx::NodeProto& node, std::string_view name, std::string_view harmless) {
  for (const auto& attr : node.attribute()) {
    if (attr.name() != name) continue;
    switch (effective_attribute_type(attr)) {
      case onnx::AttributeProto::INT: return attr.i() != 0;
      case onnx::AttributeProto::STRING: return !attr.s().empty() && attr.s() != harmless;
      default: return true;
    }
  }
  return false;
}

}  // namespace

Status check_node_schema(const onnx::NodeProto& node, const std::string& label,
                         const std::string& domain, int64_t opset, Diagnostics* diagnostics) {
  const int64_t known = max_known_opset(domain);
  if (known == 0) return {};  // a custom domain: nothing to check against; RDP marks it unknown
  const int64_t effective = std::min(opset, known);
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(effective), domain);
  // Beyond libonnx, the default domain's ops that opsets 18-23 added or changed read with the
  // project's own definitions; versions that only added element types keep libonnx's reading.
  const bool beyond = opset > known;
  const OpDefinition* def =
      beyond && domain.empty() ? definition_after(node.op_type(), known, opset) : nullptr;
  if (!schema && !def) {
    std::string msg = label + ": op '" + node.op_type() + "' is not defined in domain '" +
                      domain_label(domain) + "' at opset " + std::to_string(opset);
    const OpDefinition* later = domain.empty() ? any_definition(node.op_type()) : nullptr;
    if (later && later->since > opset)
      msg += " (it was added at opset " + std::to_string(later->since) + ")";
    else if (beyond)
      msg += " (this build defines its operators up to opset " +
             std::to_string(domain.empty() ? std::max(known, kNewestDefinedOpset) : known) + ")";
    return invalid_model(msg);
  }
  if (beyond) {
    const auto sets = [&node](std::string_view name, std::string_view harmless) {
      return sets_attribute(node, name, harmless);
    };
    if (const OpsetChange* c = change_after(node.op_type(), known, opset, sets)) {
      std::string msg = label + ": opset " + std::to_string(c->version) + " changed '" +
                        node.op_type() + "' (" + std::string(c->what) + ")";
      msg += c->attr.empty() ? std::string(" and this build does not implement that yet")
                             : " and this build does not implement attribute '" +
                                   std::string(c->attr) + "' yet";
      return unsupported(msg);
    }
  }
  if (def) return check_against_definition(node, label, opset, *def, schema, diagnostics);
  if (schema->Deprecated()) {
    diagnostics->push_back(
        {Severity::kWarning,
         "op '" + node.op_type() + "' is deprecated at opset " + std::to_string(opset),
         node.name()});
  }
  // Arity is authoritative where libonnx's definition is the one in force: up to libonnx's own
  // opsets, and for the default domain up to the newest opset op_definitions describes (a later
  // change would be listed there).
  const bool exact = !beyond || (domain.empty() && opset <= kNewestDefinedOpset);
  if (exact) {
    SOD2_RETURN_IF_ERROR(check_arity(node, label, opset, schema->min_input(), schema->max_input(),
                                     schema->min_output(), schema->max_output()));
  }
  const auto& declared = schema->attributes();
  for (const onnx::AttributeProto& attr : node.attribute()) {
    auto it = declared.find(attr.name());
    if (it == declared.end()) {
      warn_unknown_attribute(node, attr, opset, diagnostics);
      continue;
    }
    const auto actual = effective_attribute_type(attr);
    if (actual != it->second.type) {
      return invalid_model(label + ": attribute '" + attr.name() + "' must be of type " +
                           attr_type_name(it->second.type) + " but is " + attr_type_name(actual));
    }
  }
  for (const auto& [name, spec] : declared) {
    if (!spec.required) continue;
    bool present = false;
    for (const auto& attr : node.attribute()) present = present || attr.name() == name;
    if (!present) return missing_attribute(label, name, node);
  }
  return {};
}

}  // namespace sod2::onnx_import
