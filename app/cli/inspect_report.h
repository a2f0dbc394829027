// What `sod2 inspect` prints: one JSON document (machine readers, the studio, tests) and a text
// summary (people). Both read the imported Model and nothing else.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/ir/model.h"

namespace sod2::cli {

// Bumped whenever a field changes meaning or disappears (adding fields keeps the version).
inline constexpr int kInspectSchemaVersion = 1;

nlohmann::ordered_json inspect_json(const Model& model);
std::string inspect_text(const Model& model);

}  // namespace sod2::cli
