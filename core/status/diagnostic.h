// Findings that do not stop the work (an unknown op, a newer opset, a label RDP disagrees with).
// Each names where it was found so a user can jump to it.
#pragma once

#include <string>
#include <vector>

namespace sod2 {

enum class Severity { kInfo, kWarning, kError };

inline const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "info";
}

struct Diagnostic {
  Severity severity = Severity::kWarning;
  std::string message;
  std::string node;  // the node's name, empty when it concerns the whole model
};

using Diagnostics = std::vector<Diagnostic>;

}  // namespace sod2
