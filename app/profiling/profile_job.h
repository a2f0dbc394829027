// One profiling job, what `sod2 profile` and the studio's "Export & profile" both run: compile
// the model (unless it is a package already), start the agent on the device through its
// transport, send the package, run it with inputs of the bound shapes, summarise the timings per
// fused group, and record the run — or the failure and its reason — in the profile store.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/profiling/body_profile.h"
#include "app/profiling/int_input_ranges.h"
#include "core/package/package_writer.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"
#include "plugins/device/agent_client.h"
#include "plugins/device/device_transport.h"
#include "runtime/program/program.h"

namespace sod2::profiling {

struct ProfileRequest {
  std::string model_path;  // .onnx (compiled here) or .sod2 (told by its magic bytes)
  std::string device = "local";
  std::map<std::string, int64_t> bind;  // symbol -> size
  // Integer inputs' random values, their bounds evaluated at each run's binding (a sweep's
  // `lengths=seq` follows the swept seq).
  std::vector<IntInputRange> int_ranges;
  // Inputs read from files (input name -> .npy or TensorProto path) instead of random values;
  // their dims bind the symbols --bind leaves out (input_files.h).
  std::map<std::string, std::string> input_files;
  RdpOptions rdp;  // ranges, for an .onnx model
  bool fuse = true;
  // How an .onnx model's float32 weights are sent (`sod2 compile --weights`): narrower is a
  // smaller transfer, widened on the device. A .sod2 keeps the weights it was compiled with.
  package::WeightStorage weights = package::WeightStorage::kAsIs;
  device::RunSettings settings;
  uint32_t seed = 1;
  std::optional<std::string> db_path;  // nullopt: the default store; "" : record nothing
  std::string model_name;              // how the store names the model; "": from the path
  // The program model_path compiles to with `rdp` and `fuse`, when the caller has it already (the
  // studio's open document): packaged as is instead of compiling the file again. The file is
  // still read, for the hash the history keys runs by.
  std::shared_ptr<const rt::ProgramDesc> compiled;
};

struct LatencyStats {
  int count = 0;  // measured runs
  double first_ms = 0, warmup_avg_ms = 0, avg_ms = 0, std_ms = 0, min_ms = 0, max_ms = 0;
  double p50_ms = 0, p90_ms = 0;  // nearest-rank percentiles of the measured runs
};

struct GroupProfile {
  int index = 0;                             // execution order
  std::string name;                          // the group's (anchor) node
  std::vector<std::string> nodes, op_types;  // its graph nodes (one for an unfused node)
  std::string shape;                         // its first output's shape in this run
  std::string dims;                          // the same, symbolic (RDP's), when the package has it
  double avg_ms = 0, percent = 0, cumulative_percent = 0;
  double p50_ms = 0, p90_ms = 0;  // over the measured runs (nearest rank)
  int64_t output_bytes = 0;
  // Operations at the bound sizes (core/ops/op_work.h); -1 when not counted or the package
  // carries no counts.
  int64_t ops = -1;
  // The operations are only the most the group can do (plan::StepWork::bound): an If counted at
  // its larger branch, a Loop that can end before its trip count, an execution symbol at its
  // bound. Records before schema 5 have no such flag: an If group is a bound all the same.
  bool ops_bound = false;
  std::string op_label() const;  // "Conv+Add+Relu"
  // ops_bound, or an If group (core/ops/op_work.cpp): a bound, not what ran (an If that ran its
  // Identity branch would show the other branch's convolutions as GOP/s).
  bool ops_are_bound() const;
  // ops / avg_ms as GOP/s; negative when either is unknown or the ops are only a bound.
  double gops_per_s() const {
    return ops >= 0 && avg_ms > 0 && !ops_are_bound() ? static_cast<double>(ops) / (avg_ms * 1e6)
                                                      : -1;
  }
  // An If/Loop/Scan group's body nodes that ran, depth first (body_profile.h); empty for other
  // groups and from an agent that does not report body times.
  std::vector<BodyNodeProfile> body;
};

struct ProfileResult {
  device::DeviceEntry device;
  device::AgentHello agent;
  std::string model_name, model_sha256, package_sha256;
  int64_t package_bytes = 0;
  bool package_cached = false;  // the device had it already
  std::string bindings;         // "batch=1,seq=128"
  device::RunSettings settings;
  device::RunReport report;
  LatencyStats stats;
  std::vector<GroupProfile> groups;  // execution order
  // The groups' ops take an execution symbol at its bound: the most they do at these sizes.
  bool ops_at_most = false;
  // The arena the plan lays out at the run's sizes (plan::program_plan_at): what the studio's
  // plan view shows there. Exact when the model has no execution symbols or the device reported
  // the values its run bound them to; otherwise at their bounds, the most the run can take.
  // -1 when it could not be evaluated.
  int64_t predicted_arena_bytes = -1;
  bool prediction_exact = false;
  // The device ran in another arena than the prediction: not the exact one, or above the one at
  // the bounds. (The plan shown is then not the plan that ran: a bug to report.)
  bool arena_mismatch() const {
    if (predicted_arena_bytes < 0) return false;
    return prediction_exact ? predicted_arena_bytes != arena_bytes()
                            : arena_bytes() > predicted_arena_bytes;
  }
  int64_t arena_bytes() const {  // what the device reported for its last run
    return report.runs.empty() ? 0 : report.runs.back().arena_bytes;
  }
  int32_t plan_version() const {  // the plan version of its last run; -1 without runs
    return report.runs.empty() ? -1 : report.runs.back().plan_version;
  }
  // The counted groups' operations summed, -1 when none is counted; `uncounted` gets how many
  // groups are left out.
  int64_t counted_ops(size_t* uncounted = nullptr) const;
  // Whether counted_ops() is only a bound: an execution symbol at its bound, or a group whose
  // operations are (ops_are_bound: an If, a Loop that can end early).
  bool counted_ops_at_most() const;
  int64_t run_id = 0;  // in the store; 0 when not recorded
  std::string db_path;
};

struct ProfileProgress {
  std::function<void(const std::string& stage, double fraction)> report;  // fraction in [0, 1]
  // Each window of a sustained run as it arrives (RunSettings::duration_s).
  std::function<void(const device::SustainedWindow&)> window;
  // Set, it ends the job; a sustained run past its first runs ends with what it measured.
  const std::atomic<bool>* cancel = nullptr;
};

// Errors name the stage and what to do; a failure after the device was reached is recorded as a
// failed run (its id in the message) unless recording is off.
Expected<ProfileResult> profile(const ProfileRequest& request,
                                const ProfileProgress& progress = {});

LatencyStats latency_stats(const std::vector<device::RunSample>& runs);
// Each group's percent of the groups' summed avg_ms, and the running sum in execution order: a
// fresh profile's and a recorded one's alike.
void set_time_shares(std::vector<GroupProfile>& groups);
// The nearest-rank percentile (q in (0, 1]) of `values`; 0 when there are none.
double percentile(std::vector<double> values, double q);

}  // namespace sod2::profiling
