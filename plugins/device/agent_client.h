// The host's side of the agent protocol (runtime/agent/PROTOCOL.md) over a started agent: say
// hello and check versions, send a package (skipped when the agent has it by hash), run it and
// collect every run's timings. Any break of the stream becomes one message naming how the agent
// or transport ended and what it last said on stderr.
//
// The device is not trusted: every count, length, time and size it reports is checked against
// what the host asked for before the host keeps anything, so a faulty or hostile agent ends the
// conversation with an error naming what it broke, never with the host's memory or a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"
#include "plugins/device/child_process.h"
#include "runtime/family/family_demo.h"
#include "runtime/tensor/tensor.h"

namespace sod2::device {

struct AgentHello {
  uint32_t protocol_version = 0;
  std::string software;
  std::string cpu, os, arch, hostname;
  uint32_t cores = 0;
  uint64_t memory_bytes = 0;
  uint64_t free_disk_bytes = 0;
};

struct RunSample {
  bool warmup = false;
  double latency_ms = 0;
  std::vector<double> group_start_ms, group_ms;  // per compiled node (group)
  int64_t arena_bytes = 0;
  int64_t rss_bytes = 0;
  int32_t plan_version = -1;
  // Every symbol's value as the run's plan used it (the package's symbol order; execution
  // symbols as the run bound them); empty from an agent that does not report them.
  std::vector<int64_t> symbol_values;
};

// A sensor over one window of a sustained run: degrees Celsius for "thermal:..." zones, MHz for
// "cpuN MHz" frequencies.
struct SensorStat {
  std::string name;
  double mean = 0, max = 0;
};

// One window of a sustained run (PROTOCOL.md §Sustained runs). Times are seconds since the
// first measured run; percentiles are nearest-rank over the window's runs.
struct SustainedWindow {
  uint32_t index = 0;
  double start_s = 0, end_s = 0;
  uint64_t runs = 0;  // 0: a run longer than the window spanned it
  double min_ms = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  std::vector<double> group_mean_ms;  // per group; empty when the window had no runs
  int64_t rss_bytes = 0;              // the agent's resident set at the window's end
  std::vector<SensorStat> sensors;
};

// A node inside a control-flow body (If branch, Loop/Scan body, nested ones too), summed over a
// request's measured runs.
struct BodyNodeTime {
  uint32_t graph = 0;  // the package's graph index, 1 and up
  uint32_t node = 0;   // in that graph's execution order
  std::string name, op_type;
  double total_ms = 0;
  uint64_t calls = 0;  // at least 1
};

struct RunReport {
  std::vector<RunSample> runs;            // warm-up runs first
  std::vector<std::string> group_shapes;  // per group, its first output's shape
  std::vector<int64_t> group_output_bytes;
  int64_t peak_rss_bytes = 0;
  uint64_t arena_capacity = 0;
  uint64_t value_buffer_bytes = 0;
  uint32_t threads = 0;
  // A sustained run's windows in order (RunSettings::duration_s), the sensors the device could
  // not read (and why), and whether the host stopped it before its duration.
  std::vector<SustainedWindow> windows;
  std::vector<std::string> unreadable_sensors;
  bool stopped_early = false;
  // Every body node that ran in the measured runs, in (graph, node) order; empty from an agent
  // older than body times, or for a package without control flow.
  std::vector<BodyNodeTime> body_nodes;
};

// A family package's run on the device (the Dynamic-OFA demo, PROTOCOL.md §Families).
struct FamilyRunSettings {
  double budget_ms = 0;
  double duration_s = 10;
  int threads = 0;
  bool managed = true;
  std::vector<double> expected_ms;       // small to large; empty: the device measures them
  std::optional<rt::LoadSchedule> load;  // busy processes on the device
  std::string floor_variant;
  // The most the report's points may take on the host; a device sending more is stopped.
  uint64_t max_report_bytes = uint64_t{1} << 30;
};

struct FamilyRunReport {
  std::vector<double> expected_ms;  // small to large, as the device's controller used them
  uint64_t arena_bytes = 0;
  uint32_t threads = 0;
  std::vector<rt::DemoPoint> points;
};

struct FamilyVariantInfo {
  std::string name;
  uint64_t macs = 0;
};

struct RunSettings {
  int runs = 20;
  int warmup = 3;
  int threads = 0;
  // What one run may take on the device; 0: the agent's own limit (which these can only lower).
  int64_t max_run_bytes = 0;
  int64_t max_loop_iterations = 0;
  int64_t max_run_ms = 0;
  // A sustained run: after the runs above, the package keeps running until duration_s has
  // passed since the first measured run, reported per window of window_s seconds (0.1 to 60).
  // 0: none.
  double duration_s = 0;
  double window_s = 60;
  // The most the report may take on the host (runs × nodes × timings); a request that would
  // need more is refused before it is sent.
  uint64_t max_report_bytes = uint64_t{1} << 30;
};

// The agent's byte stream as the client uses it. ChildProcess is the real one; tests and the
// host protocol fuzzer play a device with their own.
class AgentStream {
 public:
  virtual ~AgentStream() = default;
  // Up to n bytes from the agent, 0 at the end of its stream.
  virtual Expected<size_t> read(uint8_t* buf, size_t n) = 0;
  virtual Status write(const uint8_t* buf, size_t n) = 0;
  virtual void close_stdin() = 0;
  // Ends the agent (a device that broke the protocol is not talked to any more).
  virtual void kill() = 0;
  // How the agent ended ("exited with status 1", "still running").
  virtual std::string wait_and_describe(std::chrono::milliseconds timeout) = 0;
  virtual std::string stderr_tail() = 0;
};

// The most an agent message may be on the host's side. The largest legitimate one is a run
// result or RunDone of a package with about a million nodes; the protocol's own limit, 256 MiB,
// is for the host's inputs and packages. Parsing can multiply a message's size (a repeated
// field of one-byte items), so this bound is also what one message can cost the host.
inline constexpr uint32_t kMaxAgentFrameBytes = 16u << 20;
// The longest text the host keeps from one field of the device's (names, shapes, messages).
inline constexpr size_t kMaxDeviceText = 4096;

class AgentClient {
 public:
  // `child` (or `stream`) is the agent's stream; it must outlive the client.
  explicit AgentClient(ChildProcess& child);
  explicit AgentClient(AgentStream& stream) : stream_(stream) {}
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  // Reads the agent's preamble and hello, sends the host's. Errors: not an agent, another
  // protocol version (both named).
  Expected<AgentHello> hello(const std::string& host_software);
  // Offers the package by hash and sends it in chunks when the agent lacks it; `progress` gets
  // the fraction sent. Returns whether the agent had it already. Errors: the agent's (disk full,
  // damaged in transit, rejected by the runtime).
  Expected<bool> send_package(std::span<const uint8_t> bytes,
                              const std::function<void(double)>& progress = {});
  // `on_run(i, total)` after each run arrives, `on_window` after each window of a sustained run.
  // A sustained run the host cancels (request_cancel) ends with the windows measured so far and
  // RunReport::stopped_early.
  Expected<RunReport> run(const std::vector<rt::HostTensor>& inputs, const RunSettings& settings,
                          const std::function<void(int, int)>& on_run = {},
                          const std::function<void(const SustainedWindow&)>& on_window = {});

  // Runs the family package sent last; `on_point` sees each run as it arrives. Errors: the
  // agent's (not a family, bad settings, a failed run) or a broken stream.
  // `on_started` sees the report's header (expected latencies, arena, threads) once the device
  // has warmed up, before the first point.
  Expected<FamilyRunReport> run_family(
      const std::vector<rt::HostTensor>& inputs, const FamilyRunSettings& settings,
      const std::function<void(const rt::DemoPoint&)>& on_point = {},
      const std::function<void(const FamilyRunReport&)>& on_started = {});

  // Asks the agent to stop the run request in progress (it answers CANCELLED and keeps serving).
  // Safe from another thread and from the `on_run` callback.
  Status request_cancel();

  uint32_t nodes() const { return nodes_; }
  // The node count of each graph of the package sent next or last (0: the main graph), from the
  // program the host has: the body-node times a run reports are checked against it. Unset, they
  // are checked against the package's size only.
  void expect_graphs(std::vector<uint32_t> nodes_per_graph) {
    graph_nodes_ = std::move(nodes_per_graph);
  }
  // The variants of the family package sent last, small to large (empty for a single model).
  const std::vector<FamilyVariantInfo>& variants() const { return variants_; }

 private:
  Status send_host(const std::string& bytes);
  // Why the stream broke, with the child's exit and stderr: `what` says when ("mid-run, after
  // 3 of 23 runs").
  Status broken(const Status& st, const std::string& what);
  // The device broke the protocol (`violation` says how): the agent is ended and every later
  // call returns this error.
  Status violated(const std::string& violation, const std::string& when);
  template <typename Message>
  Status read_message(Message* m, const std::string& what);
  // The thread count a device reports, against its cores (the protocol's 4 per core).
  Status check_threads(uint32_t threads) const;

  std::unique_ptr<AgentStream> owned_;  // the adapter over a ChildProcess
  AgentStream& stream_;
  std::mutex write_mu_;           // request_cancel() may write from another thread
  std::optional<Status> failed_;  // set once the device broke the protocol
  uint32_t nodes_ = 0;
  uint32_t device_cores_ = 0;
  uint64_t package_bytes_ = 0;
  std::vector<uint32_t> graph_nodes_;  // expect_graphs()
  std::vector<FamilyVariantInfo> variants_;
};

}  // namespace sod2::device
