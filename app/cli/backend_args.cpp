#include "app/cli/backend_args.h"

#include <iomanip>
#include <map>
#include <stdexcept>

namespace sod2::cli {

std::vector<CommandLine::Flag> backend_flags() {
  return {
      {"--backend", true,
       "cpu (default) or vulkan: run the generated elementwise groups, MatMul/Gemm, Conv, pools "
       "and the other ops with shaders as compute shaders, the rest on the CPU",
       "NAME"},
      {"--vulkan-device", true,
       "with --backend vulkan: the device index (default: the first discrete GPU, else "
       "integrated, else the CPU implementation; sod2 devices --vulkan lists them)",
       "N"},
      {"--vulkan-validation", false,
       "with --backend vulkan: run under the Khronos validation layer and report its errors", ""},
  };
}

BackendChoice backend_choice_from(const CommandLine& cl) {
  BackendChoice c;
  const std::string name = cl.value("--backend").value_or("cpu");
  if (name == "vulkan") {
    c.vulkan = true;
  } else if (name != "cpu") {
    throw std::invalid_argument("--backend must be cpu or vulkan, got '" + name + "'");
  }
  if (!c.vulkan && (cl.has("--vulkan-device") || cl.has("--vulkan-validation")))
    throw std::invalid_argument("--vulkan-device and --vulkan-validation need --backend vulkan");
  if (cl.has("--vulkan-device"))
    c.vulkan_device = parse_count(cl.value("--vulkan-device"), 0, "--vulkan-device", 0);
  c.validation = cl.has("--vulkan-validation");
  return c;
}

void print_backend_placement(const rt::Session& session, std::ostream& out) {
  const backend::BackendPlacement p = backend::placement_of(session);
  if (p.backend.empty()) return;
  const auto examples = backend::why_examples(p);
  out << "backend " << p.backend << "\n";
  out << "  on the device: " << p.groups << " generated elementwise groups (" << p.grouped_nodes
      << " nodes), " << p.device_nodes << " nodes with hand-written shaders\n";
  out << "  on the CPU: " << p.cpu_nodes << " nodes (";
  bool first = true;
  for (const auto& [reason, count] : p.reason_counts) {
    out << (first ? "" : ", ") << count << " " << rt::cpu_reason_name(reason);
    first = false;
  }
  out << ")\n";
  for (const auto& [why, count] : p.why_counts) {
    out << "    " << std::setw(4) << count << "  " << why << "  (e.g. ";
    const auto& ex = examples.at(why);
    for (size_t i = 0; i < ex.size(); ++i) out << (i ? ", " : "") << ex[i];
    out << ")\n";
  }
}

nlohmann::ordered_json backend_placement_json(const rt::Session& session) {
  const backend::BackendPlacement p = backend::placement_of(session);
  nlohmann::ordered_json j;
  if (p.backend.empty()) return j;
  j["name"] = p.backend;
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const backend::PlacementRow& r : p.rows) {
    nlohmann::ordered_json e;
    e["node"] = r.node;
    e["op"] = r.op;
    e["device"] = r.device;
    if (!r.fused_nodes.empty()) e["fused_nodes"] = r.fused_nodes;
    if (!r.device) {
      e["reason"] = rt::cpu_reason_name(r.reason);
      e["why_cpu"] = r.why_cpu;
    }
    nodes.push_back(std::move(e));
  }
  j["nodes"] = std::move(nodes);
  return j;
}

int print_backend_counters(const rt::Session& session, const BackendChoice& choice,
                           std::ostream& out) {
  const rt::DeviceBackend* b = session.backend();
  if (!b) return 0;
  const rt::BackendCounters& c = b->counters();
  out << "backend counters over the runs: " << c.dispatches << " dispatches, " << c.cpu_kernels
      << " CPU kernels, " << c.syncs << " syncs, " << c.uploads << " uploads (" << c.upload_bytes
      << " bytes), " << c.runtime_fallbacks << " runtime fallbacks\n";
  if (!choice.validation) return 0;
  std::vector<std::string> messages;
  const int errors = backend::validation_errors(b, &messages);
  out << "validation: " << errors << " errors\n";
  for (const std::string& m : messages) out << "  " << m << "\n";
  return errors;
}

}  // namespace sod2::cli
