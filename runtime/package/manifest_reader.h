// The manifest of a package (sod2_package.proto) to a ProgramDesc, validating every field the
// session will later use without checks. The entry point is program_from_manifest(); the graph
// part lives in graph_reader.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::pkg {
class Manifest;
class Graph;
class TensorRef;
}  // namespace sod2::pkg

namespace sod2::rt {

// Subgraphs may nest this deep: the session recurses once per level.
inline constexpr int kMaxGraphDepth = 64;

// Errors (parse_error, or unsupported for a valid but unknown feature) name the field: "graph 2
// ('body') node 5 ('Add'): input 3 is value 99, but the graph has 12 values". Constants become
// borrowed views into `blob`, which the caller keeps alive. A family variant's manifest has no
// constants of its own: `constants` (the family weights it names) stand in for them, and the
// manifest must then list none.
Expected<ProgramDesc> program_from_manifest(const pkg::Manifest& m, std::span<const uint8_t> blob,
                                            std::vector<ConstantTensor>* constants = nullptr);

namespace package_detail {

// A DType stored as a number: known to this runtime, and with a fixed element size unless
// `allow_unsized` (value and input types may be kUndefined).
Expected<DType> read_dtype(uint32_t raw, bool allow_unsized, const std::string& what);

// A tensor's dtype and dims checked (rank <= kMaxRank, dims >= 0, numel * element size without
// overflow, equal to the stored length) and its bytes located: in the blob (64-aligned, inside
// it) or, if `allow_inline`, in the manifest.
Expected<Tensor> read_tensor(const pkg::TensorRef& t, std::span<const uint8_t> blob,
                             bool allow_inline, const std::string& what);

// Graphs, with the subgraph references checked to form a tree under graph 0.
Status read_graphs(const pkg::Manifest& m, std::span<const uint8_t> blob, ProgramDesc* p);

}  // namespace package_detail
}  // namespace sod2::rt
