// `sod2 compile --family`: every variant of a family file compiled with its own RDP, fusion and
// memory plan, and written as one family package (runtime/package/FORMAT.md §Family packages)
// whose weights are stored once (weight_sharing.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/family/family_spec.h"
#include "core/family/weight_sharing.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"

namespace sod2::family {

struct FamilyCompileOptions {
  pipeline::CompileOptions compile;
  WeightSharingOptions sharing;
  // Called before each long step ("compiling medium (2/4)"); may be empty.
  std::function<void(const std::string&)> progress;
};

struct FamilyPackageStats {
  package::PackageStats package;                // of the family package
  std::vector<uint64_t> variant_package_bytes;  // each variant as its own package
  uint64_t separate_bytes = 0;                  // their sum
  WeightSharingStats sharing;
};

// The family package's bytes. Errors: the variant (named) that fails to import or compile.
Expected<std::vector<uint8_t>> build_family_package(const FamilySpec& spec,
                                                    const FamilyCompileOptions& options,
                                                    FamilyPackageStats* stats = nullptr);

// One variant of a family as compiled: its description and its program.
struct FamilyMember {
  VariantSpec spec;  // model_path is not read
  const rt::ProgramDesc* program = nullptr;
};

// The family package of programs compiled already (what build_family_package does after
// compiling; also how tests make small families). Fills stats' package and sharing parts.
Expected<std::vector<uint8_t>> serialize_family(const std::string& name,
                                                const std::vector<FamilyMember>& members,
                                                const WeightSharingOptions& sharing,
                                                FamilyPackageStats* stats = nullptr);

// Builds and writes `path` atomically (never a half-written file under the final name).
Status write_family_package(const FamilySpec& spec, const FamilyCompileOptions& options,
                            const std::string& path, FamilyPackageStats* stats = nullptr);

}  // namespace sod2::family
