// Bounds that keep a hostile file from making the importer allocate or loop without end.
#pragma once

#include <cstdint>

namespace sod2::onnx_import {

// Larger than any real dimension, small enough that products of a few stay inside int64.
inline constexpr int64_t kMaxDim = int64_t{1} << 40;
// Dense tensors beyond this many bytes are refused (sparse initializers could otherwise ask for
// arbitrarily large dense buffers from a few bytes of file).
inline constexpr uint64_t kMaxTensorBytes = uint64_t{16} << 30;
// A sparse initializer expands to its dense form on import; a few bytes of file may not ask for
// more than this (a real model that large keeps its weights dense in external data).
inline constexpr uint64_t kMaxDensifiedBytes = uint64_t{1} << 30;
inline constexpr int64_t kMaxRank = 64;
// Subgraph nesting; protobuf's own recursion limit stops far deeper nesting before this.
inline constexpr int kMaxGraphDepth = 32;

}  // namespace sod2::onnx_import
