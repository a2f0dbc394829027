// libFuzzer target: arbitrary bytes as what a device's agent sends the host (PROTOCOL.md), read by
// the real AgentClient through a whole conversation: hello, a package, then runs or a family run.
// A hostile device must end in an error naming what it broke, never in a crash, a hang, memory
// that grows with what it sends, or a report that disagrees with what the host asked for.
//
// Input: one byte choosing the conversation (below), then the device's byte stream. Seeds:
// tests/fuzz/make_host_protocol_seed.py.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plugins/device/agent_client.h"

namespace {

using sod2::Expected;
using sod2::Status;
using sod2::device::AgentClient;
using sod2::device::AgentStream;

// The device: its stream is the input; what the host writes is dropped.
class DeviceBytes final : public AgentStream {
 public:
  DeviceBytes(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  Expected<size_t> read(uint8_t* buf, size_t n) override {
    if (killed_) return size_t{0};
    const size_t k = std::min(n, size_ - pos_);
    if (k > 0) std::memcpy(buf, data_ + pos_, k);
    pos_ += k;
    return k;
  }
  Status write(const uint8_t*, size_t) override { return Status::ok_status(); }
  void close_stdin() override {}
  void kill() override { killed_ = true; }
  std::string wait_and_describe(std::chrono::milliseconds) override {
    return killed_ ? "was killed by signal 9 (Killed)" : "exited with status 0";
  }
  std::string stderr_tail() override { return ""; }

 private:
  const uint8_t* data_;
  size_t size_, pos_ = 0;
  bool killed_ = false;
};

// A host-side invariant broke: a finding, like a crash.
[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "host_protocol_fuzzer: %s\n", what);
  std::abort();
}

bool time_ok(double v) { return std::isfinite(v) && v >= 0; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // mode bit 0: a family run (else runs); bits 1-2: runs - 1; bit 3: one warm-up run;
  // bits 4-5: threads; bit 6: cancel after the first result; bit 7: a second request after it.
  // Bits 0 and 6 together: runs followed by a sustained run of 2 s in windows of 0.5 s.
  const uint8_t mode = data[0];
  DeviceBytes device(data + 1, size - 1);
  AgentClient client(device);
  if (!client.hello("sod2 fuzz").ok()) return 0;
  // The package's size bounds what the device may claim about it (nodes, inputs, variants).
  static const std::vector<uint8_t> package(4096, 0x5a);
  if (!client.send_package(package).ok()) return 0;
  if (client.nodes() > package.size()) finding("a node count above the package's size kept");
  sod2::rt::HostTensor input(sod2::rt::DType::kFloat, sod2::rt::Shape{1, 4});
  const std::vector<sod2::rt::HostTensor> inputs{input};
  const int requests = (mode & 0x80) ? 2 : 1;
  const bool sustained = (mode & 0x41) == 0x41;
  for (int q = 0; q < requests; ++q) {
    if ((mode & 1) && !sustained) {
      sod2::device::FamilyRunSettings s;
      s.budget_ms = 5;
      s.duration_s = 1;
      s.max_report_bytes = 1 << 20;
      auto r = client.run_family(inputs, s);
      if (!r.ok()) continue;
      if (r->expected_ms.size() != client.variants().size())
        finding("a family report whose expected latencies do not match the variants");
      double last = 0;
      for (const sod2::rt::DemoPoint& p : r->points) {
        if (p.variant < 0 || static_cast<size_t>(p.variant) >= client.variants().size())
          finding("a family point for a variant that does not exist");
        if (!time_ok(p.t_s) || p.t_s < last || !time_ok(p.latency_ms))
          finding("a family point with a bad time kept");
        last = p.t_s;
      }
    } else {
      sod2::device::RunSettings s;
      s.runs = 1 + ((mode >> 1) & 3);
      s.warmup = (mode >> 3) & 1;
      s.threads = (mode >> 4) & 3;
      s.max_report_bytes = 16 << 20;
      if (sustained) {
        s.duration_s = 2;
        s.window_s = 0.5;
      }
      auto r = client.run(inputs, s, [&](int done, int) {
        if ((mode & 0x40) && !sustained && done == 1) (void)client.request_cancel();
      });
      if (!r.ok()) continue;
      if (!sustained && (!r->windows.empty() || r->stopped_early))
        finding("windows kept for a run without a duration");
      if (sustained && (r->windows.empty() || r->windows.size() > 5))
        finding("a sustained run with no windows, or more than its duration allows");
      double end = 0;
      for (size_t i = 0; i < r->windows.size(); ++i) {
        const sod2::device::SustainedWindow& w = r->windows[i];
        if (w.index != i) finding("a window out of order kept");
        if (!time_ok(w.start_s) || w.end_s < w.start_s || w.start_s + 1e-6 < end)
          finding("a window with bad times kept");
        end = w.end_s;
        if (w.runs > 0 && (w.group_mean_ms.size() != client.nodes() || !(w.min_ms <= w.p50_ms) ||
                           !(w.p50_ms <= w.p90_ms) || !(w.p90_ms <= w.p99_ms) ||
                           !(w.p99_ms <= w.max_ms)))
          finding("a window with inconsistent timings kept");
        if (w.sensors.size() > 256) finding("a window with more sensors than allowed kept");
      }
      if (r->runs.size() != static_cast<size_t>(s.runs + s.warmup))
        finding("a report with another number of runs than asked for");
      for (size_t i = 0; i < r->runs.size(); ++i) {
        const sod2::device::RunSample& run = r->runs[i];
        if (run.warmup != (i < static_cast<size_t>(s.warmup))) finding("a warm-up flag misplaced");
        if (run.group_ms.size() != client.nodes() || run.group_start_ms.size() != client.nodes())
          finding("a run with another number of group times than nodes");
        if (!time_ok(run.latency_ms)) finding("a run with a bad latency kept");
        for (double t : run.group_ms)
          if (!time_ok(t)) finding("a group with a bad time kept");
      }
      if (r->group_shapes.size() != client.nodes() ||
          r->group_output_bytes.size() != client.nodes())
        finding("per-group results that do not match the nodes");
    }
  }
  return 0;
}
