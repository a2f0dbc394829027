#include "core/onnx/opset_changes.h"

#include <array>

namespace sod2::onnx_import {
namespace {

// From the ONNX operator changelog (docs/Changelog.md). Only changes that alter how an existing
// node must be read (attributes moved to inputs, new modes, new semantics) are listed; opsets that
// only widened the accepted element types keep their older reading.
constexpr std::array kChanges = {
    OpsetChange{"ReduceL1", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceL2", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceLogSum", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceLogSumExp", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceMax", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceMean", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceMin", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceProd", 18, "axes moved from an attribute to an input"},
    OpsetChange{"ReduceSumSquare", 18, "axes moved from an attribute to an input"},
    OpsetChange{"Split", 18, "the num_outputs attribute was added"},
    OpsetChange{"Pad", 18, "an axes input was added"},
    OpsetChange{"Resize", 18, "antialias, axes and keep_aspect_ratio_policy were added"},
    OpsetChange{"ScatterElements", 18, "reduction gained max and min"},
    OpsetChange{"ScatterND", 18, "reduction gained max and min"},
    OpsetChange{"LpPool", 18, "ceil_mode and dilations were added"},
    OpsetChange{"OptionalGetElement", 18, "it accepts non-optional inputs"},
    OpsetChange{"OptionalHasElement", 18, "it accepts non-optional inputs"},
    OpsetChange{"AveragePool", 19, "dilations were added"},
    OpsetChange{"Pad", 19, "the wrap mode was added"},
    OpsetChange{"Resize", 19, "coordinate mode half_pixel_symmetric was added"},
    OpsetChange{"Cast", 19, "the saturate attribute was added"},
    OpsetChange{"CastLike", 19, "the saturate attribute was added"},
    OpsetChange{"DFT", 20, "dft_length and axis moved to inputs"},
    OpsetChange{"GridSample", 20, "it was generalised to N-D with new mode names"},
    OpsetChange{"GroupNormalization", 21, "scale and bias became per channel"},
};

}  // namespace

const OpsetChange* change_after(std::string_view op_type, int64_t known_max, int64_t model_opset) {
  for (const OpsetChange& c : kChanges) {
    if (c.op_type == op_type && c.version > known_max && c.version <= model_opset) return &c;
  }
  return nullptr;
}

}  // namespace sod2::onnx_import
