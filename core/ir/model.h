// A loaded model: its main graph plus the metadata that decides how ops are read (opset imports).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/status/diagnostic.h"

namespace sod2 {

struct OpsetImport {
  std::string domain;  // "" for the ONNX default domain
  int64_t version = 0;
};

struct Model {
  std::string path;  // where it was loaded from; empty for in-memory models
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::vector<OpsetImport> opset_imports;
  std::shared_ptr<Graph> graph;
  Diagnostics diagnostics;  // warnings found while importing

  // Version imported for a domain; 0 when the model does not import it.
  int64_t opset(const std::string& op_domain) const {
    for (const OpsetImport& o : opset_imports)
      if (o.domain == op_domain) return o.version;
    return 0;
  }
};

}  // namespace sod2
