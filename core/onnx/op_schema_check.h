// Checks a node against libonnx's schema for its domain and opset: the op exists, its arity fits,
// attribute types match and required attributes are present. Beyond libonnx's newest opset, the
// default domain's ops that opsets 18-23 added or changed are checked against the project's own
// definitions (op_definitions.h), and the changes this build does not implement are refused
// (opset_changes.h).
#pragma once

#include <cstdint>
#include <string>

#include "core/status/diagnostic.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

// The newest opset libonnx defines for `domain`, or 0 when the domain is not a standard one.
int64_t max_known_opset(const std::string& domain);

// `label` names the node in messages ("node 'conv1' (Conv)"). Findings that do not make the
// model unreadable go to `diagnostics`.
Status check_node_schema(const onnx::NodeProto& node, const std::string& label,
                         const std::string& domain, int64_t opset, Diagnostics* diagnostics);

// The attribute's declared type, or the one its filled fields imply when an old exporter left the
// type unset (ONNX IR < 3).
onnx::AttributeProto::AttributeType effective_attribute_type(const onnx::AttributeProto& attr);

}  // namespace sod2::onnx_import
