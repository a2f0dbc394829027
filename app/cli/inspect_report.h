// What `sod2 inspect` prints: one JSON document (machine readers, the studio, tests) and a text
// summary with a node table (people). Both read the imported Model and its RDP result only.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/ir/model.h"
#include "core/onnx/onnx_shape_io.h"
#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"

namespace sod2::cli {

// Bumped whenever a field changes meaning or disappears (adding fields keeps the version).
inline constexpr int kInspectSchemaVersion = 1;

struct InspectData {
  const Model& model;
  const RdpResult& rdp;
  std::optional<sym::Binding> binding;        // --bind
  std::optional<OnnxInferenceCounts> onnx;    // --compare-onnx
};

nlohmann::ordered_json inspect_json(const InspectData& data);
std::string inspect_text(const InspectData& data);

// RDP's shapes in the form write_shapes_to_onnx takes: symbolic dims become dim_param strings.
ShapeAnnotations shape_annotations(const Model& model, const RdpResult& rdp);

}  // namespace sod2::cli
