// Reads a .sod2 package (FORMAT.md) into what the session executes. Nothing in the file is
// trusted: every offset, length, count, index and enum is checked before it is used, so a
// truncated, corrupted or hostile file is an error naming what is wrong, never a crash.
// Constants are not copied: they are views into the mapping, which the program keeps alive.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/status/status.h"
#include "runtime/program/program.h"

namespace sod2::pkg {
class Manifest;
}

namespace sod2::rt {

struct PackageLoadOptions {
  // Off only for the fuzzer: random mutations never carry a valid digest, and it should reach the
  // manifest checks. Everything else is checked either way.
  bool verify_checksum = true;
};

// A package's checked fixed parts: the parsed manifest and the weight blob (64-byte aligned), with
// what keeps the blob's bytes alive. Errors: anything wrong with the header, trailer, digest or
// manifest encoding (named). The manifest's contents are not checked yet.
struct PackageSections {
  std::shared_ptr<const pkg::Manifest> manifest;  // shared_ptr: pkg::Manifest stays opaque here
  std::span<const uint8_t> blob;
  std::shared_ptr<const void> keep_alive;
};
Expected<PackageSections> read_package_sections(std::span<const uint8_t> bytes,
                                                std::shared_ptr<const void> keep_alive,
                                                const PackageLoadOptions& options = {});

// `bytes` must stay unchanged while `keep_alive` lives; the program holds `keep_alive` in
// ProgramDesc::constant_storage and its constants point into `bytes`. If `bytes` is not 64-byte
// aligned the loader copies it into an aligned buffer first (kernels rely on the alignment).
Expected<ProgramDesc> load_package(std::span<const uint8_t> bytes,
                                   std::shared_ptr<const void> keep_alive,
                                   const PackageLoadOptions& options = {});

// Maps `path` read-only and loads it; errors carry the path. A family package is refused with a
// message pointing at load_family_package (runtime/family/family_package.h).
Expected<ProgramDesc> load_package_file(const std::string& path,
                                        const PackageLoadOptions& options = {});

// Whether the file at `path` starts with the package magic (false if it cannot be read).
bool is_package_file(const std::string& path);

}  // namespace sod2::rt
