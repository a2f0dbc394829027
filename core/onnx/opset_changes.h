// Standard operators whose opset 18+ meaning this build does not implement yet. A model importing
// a newer opset than libonnx is read with the project's own definitions (op_definitions.h); the
// changes listed here are refused at import with a message naming them, either for the whole op or
// only when a node sets the attribute that carries the new meaning.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace sod2::onnx_import {

struct OpsetChange {
  std::string_view op_type;
  int64_t version;        // the opset that changed it
  std::string_view what;  // what changed, for the error message
  // Empty: every node of the op is refused. Otherwise only nodes that set this attribute to a
  // value other than 0 / "" / `harmless`.
  std::string_view attr = {};
  std::string_view harmless = {};
};

// Whether the node sets attribute `name` to a value that is neither 0 nor "" nor `harmless`.
using SetsAttribute = std::function<bool(std::string_view name, std::string_view harmless)>;

// The first refused change to `op_type` in opsets (known_max, model_opset], or nullptr if none.
const OpsetChange* change_after(std::string_view op_type, int64_t known_max, int64_t model_opset,
                                const SetsAttribute& sets_attribute = {});

}  // namespace sod2::onnx_import
