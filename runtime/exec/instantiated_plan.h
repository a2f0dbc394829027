// The memory plan a session ran with, in names a person (and a test) can compare with the plan a
// view shows: `sod2 run --dump-plan` writes it, `sod2 plan --bind` shows the compiler's side.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/exec/session.h"

namespace sod2::rt {

struct InstantiatedTensor {
  std::string name;  // the main-graph value the arena tensor holds
  int64_t size = 0;
  int64_t offset = 0;
  // How its bytes are ordered: "plain" (the ONNX layout), or "nChw16c" / "nChw8c" where the
  // session holds the value channel-blocked between kernels (SessionOptions::channel_blocked).
  std::string layout = "plain";
  // Values that are its bytes under another shape, in step order (byte_views.h).
  std::vector<std::string> views;
};

struct InstantiatedPlan {
  int32_t version = -1;  // -1: the whole-range plan
  int64_t arena_bytes = 0;
  // The symbols the run bound, in ProgramDesc order (an execution symbol whose node did not run
  // is left out).
  std::vector<std::pair<std::string, int64_t>> symbols;
  std::vector<InstantiatedTensor> tensors;  // per arena tensor
  // The main graph's steps in execution order: a fused kernel's nodes, or the node alone.
  std::vector<std::vector<std::string>> steps;
};

// The last run's plan. Before any run: the program's steps and no tensors.
InstantiatedPlan instantiated_plan(const Session& session);

}  // namespace sod2::rt
