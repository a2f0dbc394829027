// TensorProto / SparseTensorProto → sod2::Tensor, with every size checked against the bytes present.
#pragma once

#include <string>

#include "core/ir/tensor.h"
#include "core/status/status.h"
#include "onnx/onnx_pb.h"

namespace sod2::onnx_import {

struct TensorSource {
  std::string base_dir;  // folder external data paths are relative to; empty refuses external data
  bool load_external_data = true;
};

// `what` names the tensor's place in messages ("initializer 'w'", "node 'c1' attribute 'value'").
Expected<Tensor> import_tensor(const onnx::TensorProto& proto, const TensorSource& source,
                               const std::string& what);
Expected<Tensor> import_sparse_tensor(const onnx::SparseTensorProto& proto,
                                      const TensorSource& source, const std::string& what);

}  // namespace sod2::onnx_import
