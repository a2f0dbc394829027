// `make bench` part 1: RDP's precision against libonnx's shape inference on every model of the
// corpus, and RDP's speed on synthetic transformer-like graphs of 1k, 10k and 50k nodes.
// Prints markdown tables and writes build/bench/rdp.json.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/onnx/onnx_import.h"
#include "core/onnx/onnx_shape_io.h"
#include "core/rdp/rdp.h"
#include "core/rdp/rdp_summary.h"
#include "synthetic_models.h"

namespace {

using Clock = std::chrono::steady_clock;
using sod2::RdpOptions;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

template <typename F>
double median_ms(int runs, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(ms_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int precision_table(const std::filesystem::path& models, nlohmann::json* out) {
  std::ifstream in(models / "models.json");
  if (!in) {
    std::cerr << "rdp_bench: no models.json under " << models << "\n";
    return 1;
  }
  const auto manifest = nlohmann::json::parse(in);
  std::cout << "## RDP vs libonnx shape inference (unknown = unknown dims + dims of unknown-rank "
               "values)\n\n"
            << "| model | values | dims | RDP unknown dims | RDP unknown ranks | RDP execution dims"
               " | RDP assumptions | libonnx unknown dims | libonnx unknown ranks | RDP ms |\n"
            << "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& e : manifest) {
    const std::string file = (models / e["file"].get<std::string>()).string();
    auto model = sod2::import_onnx_file(file);
    if (!model.ok()) {
      std::cerr << model.status().message() << "\n";
      return 1;
    }
    RdpOptions options;
    for (const auto& [name, r] : e["ranges"].items())
      options.ranges[name] = *sod2::sym::SymbolRange::from_step(r[0], r[1], r[2]);
    std::optional<sod2::RdpResult> rdp;
    const double ms = median_ms(5, [&] { rdp.emplace(*sod2::run_rdp(*model, options)); });
    const auto s = sod2::summarize_rdp(*model, *rdp);
    auto onnx = sod2::onnx_inference_counts(file);
    if (!onnx.ok()) {
      std::cerr << onnx.status().message() << "\n";
      return 1;
    }
    std::cout << "| " << e["name"].get<std::string>() << " | " << s.values_total << " | "
              << s.dims_total << " | " << s.dims_unknown << " | " << s.rank_unknown << " | "
              << s.dims_execution << " | " << s.assumptions << " | " << onnx->dims_unknown
              << " | " << onnx->rank_unknown << " | " << std::fixed << std::setprecision(2) << ms
              << " |\n";
    (*out)["models"].push_back({{"name", e["name"]},
                                {"values", s.values_total},
                                {"dims", s.dims_total},
                                {"rdp_dims_unknown", s.dims_unknown},
                                {"rdp_rank_unknown", s.rank_unknown},
                                {"rdp_dims_execution", s.dims_execution},
                                {"rdp_assumptions", s.assumptions},
                                {"onnx_dims_unknown", onnx->dims_unknown},
                                {"onnx_rank_unknown", onnx->rank_unknown},
                                {"onnx_dims_total", onnx->dims_total},
                                {"rdp_ms", ms}});
  }
  return 0;
}

int speed_table(nlohmann::json* out) {
  std::cout << "\n## RDP speed on synthetic transformer-like graphs\n\n"
            << "| nodes | import ms | RDP ms (median of 5) | µs per node | unknown dims |\n"
            << "|---:|---:|---:|---:|---:|\n";
  for (int64_t n : {1000, 10000, 50000}) {
    const auto proto = sod2::bench::transformer_like(n);
    const std::string bytes = proto.SerializeAsString();
    const auto t0 = Clock::now();
    auto model = sod2::import_onnx_bytes(
        std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), "", "synthetic");
    const double import_ms = ms_since(t0);
    if (!model.ok()) {
      std::cerr << model.status().message() << "\n";
      return 1;
    }
    RdpOptions options;
    options.ranges["batch"] = {1, 64, 1};
    options.ranges["seq"] = {1, 4096, 1};
    std::optional<sod2::RdpResult> rdp;
    const double ms = median_ms(5, [&] { rdp.emplace(*sod2::run_rdp(*model, options)); });
    const auto s = sod2::summarize_rdp(*model, *rdp);
    const auto nodes = static_cast<int64_t>(model->graph->num_nodes());
    std::cout << "| " << nodes << " | " << std::fixed << std::setprecision(1) << import_ms << " | "
              << std::setprecision(2) << ms << " | " << std::setprecision(2) << 1000.0 * ms / nodes
              << " | " << s.dims_unknown + s.rank_unknown << " |\n";
    (*out)["speed"].push_back({{"nodes", nodes}, {"import_ms", import_ms}, {"rdp_ms", ms},
                               {"passes", rdp->passes()}});
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::filesystem::path models = argc > 1 ? argv[1] : SOD2_SHARED_DIR "/models";
  const std::filesystem::path out_dir = argc > 2 ? argv[2] : "build/bench";
  nlohmann::json doc;
  doc["schema_version"] = 1;
  if (int rc = precision_table(models, &doc)) return rc;
  if (int rc = speed_table(&doc)) return rc;
  std::filesystem::create_directories(out_dir);
  std::ofstream(out_dir / "rdp.json") << doc.dump(1) << "\n";
  std::cout << "\nwrote " << (out_dir / "rdp.json").string() << "\n";
  return 0;
}
