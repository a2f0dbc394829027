// Constant tensor contents (initializers, Constant values, attribute tensors), kept as little-endian
// bytes in the element type's natural layout so kernels and packages can use them without decoding.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/ir/data_type.h"

namespace sod2 {

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, DataType dtype, std::vector<int64_t> dims, std::vector<uint8_t> bytes)
      : name_(std::move(name)), dtype_(dtype), dims_(std::move(dims)), bytes_(std::move(bytes)) {}
  Tensor(std::string name, std::vector<int64_t> dims, std::vector<std::string> strings)
      : name_(std::move(name)),
        dtype_(DataType::kString),
        dims_(std::move(dims)),
        strings_(std::move(strings)) {}

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  // Dims are validated non-negative and their product bounded at import, so this cannot overflow.
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  const std::vector<std::string>& strings() const { return strings_; }

  // Element i converted to int64 (integer, bool and float types); nullopt for strings/complex or
  // an index out of range. Used by shape analysis on small shape tensors.
  std::optional<int64_t> int_at(int64_t i) const;
  std::optional<double> double_at(int64_t i) const;

 private:
  std::string name_;
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  std::vector<uint8_t> bytes_;
  std::vector<std::string> strings_;
};

}  // namespace sod2
