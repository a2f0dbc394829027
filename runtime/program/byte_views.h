// Ops whose output 0 is their input 0's bytes unchanged under another shape. The memory plan
// gives such an output its input's arena tensor instead of a copy (DESIGN §5), and a session
// accepts two values in one arena tensor only through one of these ops
// (program_dataflow.h): the compiler and the runtime read this one rule.
#pragma once

#include <cstddef>
#include <string_view>

namespace sod2::rt {

// What a node's input is, as far as the rule needs: absent, a one-element constant whose bytes
// are all zero (false, 0.0), or anything else.
enum class InputKind { kAbsent, kZero, kOther };

// `domain` as a node carries it ("" or "ai.onnx" for ONNX's own ops); `input(i)` says what input i
// is. Dropout is the identity unless a training_mode input (input 2, opset 12 on) turns training
// on with a ratio (input 1, default 0.5) above 0: a view could not drop elements, since its bytes
// are what its input's other readers read. PyTorch exports Dropout with constants there (Swin's:
// training true, ratio 0).
template <class InputKindOf>
bool keeps_input_bytes(std::string_view domain, std::string_view op_type, InputKindOf input) {
  if (!domain.empty() && domain != "ai.onnx") return false;
  if (op_type == "Dropout")
    return input(size_t{2}) != InputKind::kOther || input(size_t{1}) == InputKind::kZero;
  return op_type == "Reshape" || op_type == "Flatten" || op_type == "Squeeze" ||
         op_type == "Unsqueeze" || op_type == "Identity";
}

}  // namespace sod2::rt
