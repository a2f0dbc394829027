// Writes what the runtime executes as one .sod2 file (runtime/package/FORMAT.md): the fixed
// header, the protobuf manifest, every constant's bytes in one 64-byte-aligned weight blob, and a
// SHA-256 trailer. runtime/package/ loads it back with mmap, constants becoming views.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::package {

struct PackageStats {
  uint64_t file_bytes = 0;
  uint64_t manifest_bytes = 0;
  uint64_t blob_bytes = 0;
  size_t constants = 0;
  size_t narrow_constants = 0;  // float32 constants stored as float16 or int8
  std::string sha256;           // hex, of every byte before the trailer
};

// How float32 constants are stored. kFloat16 halves them where every value is finite and within
// float16's range (a Clip bound of FLT_MAX stays float32). kInt8 stores weights (rank >= 2) as
// symmetric int8 codes with one scale per slice of the first dim (a Conv's output channel),
// where every value is finite. Small constants (under kNarrowMinElements) stay float32 either
// way. The loader widens them back (FORMAT.md: stored_dtype).
enum class WeightStorage { kAsIs, kFloat16, kInt8 };
inline constexpr int64_t kNarrowMinElements = 64;
// "fp32" | "fp16" | "int8", as `--weights` spells them; anything else is an error saying so.
Expected<WeightStorage> parse_weight_storage(const std::string& name);

struct PackageOptions {
  WeightStorage weights = WeightStorage::kAsIs;
};

// The package's bytes. Errors: a constant or attribute tensor without a fixed element size, a
// manifest above protobuf's 2 GiB message limit.
Expected<std::vector<uint8_t>> serialize_package(const rt::ProgramDesc& program,
                                                 PackageStats* stats = nullptr,
                                                 const PackageOptions& options = {});

// Serialises, then writes `path` through a temporary file renamed into place, so a failed or
// interrupted write never leaves a half-written package under the final name.
Status write_package(const rt::ProgramDesc& program, const std::string& path,
                     PackageStats* stats = nullptr, const PackageOptions& options = {});

// Writes `bytes` to `path` through a temporary file renamed into place.
Status write_file_atomically(std::span<const uint8_t> bytes, const std::string& path);

}  // namespace sod2::package
