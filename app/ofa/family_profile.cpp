#include "app/ofa/family_profile.h"

#include <unistd.h>

#include <filesystem>

#include "app/ofa/variant_latencies.h"
#include "core/package/package_writer.h"

namespace sod2::ofa {

std::vector<bool> pareto_front(const std::vector<double>& latency_ms,
                               const std::vector<double>& value) {
  std::vector<bool> front(latency_ms.size(), true);
  for (size_t i = 0; i < latency_ms.size(); ++i) {
    for (size_t j = 0; j < latency_ms.size(); ++j) {
      if (i == j) continue;
      const bool no_worse = latency_ms[j] <= latency_ms[i] && value[j] >= value[i];
      const bool better = latency_ms[j] < latency_ms[i] || value[j] > value[i];
      if (no_worse && better) {
        front[i] = false;
        break;
      }
    }
  }
  return front;
}

Expected<std::vector<VariantProfile>> profile_family(const rt::FamilyProgram& family,
                                                     profiling::ProfileRequest request,
                                                     const profiling::ProfileProgress& progress) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("sod2-family-" + std::to_string(::getpid()));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return io_error("cannot make the folder " + dir.string() + ": " + ec.message());
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};

  std::vector<VariantProfile> out;
  const size_t n = family.variants.size();
  for (size_t i = 0; i < n; ++i) {
    const rt::VariantDesc& v = family.variants[i];
    const fs::path path = dir / (v.name + ".sod2");
    SOD2_RETURN_IF_ERROR(package::write_package(v.program, path.string()));
    request.model_path = path.string();
    request.model_name = variant_model_name(family.name, v.name);
    profiling::ProfileProgress step = progress;
    if (progress.report) {
      step.report = [&, i](const std::string& stage, double f) {
        progress.report(v.name + ": " + stage,
                        (static_cast<double>(i) + f) / static_cast<double>(n));
      };
    }
    Expected<profiling::ProfileResult> r = profiling::profile(request, step);
    if (!r.ok()) return r.status().with_context("variant '" + v.name + "'");
    VariantProfile p;
    p.name = v.name;
    p.macs = v.macs;
    p.params = v.params;
    p.has_accuracy = v.has_accuracy;
    p.accuracy = v.accuracy;
    p.result = std::move(*r);
    out.push_back(std::move(p));
  }
  // Accuracy when every variant has one, else MACs as its stand-in.
  const bool by_accuracy =
      std::all_of(out.begin(), out.end(), [](const VariantProfile& p) { return p.has_accuracy; });
  std::vector<double> latency, value;
  for (const VariantProfile& p : out) {
    latency.push_back(p.result.stats.avg_ms);
    value.push_back(by_accuracy ? p.accuracy : static_cast<double>(p.macs));
  }
  const std::vector<bool> front = pareto_front(latency, value);
  for (size_t i = 0; i < out.size(); ++i) out[i].on_front = front[i];
  return out;
}

}  // namespace sod2::ofa
