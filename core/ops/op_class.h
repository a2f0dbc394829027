// SoD²'s operator classes: what determines an operator's output shape (DESIGN §3).
#pragma once

namespace sod2 {

enum class OpClass {
  kISDO,    // output shape and values follow from input shapes (Shape, Size)
  kISDOS,   // output shape follows from input shapes; values need the data (Conv, Add)
  kISVDOS,  // output shape needs some input values (Reshape, Slice with tensor starts)
  kEDO,     // output shape known only after running (NonZero, If, Loop)
  kUnknown, // not a standard op: outputs stay unknown
};

inline const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kISDO: return "ISDO";
    case OpClass::kISDOS: return "ISDOS";
    case OpClass::kISVDOS: return "ISVDOS";
    case OpClass::kEDO: return "EDO";
    case OpClass::kUnknown: return "unknown";
  }
  return "unknown";
}

}  // namespace sod2
