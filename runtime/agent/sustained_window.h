// One window of a sustained run, as the agent builds it: every run's latency and per-node times
// go in, and when the window closes it becomes the SustainedWindow message (PROTOCOL.md
// §Sustained runs). Memory stays bounded however many runs a window holds: latencies beyond
// kMaxKept are a uniform sample (reservoir), and the percentiles are taken over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/device_sensors.h"

namespace sod2::agent {

class SustainedWindowBuilder {
 public:
  // `sensors` may be null (no sensors are read); it must outlive the builder.
  SustainedWindowBuilder(size_t nodes, const DeviceSensors* sensors);

  void add_run(double latency_ms, std::span<const double> node_ms);
  // Reads the sensors when `every_s` has passed since the last reading (`t_s` on the run's
  // timeline); the first call always reads.
  void sample_sensors(double t_s, double every_s = 1.0);
  uint64_t runs() const { return runs_; }
  // The window as sent, covering [start_s, end_s]; the builder starts the next one empty.
  wire::SustainedWindow close(uint32_t index, double start_s, double end_s, int64_t rss_bytes);

  static constexpr size_t kMaxKept = size_t{1} << 20;

 private:
  struct SensorStat {
    std::string name;
    double sum = 0, max = -std::numeric_limits<double>::infinity();
    uint64_t n = 0;
  };
  const DeviceSensors* sensors_;
  std::vector<float> kept_;  // latencies, or a uniform sample of them
  uint64_t runs_ = 0;
  double sum_ms_ = 0, min_ms_ = 0, max_ms_ = 0;
  std::vector<double> node_sum_ms_;
  std::vector<SensorStat> sensor_stats_;  // in the order first read
  std::set<std::string> said_unreadable_;
  std::vector<std::string> unreadable_;  // said in the next window
  double last_sample_s_ = -std::numeric_limits<double>::infinity();
  std::mt19937_64 rng_{0x5eed};
};

}  // namespace sod2::agent
