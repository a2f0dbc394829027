// Runs one kernel with some of its tensors channel-blocked (kernel.h, BlockedIo), for the kernel
// tests of the families that take blocked values: the blocked copies come from a reference
// transpose of the test's own, not from the runtime's.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "tests/runtime/kernel_harness.h"

namespace sod2::rt::testing {

// [N, C, ...] as [N, C / block, ..., block] when to_blocked, else back; where C is not a
// multiple of block, the last block holds C % block channels per position (kernel.h).
inline HostTensor convert_blocked(const HostTensor& t, int block, bool to_blocked) {
  const Shape& s = t.shape();
  HostTensor out(DType::kFloat, s);
  const int64_t n = s[0], c = s[1], plane = s.numel() / (n * c);
  const float* x = t.data<float>();
  float* y = out.data<float>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t nchw = (i * c + ch) * plane + p;
        const int64_t first = ch / block * block, width = std::min<int64_t>(block, c - first);
        const int64_t blocked = (i * c + first) * plane + p * width + ch % block;
        if (to_blocked)
          y[blocked] = x[nchw];
        else
          y[nchw] = x[blocked];
      }
  return out;
}

struct Held {
  uint64_t inputs = 0;  // input slots that arrive blocked
  bool output = false;  // output 0 is written blocked
};

// Creates the node's kernel from `registry` and runs it once with `threads` threads:
// `constants` (a bit per input slot) go to prepare(), the slots of held.inputs arrive blocked
// and output 0 is read back from blocked when held.output. Returns output 0 as NCHW; *offered
// gets what the kernel offered. Holding more than it offered is an error.
inline Expected<HostTensor> run_held(const KernelRegistry& registry, const NodeInfo& info,
                                     const std::vector<const HostTensor*>& inputs,
                                     uint64_t constants, int block, Held held, int threads,
                                     BlockedIo* offered = nullptr) {
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k, registry.create(info));
  std::vector<HostTensor> blocked(inputs.size());
  std::vector<Tensor> views(inputs.size());
  std::vector<const Tensor*> ptrs(inputs.size(), nullptr), consts(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    const bool is_held = (held.inputs >> i) & 1;
    if (is_held) blocked[i] = convert_blocked(*inputs[i], block, true);
    views[i] = is_held ? blocked[i].view() : inputs[i]->view();
    ptrs[i] = &views[i];
    if ((constants >> i) & 1) consts[i] = &views[i];
  }
  SOD2_RETURN_IF_ERROR(k->prepare(consts));
  const BlockedIo io = k->blocked_io(block);
  if (offered) *offered = io;
  if ((held.inputs & ~io.inputs) != 0 || (held.output && !io.output))
    return internal_error("the test holds more than the kernel offered");
  if (held.inputs != 0 || held.output) k->use_blocked(block, held.inputs, held.output);
  HeapAllocator alloc(info.num_outputs);
  ThreadPool pool(threads);
  KernelContext ctx(ptrs, &alloc, &pool);
  SOD2_RETURN_IF_ERROR(k->run(ctx));
  return held.output ? convert_blocked(alloc.outputs[0], block, false)
                     : std::move(alloc.outputs[0]);
}

}  // namespace sod2::rt::testing
