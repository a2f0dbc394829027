// `sod2 sweep MODEL.onnx --sym NAME=lo:hi[:step] [--bind k=v,...] [--range ...] [--json]`: the
// memory plan as a curve of one input symbol, the others held at --bind.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Returns the process exit status: 0 success (points that cannot be planned are part of the
// curve, with their reason), 1 a failure reported as one line on `err`.
int run_sweep(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
