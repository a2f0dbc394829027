// ONNX import: a ModelProto (file or bytes) becomes a validated sod2::Model. Everything a hostile
// or broken file can do (truncation, cycles, dangling names, wrong attribute types, absurd dims,
// bad external data paths) comes back as a Status naming the file and the node; nothing throws.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/status/status.h"

namespace sod2 {

struct ImportOptions {
  // Refuse files larger than this before reading them (protobuf cannot parse beyond 2 GiB anyway;
  // larger models keep their weights in external data files).
  uint64_t max_model_bytes = uint64_t{2} << 30;
  // Read external data files. Off gives metadata-only import (initializer contents left empty).
  bool load_external_data = true;
};

// The largest default-domain opset whose operator definitions the linked libonnx knows.
int64_t max_known_onnx_opset();

Expected<Model> import_onnx_file(const std::string& path, const ImportOptions& options = {});

// `base_dir` resolves external data (empty: external data is refused); `display_name` is used in
// messages in place of a file name.
Expected<Model> import_onnx_bytes(std::span<const uint8_t> bytes, const std::string& base_dir,
                                  const std::string& display_name,
                                  const ImportOptions& options = {});

}  // namespace sod2

namespace sod2 {

// Reads one serialized TensorProto (the ONNX test-data layout: test_data_set_N/input_K.pb).
Expected<Tensor> read_tensor_file(const std::string& path);

// One value of the test-data layout of the given category: a TensorProto for a tensor, a
// SequenceProto of tensors for a sequence, an OptionalProto (of a tensor or a sequence of
// tensors) for an optional. The file itself does not say which: the model's type of the value
// does.
struct TestValue {
  TypeCategory category = TypeCategory::kTensor;  // kTensor or kSequence once read
  bool has_value = true;                          // false: an optional holding nothing
  std::vector<Tensor> tensors;                    // the tensor, or the sequence's elements
};
Expected<TestValue> read_test_value_file(const std::string& path, TypeCategory category);

}  // namespace sod2
