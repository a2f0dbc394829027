// The memory a node's kernel writes its outputs to (kernel.h's OutputAllocator), for one
// execution of the node: arena views at the planned offsets (checked against the planned size),
// value-buffer ranges for values the plan does not hold, and kernel scratch. Private to the
// session.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "runtime/exec/frame.h"
#include "runtime/exec/session.h"
#include "runtime/tensor/sequence.h"

namespace sod2::rt {

// Hands a node's kernel the memory of its outputs (kernel.h) and kernel scratch.
class NodeOutputs : public OutputAllocator {
 public:
  NodeOutputs(Session* s, Frame* f, const NodeDesc* n) : s_(s), f_(f), n_(n) {}

  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    if (index >= n_->outputs.size() || n_->outputs[index] < 0) {
      // An optional output the model omitted: the kernel still writes it somewhere, into
      // session-owned buffers reused run after run.
      auto& pool = s_->discarded_;
      if (discarded_used_ >= Session::kMaxDiscarded)
        return internal_error("a kernel wrote more than 8 outputs the model omits");
      SOD2_RETURN_IF_ERROR(
          checked_tensor_bytes(dtype, shape, s_->bytes_left_outside_arena()).status());
      HostTensor& h = pool[discarded_used_];
      h.reset(dtype, shape);
      s_->discarded_views_[discarded_used_] = h.view();
      return &s_->discarded_views_[discarded_used_++];
    }
    const int32_t v = n_->outputs[index];
    const ValueDesc& d = f_->graph->values[static_cast<size_t>(v)];
    // Built only on the error paths: the steady state does not allocate.
    auto where = [&] { return "output '" + d.name + "'"; };
    if (d.dtype != DType::kUndefined && d.dtype != dtype) {
      return internal_error(where() + " is " + dtype_name(dtype) + " but the model declares " +
                            dtype_name(d.dtype));
    }
    for (const ExecDim& e : d.exec_dims) {
      if (e.dim >= shape.rank()) return internal_error(where() + " has fewer dims than planned");
      SOD2_RETURN_IF_ERROR(s_->bind_execution_symbol(e.symbol, shape[e.dim], d.name, step()));
    }
    const bool strings = dtype == DType::kString;
    auto checked = checked_tensor_bytes(dtype, shape,
                                        d.storage == ValueStorage::kArena && !strings
                                            ? UINT64_MAX
                                            : s_->bytes_left_outside_arena());
    if (!checked.ok()) return checked.status().with_context(where());
    const size_t bytes = *checked;
    Tensor& t = f_->tensors[static_cast<size_t>(v)];
    if (strings) {
      // std::string objects, never bytes in the arena or the value buffer: the frame owns them
      // until the value's last reader.
      s_->release_value(*f_, static_cast<size_t>(v));
      f_->heap[static_cast<size_t>(v)].reset(dtype, shape);
      return publish_heap(static_cast<size_t>(v));
    }
    if (d.storage == ValueStorage::kArena) {
      const size_t k = static_cast<size_t>(d.arena_tensor);
      const int64_t planned = s_->plan_values_[k];
      if (static_cast<int64_t>(bytes) > planned) {
        return internal_error(where() + " has shape " + shape.to_string() + " (" +
                              std::to_string(bytes) + " bytes) but the memory plan holds " +
                              std::to_string(planned) +
                              " bytes: the model's shapes differ from what RDP derived");
      }
      const int64_t offset = s_->plan_values_[s_->program_.num_arena_tensors + k];
      t = {dtype, shape, s_->arena_->data() + offset};
      if (index < kInlineOutputs) {
        given_base_[index] = s_->arena_->data();
      } else {
        if (more_bases_.size() <= index) more_bases_.resize(n_->outputs.size(), nullptr);
        more_bases_[index] = s_->arena_->data();
      }
    } else {
      // Not in the plan: a range of the value buffer, freed after the value's last reader.
      s_->release_value(*f_, static_cast<size_t>(v));
      const size_t offset = s_->value_offsets_.allocate(bytes);
      const uint64_t left = s_->bytes_left_outside_arena();
      if (offset > left || OffsetAllocator::rounded(bytes) > left - offset) {
        s_->value_offsets_.release(offset, bytes);
        return resource_exhausted(where() + " needs " + std::to_string(bytes) +
                                  " bytes beside values of " + std::to_string(offset) +
                                  " bytes and the arena of " + std::to_string(s_->arena_bytes_) +
                                  ": above the limit of " + std::to_string(s_->max_bytes_) +
                                  " bytes per run (RunLimits::max_bytes)");
      }
      f_->held[static_cast<size_t>(v)] = {static_cast<int64_t>(offset), bytes};
      if (offset + OffsetAllocator::rounded(bytes) <= s_->value_buffer_.capacity()) {
        t = {dtype, shape, s_->value_buffer_.data() + offset};
      } else {
        // The buffer is sized by earlier runs; this run needs more. The heap carries it, and
        // the next run starts with a buffer of this run's high-water mark.
        f_->heap[static_cast<size_t>(v)].reset(dtype, shape);
        t = f_->heap[static_cast<size_t>(v)].view();
      }
    }
    f_->ready[static_cast<size_t>(v)] = 1;
    return &t;
  }

  // The main-graph step of this node, or 0 inside a body (whose writes the lifetimes count at
  // their control-flow node, which this does not know).
  int32_t step() const {
    if (f_->parent) return 0;
    const std::vector<NodeDesc>& nodes = f_->graph->nodes;
    const bool main_node = !nodes.empty() && n_ >= nodes.data() && n_ < nodes.data() + nodes.size();
    return main_node ? static_cast<int32_t>(n_ - nodes.data()) : 0;
  }

  // A sequence or an empty optional: held by the frame (never in the arena or the value buffer,
  // whatever the plan reserved) until the value's last reader.
  Status output_value(size_t index, HostTensor value) override {
    if (index >= n_->outputs.size() || n_->outputs[index] < 0) return Status::ok_status();
    const int32_t v = n_->outputs[index];
    const ValueDesc& d = f_->graph->values[static_cast<size_t>(v)];
    if (value.is_tensor()) return internal_error("output '" + d.name + "' is a tensor");
    const Tensor t = value.view();
    if (t.sequence) {
      if (d.dtype != DType::kUndefined && t.sequence->dtype() != DType::kUndefined &&
          t.sequence->dtype() != d.dtype) {
        return invalid_argument("output '" + d.name + "' is a sequence of " +
                                dtype_name(t.sequence->dtype()) + " but the model declares " +
                                dtype_name(d.dtype));
      }
      // Shared elements count once per sequence: a bound on what one value can hold, so a
      // loop that keeps inserting stops at the run's limit instead of exhausting the machine.
      if (t.sequence->bytes() > s_->bytes_left_outside_arena()) {
        return resource_exhausted(
            "output '" + d.name + "' is a sequence of " + std::to_string(t.sequence->bytes()) +
            " bytes, above what the run may still hold (" +
            std::to_string(s_->bytes_left_outside_arena()) + " bytes, RunLimits::max_bytes)");
      }
    }
    s_->release_value(*f_, static_cast<size_t>(v));
    f_->heap[static_cast<size_t>(v)] = std::move(value);
    publish_heap(static_cast<size_t>(v));
    return Status::ok_status();
  }

  Expected<void*> scratch(size_t bytes) override {
    if (bytes > s_->bytes_left_outside_arena()) {
      return resource_exhausted("a kernel asked for " + std::to_string(bytes) +
                                " bytes of scratch, above what the run may still hold (" +
                                std::to_string(s_->bytes_left_outside_arena()) + " bytes)");
    }
    auto& buf = s_->scratch_;
    // The buffer itself is not 64-aligned: the block starts at the first 64-aligned address at or
    // after the bytes already handed out, and it must fit from there, not from their end.
    auto aligned_offset = [&] {
      const auto base = reinterpret_cast<uintptr_t>(buf.data());
      return static_cast<size_t>(((base + s_->scratch_used_ + 63) & ~uintptr_t{63}) - base);
    };
    if (buf.empty() || aligned_offset() + bytes > buf.size()) {
      if (s_->scratch_used_ == 0) {
        buf.resize(bytes + 64);
      } else {
        // Earlier scratch of this kernel must stay put: this request gets its own block, and
        // the shared buffer grows for the next run.
        extra_.emplace_back(bytes + 64);
        grow_to_ = std::max(grow_to_, s_->scratch_used_ + bytes + 128);
        auto p = reinterpret_cast<uintptr_t>(extra_.back().data());
        return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
      }
    }
    const size_t offset = aligned_offset();
    s_->scratch_used_ = offset + bytes;
    return static_cast<void*>(buf.data() + offset);
  }

  void finish() {
    s_->scratch_used_ = 0;
    if (grow_to_ > s_->scratch_.size()) s_->scratch_.resize(grow_to_);
  }

  // If the arena grew while the kernel ran, the outputs it was handed before the growth were
  // written to a retired block (alive until the run ends): move their bytes to the new one.
  void move_outputs_written_before_growth() {
    for (size_t i = 0; i < n_->outputs.size(); ++i) {
      uint8_t* base =
          i < kInlineOutputs ? given_base_[i] : (i < more_bases_.size() ? more_bases_[i] : nullptr);
      if (!base || base == s_->arena_->data()) continue;
      const int32_t v = n_->outputs[i];
      const ValueDesc& d = f_->graph->values[static_cast<size_t>(v)];
      const size_t k = static_cast<size_t>(d.arena_tensor);
      const int64_t offset = s_->plan_values_[s_->program_.num_arena_tensors + k];
      Tensor& t = f_->tensors[static_cast<size_t>(v)];
      std::memcpy(s_->arena_->data() + offset, base + offset, t.bytes());
      t.data = s_->arena_->data() + offset;
    }
  }

 private:
  // Value v is what the frame's heap holds for it now (strings, a sequence, an empty optional).
  Tensor* publish_heap(size_t v) {
    f_->tensors[v] = f_->heap[v].view();
    f_->ready[v] = 1;
    return &f_->tensors[v];
  }

  Session* s_;
  Frame* f_;
  const NodeDesc* n_;
  size_t discarded_used_ = 0;
  std::vector<std::vector<uint8_t>> extra_;
  size_t grow_to_ = 0;
  // Per output: the arena block its view pointed into (inline for the usual few outputs, so the
  // steady state does not allocate).
  static constexpr size_t kInlineOutputs = 8;
  uint8_t* given_base_[kInlineOutputs] = {};
  std::vector<uint8_t*> more_bases_;
};

}  // namespace sod2::rt
