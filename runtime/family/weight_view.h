// A family weight stored as a view of another (FORMAT.md §Family packages): a window of a stored
// base tensor, optionally times a float32 scale per index along one axis, corrected element by
// element to the exact bits the variant's model had. The package writer encodes with the same
// functions the loader decodes with, and keeps a view only after decoding it back bit for bit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/status/status.h"
#include "runtime/tensor/tensor.h"

namespace sod2::rt {

// Residual codes, 2 bits per element (element i in byte i/4 at bit 2*(i%4)).
enum class ResidualCode : uint8_t {
  kExact = 0,   // the product as computed
  kUp = 1,      // the next float32 towards +inf
  kDown = 2,    // the next float32 towards -inf
  kEscape = 3,  // the next value of the escape list, as raw bits
};

struct WeightView {
  Shape dims;                         // of the result
  int64_t offsets[kMaxRank] = {};     // window start in the base, per dim
  int scale_axis = -1;                // -1: a plain window
  std::span<const float> scales;      // dims[scale_axis] values
  std::span<const uint8_t> residual;  // empty: every code kExact
  std::span<const uint32_t> escapes;
};

// Checks the view against its base: rank, window inside the base, scale axis and lengths, and
// the number of escape codes against the escape list. `what` names the weight in errors.
Status check_weight_view(const WeightView& view, const Tensor& base, const std::string& what);

// check_weight_view without the escape count, which reads every residual code: a loader checks
// the layout of every view first, and counts escapes only for views it has decided to build.
Status check_weight_view_layout(const WeightView& view, const Tensor& base,
                                const std::string& what);
Status check_weight_view_escapes(const WeightView& view, const std::string& what);

// The byte offset of the window in the base when it is one contiguous run of the base (a plain
// window of leading channels, say) so it can be used in place; -1 otherwise.
int64_t contiguous_window_offset(const WeightView& view, const Tensor& base);

// Writes the view's elements (row-major, dims) to `out`, which holds view.dims.numel() elements
// of the base's dtype. The view must have passed check_weight_view.
void materialize_weight_view(const WeightView& view, const Tensor& base, void* out);

// 2-bit residual codes packed as above.
inline ResidualCode residual_code(std::span<const uint8_t> residual, int64_t i) {
  if (residual.empty()) return ResidualCode::kExact;
  return static_cast<ResidualCode>((residual[static_cast<size_t>(i >> 2)] >> ((i & 3) * 2)) & 3);
}
inline void set_residual_code(std::vector<uint8_t>& residual, int64_t i, ResidualCode c) {
  residual[static_cast<size_t>(i >> 2)] |=
      static_cast<uint8_t>(static_cast<uint8_t>(c) << ((i & 3) * 2));
}

}  // namespace sod2::rt
