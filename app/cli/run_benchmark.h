// `sod2 run MODEL (--bind k=v,... | --inputs DIR) [--runs N] [--warmup K] [--json]`: latency and
// memory of the CPU runtime, measured the way ../shared/bench/ort_bench.js measures ONNX
// Runtime, so the two can be compared (make bench).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/command_line.h"
#include "app/profiling/int_input_ranges.h"
#include "runtime/exec/session.h"

namespace sod2::cli {

struct BenchmarkOptions {
  std::map<std::string, int64_t> bind;
  std::optional<std::string> inputs_dir;
  std::vector<profiling::IntInputRange> int_ranges;  // valued at `bind`
  std::map<std::string, std::string> input_files;    // input -> .npy or TensorProto
  uint32_t seed = 1;
  int runs = 20;
  int warmup = 3;
  bool json = false;
  bool profile = false;    // print where the time goes, per op type and the slowest nodes
  int profile_nodes = 10;  // how many of the slowest nodes; 0: every node
  double load_ms = 0;
};

// Throws std::invalid_argument naming a malformed flag.
BenchmarkOptions benchmark_options_from(const CommandLine& cl);

// The exit status.
int run_benchmark(rt::Session& session, const BenchmarkOptions& options, std::ostream& out,
                  std::ostream& err);

}  // namespace sod2::cli
