// Helpers shared by the linalg kernels: dtype checks, attribute reading, per-thread scratch.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/kernels/kernel.h"

namespace sod2::rt {

// "Conv: dtype int32 of input X is not supported (float32 only)".
Status unsupported_dtype(const char* op, const char* input, DType t);
// Checks that every present input of the node is float32 (at creation time).
Status require_float_inputs(const NodeInfo& node);

// a rounded up to a multiple of b (b > 0, a >= 0): scratch sizes and offsets in whole vectors.
inline int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

// Reads an int attribute into *out, or returns the error (for use in factories).
#define SOD2_ATTR(out, expr)                          \
  do {                                                \
    auto sod2_attr_ = (expr);                         \
    if (!sod2_attr_.ok()) return sod2_attr_.status(); \
    out = std::move(sod2_attr_).value();              \
  } while (0)

// Slices of one scratch buffer, one per concurrently running parallel_for chunk: at most
// num_threads() chunks run at once, so a free slice always exists.
class ScratchSlots {
 public:
  static constexpr int kMaxSlots = 256;
  ScratchSlots(float* base, int64_t slot_floats, int slots)
      : base_(base), slot_floats_(slot_floats), slots_(slots < kMaxSlots ? slots : kMaxSlots) {
    for (auto& f : busy_) f.store(false, std::memory_order_relaxed);
  }
  // Slot count a pool needs.
  static int count(const ThreadPool& pool) {
    return pool.num_threads() < kMaxSlots ? pool.num_threads() : kMaxSlots;
  }
  // A thread starts with the slot of its index in the pool (ThreadPool::this_thread_index), so
  // from job to job each thread keeps the buffer its core has cached.
  int acquire() {
    const int first = slots_ > 0 ? ThreadPool::this_thread_index() % slots_ : 0;
    for (;;) {
      for (int k = 0; k < slots_; ++k) {
        const int i = (first + k) % slots_;
        bool expected = false;
        if (!busy_[i].load(std::memory_order_relaxed) &&
            busy_[i].compare_exchange_strong(expected, true, std::memory_order_acquire))
          return i;
      }
    }
  }
  void release(int i) { busy_[i].store(false, std::memory_order_release); }
  float* data(int i) const { return base_ + slot_floats_ * i; }

  // pool.parallel_for over [0, items), each chunk running f(i0, i1, slot) with a slot held.
  template <typename F>
  void parallel_for(ThreadPool& pool, int64_t items, int64_t grain, const F& f) {
    pool.parallel_for(items, grain, [&](int64_t i0, int64_t i1) {
      const int slot = acquire();
      f(i0, i1, data(slot));
      release(slot);
    });
  }

 private:
  float* base_;
  int64_t slot_floats_;
  int slots_;
  std::array<std::atomic<bool>, kMaxSlots> busy_;
};

// Scratch for `count` floats (at least one, so a zero-sized job still gets a valid pointer).
Expected<float*> scratch_floats(KernelContext& ctx, int64_t count);

// Work items [0, items) of a slot kernel over the pool: each chunk runs run(job, i0, i1, slot)
// with a slot of slot_floats floats of the kernel's scratch (ScratchSlots), `run` being the
// kernel body of the CPU's SIMD level (simd::items_for picks it).
template <class Job>
Status run_in_slots(KernelContext& ctx, int64_t items, int64_t grain, int64_t slot_floats,
                    const Job& job, void (*run)(const Job&, int64_t, int64_t, float*)) {
  ThreadPool& pool = ctx.pool();
  const int slots = ScratchSlots::count(pool);
  SOD2_ASSIGN_OR_RETURN(float* base, scratch_floats(ctx, slots * slot_floats));
  ScratchSlots slot_set(base, slot_floats, slots);
  slot_set.parallel_for(pool, items, grain,
                        [&](int64_t i0, int64_t i1, float* slot) { run(job, i0, i1, slot); });
  return Status::ok_status();
}

// Broadcasts two shapes numpy-style; false when incompatible.
bool broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b,
                      std::vector<int64_t>* out);

std::string dims_string(std::span<const int64_t> dims);

}  // namespace sod2::rt
