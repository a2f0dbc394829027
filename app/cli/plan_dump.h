// `sod2 run --dump-plan FILE`: the memory plan the runtime ran with, as JSON in the names
// `sod2 plan --json` uses (binding values and version, tensors with size and offset, the arena,
// the steps), so the plan a view shows can be compared with the one that ran.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/status/status.h"
#include "runtime/exec/instantiated_plan.h"

namespace sod2::cli {

nlohmann::ordered_json instantiated_plan_json(const rt::InstantiatedPlan& plan);

// Writes the JSON to `path` (replacing it). Errors: the file cannot be written, named.
Status write_plan_dump(const std::string& path, const rt::InstantiatedPlan& plan);

}  // namespace sod2::cli
