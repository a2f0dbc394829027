#include <filesystem>

#include "core/onnx/onnx_import.h"
#include "core/onnx/tensor_import.h"
#include "core/status/input_file.h"

namespace sod2 {

Expected<Tensor> read_tensor_file(const std::string& path) {
  // Bounded by protobuf's own limit: a TensorProto is parsed whole.
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, read_input_file(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return parse_error(path + ": is not a serialized ONNX TensorProto");
  onnx_import::TensorSource source;
  source.base_dir = std::filesystem::path(path).parent_path().string();
  if (source.base_dir.empty()) source.base_dir = ".";
  try {
    return onnx_import::import_tensor(proto, source, path);
  } catch (const std::bad_alloc&) {
    return unsupported(path + ": ran out of memory while reading the tensor");
  }
}

}  // namespace sod2
