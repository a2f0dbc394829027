// A profile and its row in the profile store, each made from the other: what `sod2 profile`
// records, and what `sod2 history --run` and a sweep read back read as a profile again, so the
// one group table (profile_report.h) prints both.
#pragma once

#include "app/profiling/profile_job.h"
#include "core/store/profile_store.h"

namespace sod2::profiling {

// A group as the store keeps it: op types joined by '+', nodes by ',' (store::join_names, which
// escapes those in a name); body nodes alike.
store::GroupRecord group_record(const GroupProfile& group);

// What the store kept of a run as a profile: its device, model, binding, latencies (their
// statistics recomputed), groups with their shares of the run and their body nodes. What the
// store does not keep is left empty: the agent's arena capacity and body-value bytes, groups'
// symbolic dims, whether the package was cached. Names come back exactly (a run recorded before
// schema 5 as it read then: a node name holding ',' split in two).
ProfileResult result_from_record(const store::RunRecord& run);

}  // namespace sod2::profiling
