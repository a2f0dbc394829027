// Standard operators whose meaning changed after the newest opset the linked libonnx defines.
// A model importing a newer opset is read with the older definitions only where they still hold.
#pragma once

#include <cstdint>
#include <string_view>

namespace sod2::onnx_import {

struct OpsetChange {
  std::string_view op_type;
  int64_t version;         // the opset that changed it
  std::string_view what;   // what changed, for the error message
};

// The first change to `op_type` in opsets (known_max, model_opset], or nullptr if none is listed.
const OpsetChange* change_after(std::string_view op_type, int64_t known_max, int64_t model_opset);

}  // namespace sod2::onnx_import
