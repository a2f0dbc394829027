#include "core/onnx/opset_changes.h"

#include <array>

namespace sod2::onnx_import {
namespace {

// From the ONNX operator changelog (docs/Changelog.md), opsets 18 to 23. What this build reads and
// runs at those opsets has left the list: Reduce* with an axes input (18), Split num_outputs (18),
// Pad axes (18) and wrap (19), Resize 18/19, ScatterElements/ScatterND max/min (18), Cast/CastLike
// saturate (19, for the float8 types), AveragePool (19), LpPool (18),
// OptionalGetElement/OptionalHasElement (18), GroupNormalization (18, 21), DFT (20: axis and
// dft_length as inputs), GridSample (20: the kernel takes the new mode names and 5-D inputs, and
// refuses other ranks by name), QuantizeLinear/DequantizeLinear float8 and saturate (19),
// block_size (21) and their output_dtype (21, 23: types the kernels lack are refused by them, by
// name).
constexpr std::array kChanges = {
    OpsetChange{"QuantizeLinear", 23, "the precision attribute was added", "precision"},
};

}  // namespace

const OpsetChange* change_after(std::string_view op_type, int64_t known_max, int64_t model_opset,
                                const SetsAttribute& sets_attribute) {
  for (const OpsetChange& c : kChanges) {
    if (c.op_type != op_type || c.version <= known_max || c.version > model_opset) continue;
    if (!c.attr.empty() && !(sets_attribute && sets_attribute(c.attr, c.harmless))) continue;
    return &c;
  }
  return nullptr;
}

}  // namespace sod2::onnx_import
