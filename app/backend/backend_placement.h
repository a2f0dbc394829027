// Which backend runs each node of a compiled model (DESIGN §6), for the CLI (`sod2 plan|run
// --backend vulkan`) and the studio's Backend dock: making the device backend a choice names,
// and reading a session's placement as rows with the reason the CPU runs each other node.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/exec/session.h"

namespace sod2::backend {

struct BackendChoice {
  bool vulkan = false;
  int vulkan_device = -1;   // -1: the first discrete GPU, else integrated, else the CPU device
  bool validation = false;  // the Khronos validation layer, its errors counted
};

// The device backend the choice asks for; null for the CPU. Errors: no Vulkan device, a device
// index that does not exist, validation asked for without the layer.
Expected<std::shared_ptr<rt::DeviceBackend>> make_backend(const BackendChoice& choice);

// Validation errors so far (0 without validation or for another backend), with the messages.
int validation_errors(const rt::DeviceBackend* backend, std::vector<std::string>* messages);

struct PlacementRow {
  std::string node;  // the node, or the generated group's name
  std::string op;    // its op type ("GpuElementwise" for a generated group)
  std::vector<std::string> fused_nodes, fused_ops;  // a group's or fused kernel's nodes
  bool device = false;
  rt::CpuReason reason = rt::CpuReason::kNone;  // when !device: why, typed
  std::string why_cpu;  // the specifics, naming the op: "Gather: no hand-written shader"
};

struct BackendPlacement {
  std::string backend;                // "vulkan (llvmpipe ..., CPU)"
  std::vector<PlacementRow> rows;     // per main-graph node, in execution order
  int groups = 0, grouped_nodes = 0;  // generated elementwise groups on the device
  int device_nodes = 0;               // nodes with hand-written shaders on the device
  int cpu_nodes = 0;
  std::map<std::string, int> why_counts;       // per specific reason, the CPU nodes it covers
  std::map<rt::CpuReason, int> reason_counts;  // per typed reason
};

// Empty `backend` and rows for a CPU-only session.
BackendPlacement placement_of(const rt::Session& session);

// Per reason the CPU runs nodes, the first `per_reason` of them (what a report names as examples).
std::map<std::string, std::vector<std::string>> why_examples(const BackendPlacement& p,
                                                             size_t per_reason = 2);

}  // namespace sod2::backend
