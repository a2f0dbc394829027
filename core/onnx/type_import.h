// TypeProto → the category, element type and declared shape of a Value.
#pragma once

#include <string>

#include "core/ir/value.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

// Fills value->category/dtype/shape. `what` names the value in messages.
Status import_type(const onnx::TypeProto& type, const std::string& what, Value* value);

}  // namespace sod2::onnx_import
