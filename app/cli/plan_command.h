// `sod2 plan MODEL.onnx [--bind k=v,...] [--range ...] [--ranges FILE] [--json]`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Returns the process exit status: 0 success, 1 a failure reported as one line on `err`.
int run_plan(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
