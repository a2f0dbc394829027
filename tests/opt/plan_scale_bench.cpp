// `plan_scale_bench [NODES...]`: how compile time, and the memory planner's share of it, grows
// on synthetic transformer-like graphs (default 20,000 and 50,000 nodes, the studio's ranges).
// Prints each stage's milliseconds and a digest of the plan text, so that a planner change that
// must not move any offset can be checked on graphs too big for a golden file. A program, not a
// test: ctest never times anything.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "../bench/synthetic_models.h"
#include "core/onnx/onnx_import.h"
#include "core/opt/plan_text.h"
#include "core/pipeline/compiled_model.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sod2;
  std::vector<int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoll(argv[i]));
  if (sizes.empty()) sizes = {20000, 50000};
  std::printf(
      "| nodes | tensors | compile ms | planning memory ms | plan digest |\n"
      "|---:|---:|---:|---:|---|\n");
  for (int64_t n : sizes) {
    const std::string bytes = bench::transformer_like(n).SerializeAsString();
    auto model = import_onnx_bytes(
        std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "", "synthetic");
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().message().c_str());
      return 1;
    }
    pipeline::CompileOptions options;  // as the studio opens it (studio_open_bench)
    options.rdp.ranges["batch"] = {1, 16, 1};
    options.rdp.ranges["seq"] = {1, 512, 1};
    std::string stage;
    Clock::time_point stage_start;
    double planning_ms = 0;
    options.progress = [&](double, const char* name) {
      if (stage == "planning memory") planning_ms = ms_since(stage_start);
      stage = name;
      stage_start = Clock::now();
      return Status::ok_status();
    };
    const auto t0 = Clock::now();
    auto compiled = pipeline::compile(std::move(*model), options);
    const double compile_ms = ms_since(t0);
    if (!compiled.ok()) {
      std::fprintf(stderr, "%s\n", compiled.status().message().c_str());
      return 1;
    }
    const std::string text = opt::symbolic_plan_text(compiled->graph(), compiled->plan);
    std::printf("| %lld | %zu | %.0f | %.0f | %016zx |\n", static_cast<long long>(n),
                compiled->plan.lives.size(), compile_ms, planning_ms,
                std::hash<std::string>{}(text));
  }
  return 0;
}
