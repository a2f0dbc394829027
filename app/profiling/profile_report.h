// What a profile looks like to a person and to tools: the table `sod2 profile` prints (laid out
// like TFLite's benchmark_model: latency statistics, then per group, top groups, and a summary
// by op type) and the Chrome-trace / Perfetto JSON of `--trace`.
#pragma once

#include <ostream>
#include <string>

#include "app/profiling/profile_job.h"
#include "core/status/byte_size.h"
#include "core/status/status.h"

namespace sod2::profiling {

// `top`: how many groups the "top by time" section lists.
void print_profile_table(const ProfileResult& result, std::ostream& out, int top = 10);
// The group sections of that table alone (per group in execution order with control-flow
// groups' body nodes under them, top by time, summary by op type): what `sod2 history --run`
// prints under its own header for a recorded run (recorded_run.h).
void print_group_tables(const ProfileResult& result, std::ostream& out, int top = 10);

// Chrome trace format (JSON object form): per measured and warm-up run, one complete ("X")
// event for the run and one per group, laid end to end on one timeline, each group's args
// naming its graph nodes, op types and shapes; a counter track of the arena's and the agent's
// resident bytes per run. Control-flow groups' body nodes are summed over the runs, so they are
// listed in otherData.bodies rather than drawn inside their group's events.
std::string trace_json(const ProfileResult& result);
Status write_trace(const ProfileResult& result, const std::string& path);

}  // namespace sod2::profiling
