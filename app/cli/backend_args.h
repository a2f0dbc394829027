// The --backend cpu|vulkan, --vulkan-device N and --vulkan-validation flags that `sod2 run` and
// `sod2 plan` share, and their reports of where a session's nodes ran.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "app/backend/backend_placement.h"
#include "app/cli/command_line.h"
#include "runtime/exec/session.h"

namespace sod2::cli {

using backend::BackendChoice;
using backend::make_backend;

// The flags, to append to a command's own.
std::vector<CommandLine::Flag> backend_flags();

// Throws std::invalid_argument on a bad value (as the other flag parsers do).
BackendChoice backend_choice_from(const CommandLine& cl);

// Where the main graph's nodes run: the device, the groups and nodes on it, and each reason the
// CPU runs the others, with how many nodes it covers and an example or two.
void print_backend_placement(const rt::Session& session, std::ostream& out);

// The same as JSON: {"name", "nodes": [{"node", "op", "device", "fused_nodes", "reason",
// "why_cpu"}]}: `reason` is one of rt::cpu_reason_name's texts, `why_cpu` the specifics.
nlohmann::ordered_json backend_placement_json(const rt::Session& session);

// The backend's counters over the runs (dispatches, CPU kernels, syncs, uploads) and, with
// validation, its errors. Returns the number of validation errors.
int print_backend_counters(const rt::Session& session, const BackendChoice& choice,
                           std::ostream& out);

}  // namespace sod2::cli
