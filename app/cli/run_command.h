// `sod2 run MODEL.onnx --test-data DIR [--rtol R] [--atol A] [--threads T] [--range ...]`:
// compiles the model in memory, runs it on a test-data set (input_K.pb) and compares with the
// reference outputs (output_K.pb).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace sod2::cli {

// Returns the process exit status: 0 every output matches, 1 a mismatch or a failure (one line
// on `err`).
int run_run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
