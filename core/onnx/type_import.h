// TypeProto → the category, element type and declared shape of a Value.
#pragma once

#include <string>

#include "core/ir/value.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

// How a declared int4/uint4 element type reads (four_bit.h): refused where the runtime would have
// to produce a 4-bit tensor (graph inputs and outputs), or as int8/uint8 where the declaration is
// advisory and may describe a widened constant (value_info).
enum class FourBitDeclaration { kRefuse, kReadWidened };

// Fills value->category/dtype/shape. `what` names the value in messages.
Status import_type(const onnx::TypeProto& type, const std::string& what, Value* value,
                   FourBitDeclaration four_bit = FourBitDeclaration::kRefuse);

}  // namespace sod2::onnx_import
