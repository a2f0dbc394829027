// libFuzzer target for the package loaders (runtime/package, and runtime/family for family
// packages): any byte string must come back as a program (or a family) or a Status, never as a crash, a hang, a sanitizer report or an unbounded allocation.
//
// The SHA-256 check is off for the main pass: a mutated file never carries a valid digest, and
// the fuzzer should reach the header, manifest and graph checks behind it. A second pass with the
// check on covers that path (it costs one hash of a small input).
//
// Built like onnx_import_fuzzer.cpp: with clang and -fsanitize=fuzzer (SOD2_FUZZ=ON) as
// package_load_fuzzer, and with replay_main.cpp as package_load_fuzz_replay, which ctest runs
// over the seeds and saved reproducers.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "runtime/family/family_package.h"
#include "runtime/package/package_loader.h"

namespace {

void fail(const char* what) {
  std::fprintf(stderr, "package_load_fuzzer: %s\n", what);
  std::abort();
}

// Uses what the loader accepted the way the session will: every constant byte is read (ASan
// catches a view outside the buffer) and both shape programs run on in-range symbol values.
void exercise(const sod2::rt::ProgramDesc& p) {
  volatile uint8_t sink = 0;
  for (const sod2::rt::ConstantTensor& c : p.constants) {
    const sod2::rt::Tensor t = c.view();
    const auto* bytes = static_cast<const uint8_t*>(t.data);
    for (size_t i = 0; i < t.bytes(); ++i) sink = sink ^ bytes[i];
  }
  std::vector<int64_t> symbols;
  for (const sod2::rt::SymbolDesc& s : p.symbols) symbols.push_back(s.lo);
  for (const sod2::rt::ShapeProgram* sp : {&p.plan_program, &p.assumption_program}) {
    if (sp->num_inputs() != symbols.size()) continue;  // an empty program
    std::vector<int64_t> out(sp->num_outputs()), scratch(sp->scratch_size());
    (void)sp->run(symbols, out, scratch);  // overflow is an error, not a crash
  }
  if (p.graphs.empty()) fail("a program without a graph was accepted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  sod2::rt::PackageLoadOptions unchecked;
  unchecked.verify_checksum = false;
  for (const sod2::rt::PackageLoadOptions& options : {unchecked, sod2::rt::PackageLoadOptions{}}) {
    auto program = sod2::rt::load_package(bytes, nullptr, options);
    if (program.ok()) {
      exercise(*program);
    } else if (program.status().code() == sod2::StatusCode::kInternal) {
      fail(program.status().to_string().c_str());
    }
    // The same bytes as a family package: weight views decoded, every variant exercised.
    auto family = sod2::rt::load_family_package(bytes, nullptr, options);
    if (family.ok()) {
      for (const sod2::rt::VariantDesc& v : family->variants) exercise(v.program);
    } else if (family.status().code() == sod2::StatusCode::kInternal) {
      fail(family.status().to_string().c_str());
    }
  }
  return 0;
}
