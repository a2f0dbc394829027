#include "runtime/agent/sustained_window.h"

#include <algorithm>
#include <cmath>

#include "runtime/exec/nearest_rank.h"

namespace sod2::agent {

SustainedWindowBuilder::SustainedWindowBuilder(size_t nodes, const DeviceSensors* sensors)
    : sensors_(sensors), node_sum_ms_(nodes, 0.0) {}

void SustainedWindowBuilder::add_run(double latency_ms, std::span<const double> node_ms) {
  ++runs_;
  sum_ms_ += latency_ms;
  min_ms_ = runs_ == 1 ? latency_ms : std::min(min_ms_, latency_ms);
  max_ms_ = runs_ == 1 ? latency_ms : std::max(max_ms_, latency_ms);
  if (kept_.size() < kMaxKept) {
    kept_.push_back(static_cast<float>(latency_ms));
  } else {
    // Algorithm R: every run so far stays in the sample with the same probability.
    const uint64_t j = std::uniform_int_distribution<uint64_t>(0, runs_ - 1)(rng_);
    if (j < kMaxKept) kept_[j] = static_cast<float>(latency_ms);
  }
  const size_t n = std::min(node_ms.size(), node_sum_ms_.size());
  for (size_t i = 0; i < n; ++i) node_sum_ms_[i] += node_ms[i];
}

void SustainedWindowBuilder::sample_sensors(double t_s, double every_s) {
  if (!sensors_ || t_s - last_sample_s_ < every_s) return;
  last_sample_s_ = t_s;
  const SensorSnapshot snap = sensors_->read();
  for (const SensorValue& v : snap.values) {
    auto it = std::find_if(sensor_stats_.begin(), sensor_stats_.end(),
                           [&](const SensorStat& s) { return s.name == v.name; });
    if (it == sensor_stats_.end()) {
      sensor_stats_.push_back({v.name});
      it = sensor_stats_.end() - 1;
    }
    it->sum += v.value;
    it->max = std::max(it->max, v.value);
    ++it->n;
  }
  for (const std::string& why : snap.unreadable)
    if (said_unreadable_.insert(why).second) unreadable_.push_back(why);
}

wire::SustainedWindow SustainedWindowBuilder::close(uint32_t index, double start_s, double end_s,
                                                    int64_t rss_bytes) {
  wire::SustainedWindow w;
  w.set_index(index);
  w.set_start_s(start_s);
  w.set_end_s(end_s);
  w.set_runs(runs_);
  if (runs_ > 0) {
    std::sort(kept_.begin(), kept_.end());
    const auto at = [&](double q) {
      return static_cast<double>(rt::nearest_rank<float>(kept_, q));
    };
    // The sample's percentiles, kept inside the exact extremes (a float rounds).
    const auto inside = [&](double v) { return std::clamp(v, min_ms_, max_ms_); };
    w.set_min_ms(min_ms_);
    w.set_p50_ms(inside(at(0.50)));
    w.set_p90_ms(inside(at(0.90)));
    w.set_p99_ms(inside(at(0.99)));
    w.set_max_ms(max_ms_);
    w.set_mean_ms(sum_ms_ / static_cast<double>(runs_));
    for (double s : node_sum_ms_) w.add_group_mean_ms(s / static_cast<double>(runs_));
  }
  w.set_rss_bytes(rss_bytes);
  for (const SensorStat& s : sensor_stats_) {
    if (s.n == 0) continue;
    wire::SensorReading* r = w.add_sensors();
    r->set_name(s.name);
    r->set_mean(s.sum / static_cast<double>(s.n));
    r->set_max(s.max);
  }
  for (const std::string& why : unreadable_) w.add_unreadable(why);

  kept_.clear();
  runs_ = 0;
  sum_ms_ = min_ms_ = max_ms_ = 0;
  std::fill(node_sum_ms_.begin(), node_sum_ms_.end(), 0.0);
  sensor_stats_.clear();
  unreadable_.clear();
  last_sample_s_ = -std::numeric_limits<double>::infinity();  // every window reads them
  return w;
}

}  // namespace sod2::agent
