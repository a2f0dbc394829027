// Runs one kernel outside any model: outputs and scratch on the heap. For kernel tests, which
// compare against straightforward reference implementations.
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt::testing {

class HeapAllocator : public OutputAllocator {
 public:
  explicit HeapAllocator(size_t num_outputs) : outputs(num_outputs), views(num_outputs) {}
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    if (index >= outputs.size()) return internal_error("output index out of range");
    outputs[index] = HostTensor(dtype, shape);
    views[index] = outputs[index].view();
    return &views[index];
  }
  Expected<void*> scratch(size_t bytes) override {
    scratch_.emplace_back(bytes + 64);
    auto p = reinterpret_cast<uintptr_t>(scratch_.back().data());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  std::vector<HostTensor> outputs;
  std::vector<Tensor> views;

 private:
  std::vector<std::vector<uint8_t>> scratch_;
};

// A NodeInfo for `op_type` at `opset` with these inputs (nullptr = omitted) and attributes.
inline NodeInfo node_info(const std::string& op_type, int opset,
                          const std::vector<const HostTensor*>& inputs, size_t num_outputs,
                          Attrs attrs = {}, const std::string& domain = "") {
  NodeInfo n;
  n.name = op_type + "_test";
  n.op_type = op_type;
  n.domain = domain;
  n.opset = opset;
  n.attrs = std::move(attrs);
  for (const HostTensor* t : inputs) {
    n.input_dtypes.push_back(t ? t->dtype() : DType::kUndefined);
    n.input_present.push_back(t != nullptr);
  }
  n.output_dtypes.assign(num_outputs, DType::kUndefined);
  n.num_outputs = num_outputs;
  return n;
}

// Creates the kernel from `registry` (a family's tests register only that family, so they link
// it alone) and runs it once with `threads` threads.
inline Expected<std::vector<HostTensor>> run_kernel(const KernelRegistry& registry,
                                                    const std::string& op_type, int opset,
                                                    const std::vector<const HostTensor*>& inputs,
                                                    size_t num_outputs, Attrs attrs = {},
                                                    int threads = 1,
                                                    const std::string& domain = "") {
  const NodeInfo info = node_info(op_type, opset, inputs, num_outputs, std::move(attrs), domain);
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, registry.create(info));
  std::vector<Tensor> views;
  for (const HostTensor* t : inputs) views.push_back(t ? t->view() : Tensor{});
  std::vector<const Tensor*> ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) ptrs.push_back(inputs[i] ? &views[i] : nullptr);
  HeapAllocator alloc(num_outputs);
  ThreadPool pool(threads);
  KernelContext ctx(ptrs, &alloc, &pool);
  SOD2_RETURN_IF_ERROR(kernel->run(ctx));
  return std::move(alloc.outputs);
}

// A tensor from values, converted to T.
template <typename T>
HostTensor make_tensor(DType dtype, Shape shape, const std::vector<T>& values) {
  HostTensor t(dtype, shape);
  // memcpy from an empty vector's null data() is UB even for 0 bytes (UBSan flags it).
  if (!values.empty()) {
    std::memcpy(t.bytes().data(), values.data(),
                std::min(t.bytes().size(), values.size() * sizeof(T)));
  }
  return t;
}

inline AttrValue attr_int(int64_t v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kInt;
  a.i = v;
  return a;
}
inline AttrValue attr_float(float v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kFloat;
  a.f = v;
  return a;
}
inline AttrValue attr_string(std::string v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline AttrValue attr_ints(std::vector<int64_t> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
inline AttrValue attr_floats(std::vector<float> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

}  // namespace sod2::rt::testing
