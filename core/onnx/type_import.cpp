#include "core/onnx/type_import.h"

#include "core/onnx/four_bit.h"
#include "core/onnx/import_limits.h"

namespace sod2::onnx_import {
namespace {

Expected<DataType> elem_type(int32_t raw, const std::string& what, FourBitDeclaration four_bit) {
  if (const std::optional<DataType> widened = widened_four_bit_type(raw)) {
    if (four_bit == FourBitDeclaration::kReadWidened) return *widened;
    return unsupported(what + ": is declared " + four_bit_type_name(raw) + "; " + four_bit_scope());
  }
  const std::optional<DataType> dt = data_type_from_onnx(raw);
  if (!dt) return invalid_model(what + ": unknown element type " + std::to_string(raw));
  return *dt;
}

Expected<ShapeDecl> import_shape(const onnx::TypeProto_Tensor& t, const std::string& what) {
  if (!t.has_shape()) return ShapeDecl{};
  if (t.shape().dim_size() > kMaxRank)
    return invalid_model(what + ": rank " + std::to_string(t.shape().dim_size()) + " exceeds " +
                         std::to_string(kMaxRank));
  std::vector<DimDecl> dims;
  dims.reserve(static_cast<size_t>(t.shape().dim_size()));
  for (const auto& d : t.shape().dim()) {
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return invalid_model(what + ": negative dimension " + std::to_string(d.dim_value()));
      if (d.dim_value() > kMaxDim)
        return invalid_model(what + ": absurd dimension " + std::to_string(d.dim_value()));
      dims.push_back(DimDecl::constant(d.dim_value()));
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      dims.push_back(DimDecl::param(d.dim_param()));
    } else {
      dims.push_back(DimDecl::unknown());
    }
  }
  return ShapeDecl(std::move(dims));
}

// A sequence's or optional's element type, down to its tensors' element type (the dtype such a
// value carries: sequences hold tensors of one type). The element's shape is not kept: a
// Value's shape is a tensor's.
Status import_element_type(const onnx::TypeProto& element, const std::string& what,
                           FourBitDeclaration four_bit, Value* value) {
  const onnx::TypeProto* t = &element;
  for (int depth = 0; depth < 4; ++depth) {
    switch (t->value_case()) {
      case onnx::TypeProto::kTensorType: {
        if (!t->tensor_type().has_elem_type()) return {};
        SOD2_ASSIGN_OR_RETURN(value->dtype,
                              elem_type(t->tensor_type().elem_type(), what, four_bit));
        return {};
      }
      case onnx::TypeProto::kSequenceType: t = &t->sequence_type().elem_type(); break;
      case onnx::TypeProto::kOptionalType: t = &t->optional_type().elem_type(); break;
      default: return {};
    }
  }
  return {};
}

}  // namespace

Status import_type(const onnx::TypeProto& type, const std::string& what, Value* value,
                   FourBitDeclaration four_bit) {
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: {
      value->category = TypeCategory::kTensor;
      SOD2_ASSIGN_OR_RETURN(value->dtype,
                            elem_type(type.tensor_type().elem_type(), what, four_bit));
      SOD2_ASSIGN_OR_RETURN(value->shape, import_shape(type.tensor_type(), what));
      return {};
    }
    case onnx::TypeProto::kSparseTensorType: {
      value->category = TypeCategory::kSparseTensor;
      SOD2_ASSIGN_OR_RETURN(value->dtype,
                            elem_type(type.sparse_tensor_type().elem_type(), what, four_bit));
      onnx::TypeProto_Tensor as_dense;
      *as_dense.mutable_shape() = type.sparse_tensor_type().shape();
      if (!type.sparse_tensor_type().has_shape()) as_dense.clear_shape();
      SOD2_ASSIGN_OR_RETURN(value->shape, import_shape(as_dense, what));
      return {};
    }
    case onnx::TypeProto::kSequenceType:
      value->category = TypeCategory::kSequence;
      return import_element_type(type.sequence_type().elem_type(), what, four_bit, value);
    case onnx::TypeProto::kMapType: value->category = TypeCategory::kMap; return {};
    case onnx::TypeProto::kOptionalType:
      value->category = TypeCategory::kOptional;
      return import_element_type(type.optional_type().elem_type(), what, four_bit, value);
    default: value->category = TypeCategory::kUnknown; return {};
  }
}

}  // namespace sod2::onnx_import
