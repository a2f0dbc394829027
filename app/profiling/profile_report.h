// What a profile looks like to a person and to tools: the table `sod2 profile` prints (laid out
// like TFLite's benchmark_model: latency statistics, then per group, top groups, and a summary
// by op type) and the Chrome-trace / Perfetto JSON of `--trace`.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "app/profiling/profile_job.h"
#include "core/status/byte_size.h"
#include "core/status/status.h"

namespace sod2::profiling {

// Calls per run as the tables print them: whole for a body that runs a fixed number of times
// ("3"), else two decimals ("0.50": a branch taken half the time).
std::string calls_per_run_text(double calls);

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
// One body node as the trace's otherData.bodies and the sweeps' JSON (`--sweep --json`) list it:
// depth, body, graph, node, name, op_types, avg_ms, calls_per_run, percent_of_parent.
nlohmann::json body_node_json(const BodyNodeProfile& node);
// How the JSON reports are written: a node name need not be UTF-8 (an ONNX string is bytes), so
// invalid bytes become U+FFFD instead of failing the whole dump; quotes, backslashes and control
// characters are escaped by the library. `indent` as nlohmann::json::dump's.
std::string json_text(const nlohmann::json& j, int indent = -1);
Status write_trace(const ProfileResult& result, const std::string& path);

}  // namespace sod2::profiling
