// `sod2 run --test-data DIR`: one set of ONNX's test-data layout (input_K.pb, output_K.pb) run
// through a session and compared output by output, sequences and optionals included.
#pragma once

#include <filesystem>
#include <ostream>

#include "runtime/exec/session.h"

namespace sod2::cli {

// Runs the set in `dir`, prints a line per output and a PASS/FAIL summary; the exit status.
int run_test_data(rt::Session& session, const std::filesystem::path& dir, double rtol, double atol,
                  double load_ms, std::ostream& out, std::ostream& err);

}  // namespace sod2::cli
