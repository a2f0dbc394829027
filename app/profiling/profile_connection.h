// One package on one device, measured as often as asked: what `sod2 profile` does once and
// `sod2 profile --sweep` at every point. Opening compiles the model (unless it is a package),
// opens the profile store, starts the agent and sends the package; each measure() runs it at one
// binding with random inputs of those sizes, summarises the timings per fused group and records
// the run — or its failure and reason — in the store.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/profiling/input_files.h"
#include "app/profiling/profile_job.h"
#include "core/status/status.h"
#include "core/store/profile_store.h"
#include "plugins/device/agent_client.h"
#include "plugins/device/device_transport.h"
#include "runtime/program/plan_layout.h"
#include "runtime/program/program_plan_at.h"

namespace sod2::profiling {

class ProfileConnection {
 public:
  // Progress goes from `from` to `to` of `progress`'s scale. With `bind_is_complete`,
  // request.bind must size every input (checked before the device is involved). A failure once
  // the device is involved is recorded as a failed run at `request.bind` (unless recording is
  // off).
  static Expected<std::unique_ptr<ProfileConnection>> open(const ProfileRequest& request,
                                                           bool bind_is_complete,
                                                           const ProfileProgress& progress,
                                                           double from, double to);
  ~ProfileConnection();

  const rt::ProgramDesc& program() const { return *program_; }
  // The request's binding with the symbols its input files' dims give.
  const std::map<std::string, int64_t>& bind() const { return request_.bind; }
  // The plan the runtime lays out at `bind` (every input symbol; execution symbols at their
  // bounds there): what the studio's plan view shows.
  Expected<plan::ProgramPlanAt> plan_at(const std::map<std::string, int64_t>& bind) const;
  store::ProfileStore* store() { return db_.get(); }

  // Where a measured run sits in a sweep (sweep_id 0: not in one).
  struct Point {
    int64_t sweep_id = 0, value = 0;
  };
  // Runs the package at `bind` (every input symbol). Before it runs, the plan the runtime lays
  // out there is evaluated (ProfileResult::predicted_arena_bytes). Errors: a binding the program
  // refuses (not recorded), the device's or the stream's (recorded, the run named).
  Expected<ProfileResult> measure(const std::map<std::string, int64_t>& bind, const Point& point,
                                  const ProfileProgress& progress, double from, double to);
  // Ends the agent and starts it again (the package is found on the device by its hash): after a
  // failure that may have ended it, so that the next measure() has a live device. A failure
  // here is returned, not recorded: the next measure() records its point as failed.
  Status restart(const ProfileProgress& progress);

 private:
  ProfileConnection() = default;
  Status start_agent(const ProfileProgress& progress, double from, double to, bool record);
  // What every run this connection records shares: device, model, package, settings, point.
  store::RunRecord run_record(const std::string& bindings, const Point& point) const;
  // A failed run at `bind`, recorded unless recording is off; returns `st` naming the record.
  Status failed(const Status& st, const std::string& bindings, const Point& point,
                int64_t predicted_arena);

  ProfileRequest request_;
  ProfileResult base_;  // what every result shares: device, agent, model, package
  std::shared_ptr<const rt::ProgramDesc> program_;
  std::vector<uint8_t> package_;
  InputFileTensors input_files_;       // per program input
  std::vector<plan::Lifetime> lives_;  // per arena tensor, as a session derives them
  std::unique_ptr<store::ProfileStore> db_;
  std::string device_transport_, device_serial_;
  std::unique_ptr<device::DeviceTransport> transport_;
  std::unique_ptr<device::ChildProcess> child_;
  std::unique_ptr<device::AgentClient> client_;
};

}  // namespace sod2::profiling
