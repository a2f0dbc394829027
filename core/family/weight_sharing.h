// Which weights of a family of programs are stored once (Dynamic-OFA sub-networks of one
// supernet): identical tensors are deduplicated, and a tensor that equals a window of a larger
// stored one (leading channels, a centred kernel crop), possibly times a float32 scale per output
// channel (folded BatchNorm statistics), becomes a view of it (runtime/family/weight_view.h).
// Nothing is assumed from names or graph positions: every view is found by comparing bytes, and
// kept only after decoding it back with the runtime's own decoder gives the original bits.
#pragma once

#include <cstdint>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::family {

struct SharedWeight {
  bool stored = true;
  rt::Tensor tensor;  // the original (its bytes, when stored, go to the package as they are)
  // A view (stored == false): of weights[base], window at `offsets`, and for a scaled view the
  // scale per index along `scale_axis`, the 2-bit residual codes and the escaped values.
  uint32_t base = 0;
  std::vector<int64_t> offsets;
  int scale_axis = -1;
  std::vector<float> scales;
  std::vector<uint8_t> residual;  // empty: every element is the product as computed
  std::vector<uint32_t> escapes;
};

struct WeightSharingStats {
  size_t constants = 0;  // over all programs
  size_t identical = 0;  // reused an existing weight as it is
  size_t windows = 0;    // views without a scale
  size_t scaled = 0;     // views with a scale
  size_t stored = 0;
  uint64_t constant_bytes = 0;  // of all programs' constants, as if stored separately
  uint64_t stored_bytes = 0;    // of the stored weights
  uint64_t view_bytes = 0;      // scales, residuals and escapes of the views
  uint64_t escapes = 0;         // elements stored as escapes
};

struct WeightSharingPlan {
  std::vector<SharedWeight> weights;  // a view's base always comes before it
  // Per program (in the order given), per constant: its index in `weights`.
  std::vector<std::vector<uint32_t>> constant_weights;
  WeightSharingStats stats;
};

struct WeightSharingOptions {
  // Tensors smaller than this are stored without looking for a base (nothing to gain).
  int64_t min_view_elements = 64;
  // A scaled view is kept only when its scales, residual and escapes take at most this fraction
  // of the tensor's own bytes.
  double max_view_cost = 0.35;
};

// Constants are visited largest first across all programs (ties: the program with the most
// constant bytes first), so the supernet's weights become the bases. The plan refers to the programs' constant bytes: keep them alive while it is
// used.
Expected<WeightSharingPlan> plan_weight_sharing(const std::vector<const rt::ProgramDesc*>& programs,
                                                const WeightSharingOptions& options = {});

}  // namespace sod2::family
