// One step's recurrent product of LSTM and GRU for a few batch rows: gh[b, g*H + j] =
// sum_k h[b, k] * R[g*H + j, k], on R packed once per run (at load when R is a constant) so
// that every step streams it in the order the product reads it.
//
// R is cut into blocks of kRecurrentUnits hidden units; a block holds those units' rows of every
// gate, k-major (block[k][gate][unit]). A thread that owns a range of blocks computes every gate
// of its units, so it can run the cell on them at once (rnn_cells.h) without waiting for the other
// threads, and it reads the same part of R every step, which stays in its core's cache. On the
// corpus's lstm_lm (2 layers of 256 units, 16 steps, 2 threads) against oneDNN's sgemm per step
// and the cell after it: 1.71-1.85 -> 1.20 ms at batch 8, 0.41-0.43 -> 0.35-0.38 ms at batch 1.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "runtime/kernels/linalg/rnn_common.h"
#include "runtime/threads/thread_pool.h"

namespace sod2::rt {

inline constexpr int64_t kRecurrentUnits = 16;

struct PackedRecurrence {
  const float* data = nullptr;  // [block][k][gate][kRecurrentUnits], units past hidden zero
  int gates = 0;
  int64_t hidden = 0;
  int64_t blocks() const { return (hidden + kRecurrentUnits - 1) / kRecurrentUnits; }
};

// Floats pack_recurrence writes.
int64_t packed_recurrence_floats(int gates, int64_t hidden);

// Packs R of one direction ([gates * hidden, hidden], row-major) into `out`. gates is 3 or 4.
void pack_recurrence(const float* r, int gates, int64_t hidden, float* out);

// R of each direction packed once and kept from run to run, for a kernel whose R is a constant
// (the same tensor at the same address every run); packed again if the address changes.
class PackedRecurrenceCache {
 public:
  const float* get(const float* r_d, int d, int dirs, int gates, int64_t hidden);
  // At load (Kernel::prepare): every direction of a constant R ([dirs, gates * hidden, hidden]),
  // so that the first run neither packs nor faults in the packed copy's pages. An R of another
  // shape is left to the run, which reports it.
  void prepare(const Tensor* r, int dirs, int gates, int64_t hidden);

 private:
  std::vector<float> packed_;                  // every direction's part
  std::array<const float*, 2> packed_from_{};  // the R each part was packed from
};

// For units [block0, block1) * kRecurrentUnits (clipped to hidden) of every gate: rows [0, batch)
// of h (row stride hidden) times R^T into gh (row stride ldc, gate g at column g * hidden).
void recurrent_block_product(const PackedRecurrence& r, const float* h, int64_t batch,
                             int64_t block0, int64_t block1, float* gh, int64_t ldc);

// The steps of one direction d. Each step is one parallel region: a thread owns a range of unit
// blocks, multiplies them into gh (row stride gates * hidden) and runs
// cell(b, t, j0, n, h_prev, h_next) on units [j0, j0 + n) of every entry b still inside its
// sequence (t: the input step it reads; h_prev and h_next point at the entry's unit j0). The
// cell writes h_next, not h, which the other threads' products read until the step ends; entries
// past their length carry h over. Y (layout 0, may be null) gets each new h. On return h holds
// the last state. Without `split` the steps run on the calling thread alone (inside a
// parallel_for that runs the two directions at once).
template <class Cell>
void run_recurrence(ThreadPool& pool, const RnnShape& s, const PackedRecurrence& pr,
                    const int64_t* lens, bool rev, int d, float*& h, float*& h_next, float* gh,
                    float* y, const Cell& cell, bool split = true) {
  const int64_t H = s.hidden, B = s.batch, G = pr.gates * H, blocks = pr.blocks();
  // Split only when R is large enough that each core keeping its part in cache pays for the
  // step's synchronisation.
  const int64_t r_bytes = G * H * static_cast<int64_t>(sizeof(float));
  const int64_t parts = split && pool.num_threads() > 1 && r_bytes >= (int64_t{256} << 10)
                            ? std::min<int64_t>(pool.num_threads(), blocks)
                            : 1;
  for (int64_t step = 0; step < s.seq; ++step) {
    auto part = [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t b0 = p * blocks / parts, b1 = (p + 1) * blocks / parts;
        recurrent_block_product(pr, h, B, b0, b1, gh, G);
        const int64_t j0 = b0 * kRecurrentUnits, n = std::min(H, b1 * kRecurrentUnits) - j0;
        for (int64_t b = 0; b < B; ++b) {
          const float* hp = h + b * H + j0;
          float* hn = h_next + b * H + j0;
          if (step >= lens[b]) {
            std::memcpy(hn, hp, static_cast<size_t>(n) * sizeof(float));
            continue;
          }
          const int64_t t = rev ? lens[b] - 1 - step : step;
          cell(b, t, j0, n, hp, hn);
          if (y)
            std::memcpy(y + ((t * s.dirs + d) * B + b) * H + j0, hn,
                        static_cast<size_t>(n) * sizeof(float));
        }
      }
    };
    if (parts > 1)
      pool.parallel_for(parts, 1, part);
    else
      part(0, 1);
    std::swap(h, h_next);
  }
}

}  // namespace sod2::rt
