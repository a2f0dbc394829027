#include <filesystem>

#include "core/onnx/onnx_import.h"
#include "core/onnx/tensor_import.h"
#include "core/status/input_file.h"
#include "google/protobuf/unknown_field_set.h"
#include "onnx/onnx-data.pb.h"

namespace sod2 {

namespace {

constexpr int kMaxSequenceElements = 1 << 20;

Expected<Tensor> import_one(const onnx::TensorProto& proto, const std::string& path,
                            const std::string& what) {
  onnx_import::TensorSource source;
  source.base_dir = std::filesystem::path(path).parent_path().string();
  if (source.base_dir.empty()) source.base_dir = ".";
  try {
    return onnx_import::import_tensor(proto, source, what);
  } catch (const std::bad_alloc&) {
    return unsupported(what + ": ran out of memory while reading the tensor");
  }
}

// The elements of a SequenceProto, which must hold tensors.
Status read_sequence(const onnx::SequenceProto& seq, const std::string& path, TestValue* out) {
  if (seq.elem_type() != onnx::SequenceProto::TENSOR &&
      seq.elem_type() != onnx::SequenceProto::UNDEFINED)
    return unsupported(path + ": sequences of element kind " + std::to_string(seq.elem_type()) +
                       " are not supported (only tensors)");
  if (seq.tensor_values_size() > kMaxSequenceElements)
    return unsupported(path + ": a sequence of " + std::to_string(seq.tensor_values_size()) +
                       " elements");
  out->category = TypeCategory::kSequence;
  for (int i = 0; i < seq.tensor_values_size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(
        Tensor t, import_one(seq.tensor_values(i), path, path + " element " + std::to_string(i)));
    out->tensors.push_back(std::move(t));
  }
  return Status::ok_status();
}

// What an optional's test file holds. ONNX's test writer stores an optional's value as an
// OptionalProto, or as the TensorProto or SequenceProto of the value it holds; the bytes do not
// name their message, so the top-level field numbers decide.
enum class OptionalFile { kTensor, kSequence, kOptional };
OptionalFile optional_file_kind(const std::vector<uint8_t>& bytes) {
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return OptionalFile::kOptional;  // its parse reports the error
  int field3 = 0;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& f = fields.field(i);
    // TensorProto: dims (1, varint or packed), data_type (2) and the data fields 4-14; Sequence
    // and Optional: name (1, bytes), elem_type (2), values (3, 5, ...).
    if ((f.number() == 1 && f.type() == google::protobuf::UnknownField::TYPE_VARINT) ||
        (f.number() >= 8 && f.number() <= 14) || f.number() == 4 || f.number() == 6)
      return OptionalFile::kTensor;
    if (f.number() == 3) ++field3;
  }
  // One tensor value is read as an optional holding it (the same bytes as a one-element sequence).
  return field3 >= 2 ? OptionalFile::kSequence : OptionalFile::kOptional;
}

}  // namespace

Expected<Tensor> read_tensor_file(const std::string& path) {
  // Bounded by protobuf's own limit: a TensorProto is parsed whole.
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, read_input_file(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return parse_error(path + ": is not a serialized ONNX TensorProto");
  return import_one(proto, path, path);
}

Expected<TestValue> read_test_value_file(const std::string& path, TypeCategory category) {
  if (category == TypeCategory::kTensor) {
    SOD2_ASSIGN_OR_RETURN(Tensor t, read_tensor_file(path));
    TestValue v;
    v.tensors.push_back(std::move(t));
    return v;
  }
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, read_input_file(path));
  TestValue v;
  if (category == TypeCategory::kSequence) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return parse_error(path + ": is not a serialized ONNX SequenceProto");
    SOD2_RETURN_IF_ERROR(read_sequence(proto, path, &v));
    return v;
  }
  if (category != TypeCategory::kOptional)
    return unsupported(path + ": test values of type " + std::string(type_category_name(category)) +
                       " are not supported");
  switch (optional_file_kind(bytes)) {
    case OptionalFile::kTensor: return read_test_value_file(path, TypeCategory::kTensor);
    case OptionalFile::kSequence: return read_test_value_file(path, TypeCategory::kSequence);
    case OptionalFile::kOptional: break;
  }
  onnx::OptionalProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return parse_error(path + ": is not a serialized ONNX OptionalProto");
  if (proto.has_tensor_value()) {
    SOD2_ASSIGN_OR_RETURN(Tensor t, import_one(proto.tensor_value(), path, path));
    v.tensors.push_back(std::move(t));
  } else if (proto.has_sequence_value()) {
    SOD2_RETURN_IF_ERROR(read_sequence(proto.sequence_value(), path, &v));
  } else if (proto.elem_type() == onnx::OptionalProto::TENSOR ||
             proto.elem_type() == onnx::OptionalProto::SEQUENCE ||
             proto.elem_type() == onnx::OptionalProto::UNDEFINED) {
    v.has_value = false;
  } else {
    return unsupported(path + ": optionals of element kind " + std::to_string(proto.elem_type()) +
                       " are not supported (only tensors and sequences of tensors)");
  }
  return v;
}

}  // namespace sod2
