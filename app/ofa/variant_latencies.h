// Where `sod2 ofa` gets each variant's expected latency: the profile store's latest successful
// run of "<family>/<variant>" on the device at the same bindings (what `sod2 profile --family`
// records), when every variant has one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "runtime/family/family_package.h"

namespace sod2::ofa {

// The name a family variant's profiles are recorded under.
std::string variant_model_name(const std::string& family, const std::string& variant);

struct StoredLatencies {
  std::vector<std::string> names;   // the variants, in the family's (package) order
  std::vector<double> expected_ms;  // theirs
  std::vector<int64_t> run_ids;     // the runs they come from
  // The same entries in the order of `names` given (small to large, say); each name must be one
  // of the family's.
  StoredLatencies reordered(const std::vector<std::string>& order) const;
};

// nullopt when some variant has no such run (or the store does not exist yet). Errors: a store
// that exists but cannot be read.
Expected<std::optional<StoredLatencies>> stored_latencies(const std::string& db_path,
                                                          const rt::FamilyProgram& family,
                                                          const std::string& device,
                                                          const std::string& bindings);

}  // namespace sod2::ofa
