// `make bench` part 5: the Vulkan backend against the CPU runtime on every model of the corpus,
// in the same run, on each model's first test_data_set (its reference inputs). Per model: the
// median latency on each, the device's dispatches against the kernel launches the CPU runtime
// makes, the CPU kernels left in the Vulkan session (and the syncs they force), the uploads, and
// whether the outputs match the reference. On a machine without a GPU the device is Mesa's
// lavapipe: the figures are about correctness and overheads, not GPU speed. Prints a markdown
// table and writes build/bench/vulkan.json.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "../opt/corpus.h"
#include "app/cli/output_compare.h"
#include "core/onnx/onnx_import.h"
#include "core/pipeline/compiled_model.h"
#include "runtime/exec/session.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/vulkan/vulkan_backend.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using sod2::Expected;

struct Timing {
  double median_ms = 0, first_ms = 0;
  bool matches = true;
};

Expected<Timing> time_session(sod2::rt::Session& s, const std::vector<sod2::rt::Tensor>& inputs,
                              const std::vector<sod2::rt::HostTensor>& expected, int runs) {
  Timing t;
  auto t0 = Clock::now();
  auto first = s.run(inputs);
  t.first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!first.ok()) return first.status();
  for (size_t i = 0; i < expected.size() && i < first->size(); ++i)
    t.matches =
        t.matches && sod2::cli::compare_tensors((*first)[i], expected[i].view(), 1e-3, 1e-4).ok();
  for (int w = 0; w < 2; ++w) {
    auto r = s.run(inputs);
    if (!r.ok()) return r.status();
  }
  if (s.backend()) s.backend()->reset_counters();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    t0 = Clock::now();
    auto r = s.run(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r.ok()) return r.status();
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  t.median_ms = ms[ms.size() / 2];
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const fs::path models = argc > 1 ? argv[1] : SOD2_SHARED_DIR "/models";
  const fs::path out_dir = argc > 2 ? argv[2] : "build/bench";
  const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
  const int runs = 10;
  auto corpus = sod2::testing::read_corpus(models);
  if (!corpus.ok()) {
    std::cerr << "vulkan_bench: " << corpus.status().message() << "\n";
    return 1;
  }
  auto context = sod2::rt::vk::VulkanContext::create({});
  if (!context.ok()) {
    std::cout << "## Vulkan backend\n\nskipped: " << context.status().message() << "\n";
    return 0;
  }
  const auto& device = (*context)->info();
  std::cout << "## Vulkan backend on " << device.name << " (" << device.type << ", Vulkan "
            << device.api << ") against the CPU runtime, " << threads << " threads, median of "
            << runs << " runs on test_data_set_0\n\n";
  std::cout << "| model | CPU ms | Vulkan ms | Vulkan/CPU | dispatches | CPU launches (CPU-only "
               "run) | CPU kernels left | syncs | uploads | upload KiB | match |\n";
  std::cout << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|\n";
  nlohmann::json report;
  report["device"] = device.name;
  report["device_type"] = device.type;
  int failures = 0;
  for (const auto& m : *corpus) {
    const fs::path set = m.file.parent_path() / "test_data_set_0";
    auto inputs = sod2::testing::read_test_data(set, "input_");
    auto expected = sod2::testing::read_test_data(set, "output_");
    auto model = sod2::import_onnx_file(m.file.string());
    if (!inputs.ok() || !expected.ok() || !model.ok()) {
      std::cerr << "vulkan_bench: " << m.name << ": cannot read the model or its test data\n";
      ++failures;
      continue;
    }
    sod2::pipeline::CompileOptions options;
    options.rdp = m.options;
    options.target = sod2::pipeline::Target::kVulkan;
    auto program = sod2::pipeline::compile_program(*model, options);
    if (!program.ok()) {
      std::cerr << "vulkan_bench: " << m.name << ": " << program.status().message() << "\n";
      ++failures;
      continue;
    }
    std::vector<sod2::rt::Tensor> views;
    for (const auto& h : *inputs) views.push_back(h.view());
    auto cpu = sod2::rt::Session::create(*program, sod2::rt::KernelRegistry::standard(), {threads});
    auto backend = sod2::rt::vk::VulkanBackend::create(*context);
    if (!cpu.ok() || !backend.ok()) {
      std::cerr << "vulkan_bench: " << m.name << ": cannot create the sessions\n";
      ++failures;
      continue;
    }
    sod2::rt::SessionOptions vk_options;
    vk_options.threads = threads;
    vk_options.backend = *backend;
    auto gpu =
        sod2::rt::Session::create(*program, sod2::rt::KernelRegistry::standard(), vk_options);
    if (!gpu.ok()) {
      std::cerr << "vulkan_bench: " << m.name << ": " << gpu.status().message() << "\n";
      ++failures;
      continue;
    }
    auto tc = time_session(**cpu, views, *expected, runs);
    auto tg = time_session(**gpu, views, *expected, runs);
    if (!tc.ok() || !tg.ok()) {
      std::cerr << "vulkan_bench: " << m.name << ": "
                << (tc.ok() ? tg.status() : tc.status()).message() << "\n";
      ++failures;
      continue;
    }
    const sod2::rt::BackendCounters& c = (*backend)->counters();
    const double per = runs;
    const size_t cpu_launches = (*cpu)->program().graphs[0].nodes.size();
    std::cout << "| " << m.name << " | " << std::fixed << std::setprecision(2) << tc->median_ms
              << " | " << tg->median_ms << " | " << tg->median_ms / tc->median_ms << " | "
              << std::setprecision(0) << c.dispatches / per << " | " << cpu_launches << " | "
              << c.cpu_kernels / per << " | " << c.syncs / per << " | " << c.uploads / per << " | "
              << std::setprecision(1) << c.upload_bytes / per / 1024.0 << " | "
              << (tg->matches && tc->matches ? "yes" : "NO") << " |\n";
    failures += !(tg->matches && tc->matches);
    report["models"].push_back({{"model", m.name},
                                {"cpu_median_ms", tc->median_ms},
                                {"vulkan_median_ms", tg->median_ms},
                                {"vulkan_first_run_ms", tg->first_ms},
                                {"dispatches_per_run", c.dispatches / per},
                                {"cpu_kernel_launches_cpu_only", cpu_launches},
                                {"cpu_kernels_per_run", c.cpu_kernels / per},
                                {"syncs_per_run", c.syncs / per},
                                {"uploads_per_run", c.uploads / per},
                                {"upload_bytes_per_run", c.upload_bytes / per},
                                {"runtime_fallbacks_per_run", c.runtime_fallbacks / per},
                                {"matches_reference", tg->matches}});
  }
  std::cout << "\nCPU launches: the main-graph kernels the CPU runtime runs per run. Dispatches "
               "and CPU kernels left: the Vulkan session's per run; each run of CPU kernels "
               "between dispatches costs a sync (submit and wait).\n";
  fs::create_directories(out_dir);
  std::ofstream(out_dir / "vulkan.json") << report.dump(1) << "\n";
  return failures ? 1 : 0;
}
