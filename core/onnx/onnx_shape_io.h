// Shapes between sod2 and other ONNX tools: what libonnx's own shape inference leaves unknown (the
// baseline RDP is compared with), and writing RDP's shapes back into a model's value_info.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/data_type.h"
#include "core/ir/dim.h"
#include "core/status/status.h"

namespace sod2 {

struct OnnxInferenceCounts {
  int64_t values_total = 0;
  int64_t rank_unknown = 0;
  int64_t dims_total = 0;
  int64_t dims_constant = 0;
  int64_t dims_symbolic = 0;
  int64_t dims_unknown = 0;  // no value and no param, or a generated "unk__N" param
};

// Strips value_info, runs libonnx's InferShapes with data propagation, and counts node outputs of
// every graph plus graph outputs (Constant outputs excluded), like RdpSummary. Call only on a
// model that import_onnx_file accepted: libonnx is not hardened against hostile files.
Expected<OnnxInferenceCounts> onnx_inference_counts(const std::string& model_path);

// Shapes per graph, in visit_graphs order, by value name.
struct ValueShape {
  DataType dtype = DataType::kUndefined;
  ShapeDecl shape;
};
using ShapeAnnotations = std::vector<std::unordered_map<std::string, ValueShape>>;

// Rewrites `model_path` into `out_path` with value_info replaced by `shapes` (graph outputs keep
// their declared types but gain shapes where they had none).
Status write_shapes_to_onnx(const std::string& model_path, const std::string& out_path,
                            const ShapeAnnotations& shapes);

}  // namespace sod2
