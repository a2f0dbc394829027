// `sod2 profile --family` and the studio's variants view: every variant of a family profiled on a
// device like a model of its own (recorded in the profile store as "<family>/<variant>", where
// `sod2 ofa` finds them), and the latency-MACs Pareto front of the results.
#pragma once

#include <string>
#include <vector>

#include "app/profiling/profile_job.h"
#include "runtime/family/family_package.h"

namespace sod2::ofa {

struct VariantProfile {
  std::string name;
  uint64_t macs = 0, params = 0;
  bool has_accuracy = false;
  double accuracy = 0;
  profiling::ProfileResult result;
  bool on_front = false;  // no other variant is both faster and larger (or more accurate)
};

// The variants in the family's order. Each is written as a package of its own (sent to the
// device; the agent runs single packages) into a temporary folder removed afterwards. `request`
// gives the device, bindings and run settings; its model path and name are set per variant.
// Errors: the first variant that fails (named); earlier results are lost only from the return
// value, not from the store.
Expected<std::vector<VariantProfile>> profile_family(const rt::FamilyProgram& family,
                                                     profiling::ProfileRequest request,
                                                     const profiling::ProfileProgress& progress);

// For each point, whether it is on the Pareto front of low latency and high value: no other
// point has latency <= and value >= with one of them strict.
std::vector<bool> pareto_front(const std::vector<double>& latency_ms,
                               const std::vector<double>& value);

}  // namespace sod2::ofa
