#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/onnx/onnx_import.h"
#include "core/onnx/tensor_import.h"

namespace sod2 {

Expected<Tensor> read_tensor_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found(path + ": cannot open tensor file");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    return parse_error(path + ": is not a serialized ONNX TensorProto");
  onnx_import::TensorSource source;
  source.base_dir = std::filesystem::path(path).parent_path().string();
  try {
    return onnx_import::import_tensor(proto, source, path);
  } catch (const std::bad_alloc&) {
    return unsupported(path + ": ran out of memory while reading the tensor");
  }
}

}  // namespace sod2
