#include "runtime/tensor/sequence.h"

#include <cstring>

namespace sod2::rt {

HostTensor HostTensor::of_sequence(std::shared_ptr<const Sequence> sequence, DType element_dtype) {
  HostTensor h;
  h.dtype_ = element_dtype;
  h.sequence_ = std::move(sequence);
  return h;
}

std::shared_ptr<const Sequence> share_sequence(const Tensor& t) {
  if (!t.sequence) return nullptr;
  if (auto owned = t.sequence->weak_from_this().lock()) return owned;
  return std::make_shared<const Sequence>(*t.sequence);
}

HostTensor own_non_tensor(const Tensor& t) {
  return t.none ? HostTensor::of_none() : HostTensor::of_sequence(share_sequence(t), t.dtype);
}

std::shared_ptr<const HostTensor> copy_tensor(const Tensor& t) {
  auto h = std::make_shared<HostTensor>(t.dtype, t.shape);
  if (t.bytes() > 0) std::memcpy(h->bytes().data(), t.data, t.bytes());
  return h;
}

}  // namespace sod2::rt
