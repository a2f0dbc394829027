// Loads a family package (FORMAT.md §Family packages): several compiled variants of one supernet
// over one set of weights. The file is mapped once; stored weights are used in place, windows
// that are one contiguous run of their base are views into it, and the other views (centred
// crops, scaled windows) are built once at load into one 64-byte-aligned buffer that every
// variant shares. Nothing is built or copied when the caller switches variant afterwards.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/program/program.h"
#include "runtime/package/package_loader.h"

namespace sod2::rt {

struct VariantDesc {
  std::string name;
  uint64_t macs = 0;
  uint64_t params = 0;
  bool has_accuracy = false;
  double accuracy = 0;
  std::string config;  // JSON text from the family file
  ProgramDesc program;
};

struct FamilyLoadStats {
  size_t weights = 0;         // distinct weights of the family
  size_t stored = 0;          // ... with their own bytes in the file
  size_t views_in_place = 0;  // ... views used where they lie in the mapping
  size_t views_built = 0;     // ... views built at load (crops, scaled windows)
  uint64_t file_bytes = 0;
  uint64_t stored_bytes = 0;  // bytes of the stored weights
  uint64_t built_bytes = 0;   // bytes of the views built at load
  double build_ms = 0;        // time to build them
};

struct FamilyProgram {
  std::string name;
  std::vector<VariantDesc> variants;
  FamilyLoadStats stats;
};

struct FamilyLoadLimits {
  // Ceiling on the bytes of the views built at load, all variants together (FORMAT.md §Family
  // packages, "What views may cost"); 0: half the machine's physical memory.
  uint64_t max_built_bytes = 0;
};

// Errors: everything load_package checks, plus a view whose base is not an earlier stored weight,
// a window outside its base, scale/residual/escape lengths that disagree, a constant naming a
// weight out of range or of another type than the graph expects, a variant without a program;
// and, before anything is built, a view no variant uses or a variant whose built views take more
// than the stored weights (parse errors), or built views beyond `limits` (resource exhausted).
Expected<FamilyProgram> load_family_package(std::span<const uint8_t> bytes,
                                            std::shared_ptr<const void> keep_alive,
                                            const PackageLoadOptions& options = {},
                                            const FamilyLoadLimits& limits = {});
Expected<FamilyProgram> load_family_package_file(const std::string& path,
                                                 const PackageLoadOptions& options = {},
                                                 const FamilyLoadLimits& limits = {});

// Whether the package at `path` is a family package (false for a single model or unreadable file).
bool is_family_package_file(const std::string& path);

}  // namespace sod2::rt
