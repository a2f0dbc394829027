// `sod2 compile MODEL.onnx -o MODEL.sod2 [--range k=lo:hi[:multiple],...] [--ranges FILE]`:
// compiles the model (RDP under the ranges, memory plan) and writes the deployable package a
// device runs (runtime/package/FORMAT.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Returns the process exit status: 0 the package was written, 1 a failure (one line on `err`).
int run_compile(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
