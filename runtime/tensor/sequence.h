// ONNX's sequence values (seq(tensor)): an ordered list of tensors of one element type whose
// shapes may differ. A sequence is immutable once a kernel has produced it, so the ops that
// "modify" one (SequenceInsert, SequenceErase) make a new list sharing the unchanged elements,
// and a Loop carrying a sequence shares it instead of copying its bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/tensor/tensor.h"

namespace sod2::rt {

// The most elements one sequence may hold. Real models keep a handful; the cap bounds what a
// crafted one can make a run allocate and copy (a Loop inserting 10 million empty tensors).
inline constexpr size_t kMaxSequenceElements = size_t{1} << 20;

class Sequence : public std::enable_shared_from_this<Sequence> {
 public:
  explicit Sequence(DType dtype = DType::kUndefined) : dtype_(dtype) {}

  DType dtype() const { return dtype_; }  // of every element; kUndefined: not known yet
  size_t size() const { return items_.size(); }
  const HostTensor& at(size_t i) const { return *items_[i]; }
  // What the sequence holds against a run's memory limit: the elements' bytes (or strings) and
  // each element's bookkeeping, so a long list of empty tensors counts too.
  uint64_t bytes() const {
    uint64_t n = items_.size() * (sizeof(HostTensor) + sizeof(items_[0]));
    for (const auto& t : items_) n += t->bytes().size() + t->strings().size() * sizeof(std::string);
    return n;
  }

  void set_dtype(DType dtype) { dtype_ = dtype; }
  void insert(size_t position, std::shared_ptr<const HostTensor> item) {
    items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(position), std::move(item));
  }
  void push_back(std::shared_ptr<const HostTensor> item) { items_.push_back(std::move(item)); }
  void erase(size_t position) {
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(position));
  }
  // The element's shared storage, for a new sequence that keeps it.
  const std::shared_ptr<const HostTensor>& shared_at(size_t i) const { return items_[i]; }

 private:
  DType dtype_;
  std::vector<std::shared_ptr<const HostTensor>> items_;
};

// `t`'s sequence as shared storage: shared with its owner when a shared_ptr owns it (every
// sequence the session makes), a copy of its element list otherwise (a caller's sequence on the
// stack). Null when `t` is not a sequence.
std::shared_ptr<const Sequence> share_sequence(const Tensor& t);

// A sequence or empty optional `t` as an owned value (the sequence shared, see above).
HostTensor own_non_tensor(const Tensor& t);

// A copy of the tensor `t`'s bytes.
std::shared_ptr<const HostTensor> copy_tensor(const Tensor& t);

}  // namespace sod2::rt
