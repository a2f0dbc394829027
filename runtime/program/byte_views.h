// Ops whose output 0 is their input 0's bytes unchanged under another shape. The memory plan
// gives such an output its input's arena tensor instead of a copy (DESIGN §5), and a session
// accepts two values in one arena tensor only through one of these ops
// (program_dataflow.h): the compiler and the runtime read this one list.
#pragma once

#include <string_view>

namespace sod2::rt {

// `domain` as a node carries it ("" or "ai.onnx" for ONNX's own ops).
inline bool keeps_input_bytes(std::string_view domain, std::string_view op_type) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  return op_type == "Reshape" || op_type == "Flatten" || op_type == "Squeeze" ||
         op_type == "Unsqueeze" || op_type == "Identity";
}

}  // namespace sod2::rt
