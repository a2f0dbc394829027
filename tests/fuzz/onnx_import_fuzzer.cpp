// libFuzzer target for the ONNX importer: any byte string must come back as a model or a Status,
// never as a crash, a hang, a sanitizer report or an unbounded allocation.
//
// Built two ways from this one source:
//   * with clang and -fsanitize=fuzzer (SOD2_FUZZ=ON): the onnx_import_fuzzer binary;
//   * with any compiler and replay_main.cpp: onnx_import_fuzz_replay, which ctest runs over the
//     seeds, the broken corpus and the saved crash reproducers.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "core/onnx/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // No base folder: external data is refused, so the fuzzer never reads the file system.
  const sod2::Expected<sod2::Model> model =
      sod2::import_onnx_bytes(std::span<const uint8_t>(data, size), "", "fuzz-input");
  if (model.ok()) {
    // Check what was built, so a structurally inconsistent graph (an id out of range, a cycle the
    // importer let through) is reported here rather than later in the optimizer.
    sod2::visit_graphs(*model->graph, [](const sod2::Graph& g, const sod2::Node*) {
      auto check = [&](sod2::ValueId id) {
        if (id != sod2::kNoValue && (id < 0 || static_cast<size_t>(id) >= g.num_values())) {
          std::fprintf(stderr, "onnx_import_fuzzer: value id %d out of range in graph '%s'\n",
                       static_cast<int>(id), g.name().c_str());
          std::abort();
        }
      };
      for (const sod2::Node& n : g.nodes()) {
        for (sod2::ValueId id : n.inputs) check(id);
        for (sod2::ValueId id : n.outputs) check(id);
        for (sod2::ValueId id : n.implicit_inputs) check(id);
      }
      for (sod2::ValueId id : g.inputs()) check(id);
      for (sod2::ValueId id : g.outputs()) check(id);
      if (!g.topological_order().ok()) {
        std::fprintf(stderr, "onnx_import_fuzzer: an imported graph has a cycle\n");
        std::abort();
      }
    });
    return 0;
  }
  // kInternal means "a bug in sod2 itself" (an exception escaped libonnx or protobuf): report it
  // like a crash so the input gets saved.
  if (model.status().code() == sod2::StatusCode::kInternal) {
    std::fprintf(stderr, "onnx_import_fuzzer: internal error: %s\n",
                 model.status().to_string().c_str());
    std::abort();
  }
  return 0;
}
