#include "plugins/device/agent_client.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/frame_io.h"
#include "runtime/exec/session.h"
#include "runtime/package/sha256.h"
#include "runtime/program/binding_layout.h"

namespace sod2::device {
namespace {

using agent::wire::AgentMessage;
using agent::wire::HostMessage;

// The most a device may claim: cores in its hello, variants in a family, sensors in a window
// (the agent reads at most 64 zones and 64 CPUs), reasons it could not read one in a run.
constexpr uint32_t kMaxDeviceCores = 1u << 16;
constexpr int kMaxFamilyVariants = 4096;
constexpr int kMaxWindowSensors = 256;
constexpr size_t kMaxSensorName = 128;
constexpr size_t kMaxUnreadableSensors = 256;

agent::ReadFn reader_of(AgentStream& c) {
  return [&c](uint8_t* buf, size_t n) { return c.read(buf, n); };
}

class ChildStream final : public AgentStream {
 public:
  explicit ChildStream(ChildProcess& c) : c_(c) {}
  Expected<size_t> read(uint8_t* buf, size_t n) override { return c_.read(buf, n); }
  Status write(const uint8_t* buf, size_t n) override { return c_.write(buf, n); }
  void close_stdin() override { c_.close_stdin(); }
  void kill() override { c_.kill(); }
  std::string wait_and_describe(std::chrono::milliseconds t) override {
    return c_.wait_and_describe(t);
  }
  std::string stderr_tail() override { return c_.stderr_tail(); }

 private:
  ChildProcess& c_;
};

// Device text shown to the user, cut to a length a message can carry.
std::string clipped(const std::string& s) {
  if (s.size() <= kMaxDeviceText) return s;
  return s.substr(0, kMaxDeviceText) + "... (" + std::to_string(s.size()) + " bytes)";
}

bool time_ok(double v) { return std::isfinite(v) && v >= 0; }

std::string size_text(uint64_t bytes) {
  const auto up = [bytes](int shift) {
    return (bytes >> shift) + ((bytes & ((uint64_t{1} << shift) - 1)) != 0 ? 1 : 0);
  };
  if (bytes < (uint64_t{1} << 20)) return std::to_string(up(10)) + " KiB";
  return std::to_string(up(20)) + " MiB";
}

// The body-node times of a RunDone, or why they cannot be the package's: each names a node that
// exists (against `graph_nodes`, the package's node count per graph, when the host gave them;
// else no index or count beyond what `package_bytes` could hold), once and in order, with a
// finite non-negative time and at least one call.
std::string check_body_nodes(
    const google::protobuf::RepeatedPtrField<agent::wire::BodyNodeTime>& body,
    const std::vector<uint32_t>& graph_nodes, uint64_t package_bytes) {
  uint64_t most = package_bytes;
  if (!graph_nodes.empty()) {
    most = 0;
    for (size_t g = 1; g < graph_nodes.size(); ++g) most += graph_nodes[g];
  }
  if (static_cast<uint64_t>(body.size()) > most)
    return std::to_string(body.size()) + " body-node times for a package with " +
           std::to_string(most) + (graph_nodes.empty() ? " bytes" : " nodes in its bodies");
  for (int i = 0; i < body.size(); ++i) {
    const agent::wire::BodyNodeTime& b = body[i];
    const std::string which =
        "body node " + std::to_string(b.node()) + " of graph " + std::to_string(b.graph());
    if (b.graph() == 0)
      return "a body-node time for node " + std::to_string(b.node()) +
             " of graph 0, the main graph (its times are the groups')";
    if (!graph_nodes.empty() && b.graph() >= graph_nodes.size())
      return "a time for " + which + ", but the package has " + std::to_string(graph_nodes.size()) +
             " graphs";
    if (!graph_nodes.empty() && b.node() >= graph_nodes[b.graph()])
      return "a time for " + which + ", which has " + std::to_string(graph_nodes[b.graph()]) +
             " nodes";
    if (graph_nodes.empty() && (b.graph() > package_bytes || b.node() > package_bytes))
      return "a time for " + which + ", beyond what the package's " +
             std::to_string(package_bytes) + " bytes could hold";
    if (i > 0 &&
        std::pair(b.graph(), b.node()) <= std::pair(body[i - 1].graph(), body[i - 1].node()))
      return "a time for " + which + " out of order or repeated";
    if (b.name().size() > kMaxDeviceText || b.op_type().size() > kMaxDeviceText)
      return "a name of " + std::to_string(b.name().size()) + " characters for " + which;
    if (!time_ok(b.total_ms()))
      return "a negative or non-finite time (" + std::to_string(b.total_ms()) + " ms) for " +
             which + " '" + b.name() + "'";
    if (b.calls() == 0) return "a time for " + which + " '" + b.name() + "', which never ran";
  }
  return "";
}

Status agent_error(const agent::wire::Error& e) {
  using E = agent::wire::Error;
  const std::string m = clipped(e.message());
  switch (e.code()) {
    case E::VERSION_MISMATCH: return unsupported(m);
    case E::DISK_FULL: return io_error("the device's disk is full: " + m);
    case E::PACKAGE_CHECKSUM: return io_error(m);
    case E::PACKAGE_REJECTED: return invalid_model("the agent rejected the package: " + m);
    case E::BAD_INPUTS: return invalid_argument("the agent rejected the inputs: " + m);
    case E::RUN_FAILED: return internal_error("a run failed on the device: " + m);
    case E::CANCELLED: return cancelled(m);
    case E::RESOURCE_EXHAUSTED: return resource_exhausted("the device refused: " + m);
    case E::INTERNAL: return internal_error("the agent failed: " + m);
    default: return io_error("the agent reported: " + m);
  }
}

// One framed message, ready to write. Errors: above the protocol's frame limit.
Expected<std::string> frame_of(const HostMessage& m) {
  std::string out;
  SOD2_RETURN_IF_ERROR(agent::write_frame(
      [&out](const uint8_t* b, size_t n) {
        out.append(reinterpret_cast<const char*>(b), n);
        return Status::ok_status();
      },
      m));
  return out;
}

using agent::kMaxWindowS;
using agent::kMinWindowS;

// Windows a sustained run of `s` may send: one per window_s of its duration and one more for
// rounding on the device's clock.
uint64_t max_windows(const RunSettings& s) {
  return s.duration_s > 0 ? static_cast<uint64_t>(std::ceil(s.duration_s / s.window_s)) + 1 : 0;
}

// A window from the device, or why it cannot be one. `previous_end_s`: where the last window
// ended (windows follow each other on one timeline).
std::string check_window(const agent::wire::SustainedWindow& w, uint32_t nodes,
                         double previous_end_s) {
  const auto finite = [](double v) { return std::isfinite(v); };
  if (!time_ok(w.start_s()) || !time_ok(w.end_s()) || w.end_s() < w.start_s() ||
      w.start_s() + 1e-6 < previous_end_s)
    return "times " + std::to_string(w.start_s()) + " to " + std::to_string(w.end_s()) +
           " s after a window that ended at " + std::to_string(previous_end_s) + " s";
  if (w.rss_bytes() < 0) return "a resident set of " + std::to_string(w.rss_bytes()) + " bytes";
  if (w.runs() == 0) {
    if (w.group_mean_ms_size() != 0 || w.max_ms() != 0 || w.mean_ms() != 0)
      return "timings without runs";
  } else {
    const double slack = 1e-9 * std::max(1.0, std::fabs(w.max_ms()));
    const bool ordered = time_ok(w.min_ms()) && finite(w.max_ms()) && finite(w.p50_ms()) &&
                         finite(w.p90_ms()) && finite(w.p99_ms()) && finite(w.mean_ms()) &&
                         w.min_ms() <= w.p50_ms() && w.p50_ms() <= w.p90_ms() &&
                         w.p90_ms() <= w.p99_ms() && w.p99_ms() <= w.max_ms() &&
                         w.mean_ms() + slack >= w.min_ms() && w.mean_ms() <= w.max_ms() + slack;
    if (!ordered)
      return "latencies out of order (min " + std::to_string(w.min_ms()) + ", p50 " +
             std::to_string(w.p50_ms()) + ", p90 " + std::to_string(w.p90_ms()) + ", p99 " +
             std::to_string(w.p99_ms()) + ", max " + std::to_string(w.max_ms()) + ", mean " +
             std::to_string(w.mean_ms()) + " ms)";
    if (static_cast<uint32_t>(w.group_mean_ms_size()) != nodes)
      return std::to_string(w.group_mean_ms_size()) + " group times for " + std::to_string(nodes) +
             " groups";
    for (double g : w.group_mean_ms())
      if (!time_ok(g)) return "a group time of " + std::to_string(g) + " ms";
  }
  if (w.sensors_size() > kMaxWindowSensors)
    return std::to_string(w.sensors_size()) + " sensors (at most " +
           std::to_string(kMaxWindowSensors) + ")";
  std::set<std::string> names;
  for (const auto& r : w.sensors()) {
    if (!names.insert(r.name()).second)
      return "the sensor \"" + clipped(r.name().substr(0, kMaxSensorName)) + "\" twice";
    if (r.name().empty() || r.name().size() > kMaxSensorName || !finite(r.mean()) ||
        !finite(r.max()) || r.mean() > r.max() + 1e-9 * std::max(1.0, std::fabs(r.max())))
      return "a sensor \"" + clipped(r.name().substr(0, kMaxSensorName)) + "\" reading mean " +
             std::to_string(r.mean()) + ", max " + std::to_string(r.max());
  }
  for (const std::string& why : w.unreadable())
    if (why.size() > kMaxDeviceText)
      return "a sensor note of " + std::to_string(why.size()) + " characters";
  return {};
}

SustainedWindow window_from(const agent::wire::SustainedWindow& w) {
  SustainedWindow out;
  out.index = w.index();
  out.start_s = w.start_s();
  out.end_s = w.end_s();
  out.runs = w.runs();
  out.min_ms = w.min_ms();
  out.p50_ms = w.p50_ms();
  out.p90_ms = w.p90_ms();
  out.p99_ms = w.p99_ms();
  out.max_ms = w.max_ms();
  out.mean_ms = w.mean_ms();
  out.group_mean_ms.assign(w.group_mean_ms().begin(), w.group_mean_ms().end());
  out.rss_bytes = w.rss_bytes();
  for (const auto& r : w.sensors()) out.sensors.push_back({r.name(), r.mean(), r.max()});
  return out;
}

}  // namespace

AgentClient::AgentClient(ChildProcess& child)
    : owned_(std::make_unique<ChildStream>(child)), stream_(*owned_) {}

AgentClient::~AgentClient() = default;

Status AgentClient::broken(const Status& st, const std::string& what) {
  if (st.code() == StatusCode::kCancelled) return st;
  stream_.close_stdin();
  const std::string how = stream_.wait_and_describe(std::chrono::milliseconds(500));
  std::string msg = "the connection to the agent broke " + what + ": " + st.message();
  if (how != "still running") msg += "; the agent (or its transport) " + how;
  const std::string err = stream_.stderr_tail();
  if (!err.empty()) {
    std::string last = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    msg += "; it said: \"" + clipped(last) + "\"";
  }
  if (how.find("signal") != std::string::npos || err.find("device") != std::string::npos ||
      err.find("closed") != std::string::npos)
    msg += " (was the device unplugged or the agent killed?)";
  return Status(st.code() == StatusCode::kOk ? StatusCode::kIoError : st.code(), msg);
}

Status AgentClient::violated(const std::string& violation, const std::string& when) {
  // Nothing more it says can be trusted, and reading on could cost without end.
  stream_.close_stdin();
  stream_.kill();
  (void)stream_.wait_and_describe(std::chrono::milliseconds(500));
  failed_ = parse_error("the device broke the agent protocol " + when + ": " + violation +
                        "; sod2 stopped the agent (a faulty or foreign sod2-agent on the device? "
                        "reinstall it with this version of sod2, or report this)");
  return *failed_;
}

Status AgentClient::send_host(const std::string& bytes) {
  std::lock_guard lock(write_mu_);
  return stream_.write(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

Status AgentClient::request_cancel() {
  HostMessage c;
  c.mutable_cancel();
  SOD2_ASSIGN_OR_RETURN(const std::string frame, frame_of(c));
  return send_host(frame);
}

template <typename Message>
Status AgentClient::read_message(Message* m, const std::string& what) {
  agent::FrameReader reader(reader_of(stream_), kMaxAgentFrameBytes);
  std::string frame;
  Expected<bool> more = reader.read_frame(&frame);
  if (!more.ok()) {
    if (more.status().code() == StatusCode::kParseError)
      return violated(more.status().message(), what);
    return broken(more.status(), what);
  }
  if (!*more) return broken(io_error("the stream ended"), what);
  if (!m->ParseFromString(frame)) return violated("a message that does not parse", what);
  return Status::ok_status();
}

Expected<AgentHello> AgentClient::hello(const std::string& host_software) {
  if (failed_) return *failed_;
  HostMessage h;
  h.mutable_hello()->set_protocol_version(agent::kProtocolVersion);
  h.mutable_hello()->set_software(host_software);
  // Written before reading: both sides greet at once. A failed write is reported after reading
  // what the other end said, which tells more (a shell's "not found", a version mismatch).
  SOD2_ASSIGN_OR_RETURN(const std::string out, frame_of(h));
  const Status wrote = send_host(out);
  agent::FrameReader reader(reader_of(stream_), kMaxAgentFrameBytes);
  Status pre = reader.read_preamble();
  if (!pre.ok()) {
    // Not the protocol: show what the transport or shell said instead, and how it ended.
    std::string msg = pre.message();
    const std::string err = stream_.stderr_tail();
    if (!err.empty()) msg += "; on stderr: \"" + err.substr(0, 300) + "\"";
    return Status(pre.code(), "starting the agent failed: " + msg);
  }
  AgentMessage m;
  SOD2_RETURN_IF_ERROR(read_message(&m, "at hello"));
  if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
  if (m.body_case() != AgentMessage::kHello)
    return violated("its first message is not a hello", "at hello");
  const auto& a = m.hello();
  if (a.protocol_version() != agent::kProtocolVersion) {
    return unsupported("the agent speaks sod2 agent protocol " +
                       std::to_string(a.protocol_version()) + " (" + clipped(a.software()) +
                       "), this host speaks " + std::to_string(agent::kProtocolVersion) + " (" +
                       host_software + "): use an agent built with the host's version");
  }
  const auto& d = a.device();
  for (const auto& [name, text] :
       {std::pair<const char*, const std::string*>{"software", &a.software()},
        {"cpu", &d.cpu()},
        {"os", &d.os()},
        {"arch", &d.arch()},
        {"hostname", &d.hostname()}}) {
    if (text->size() > kMaxDeviceText) {
      return violated("its hello has a " + std::to_string(text->size()) + "-byte " + name +
                          " (at most " + std::to_string(kMaxDeviceText) + ")",
                      "at hello");
    }
  }
  if (d.cores() > kMaxDeviceCores) {
    return violated("its hello claims " + std::to_string(d.cores()) + " cores (at most " +
                        std::to_string(kMaxDeviceCores) + ")",
                    "at hello");
  }
  if (!wrote.ok()) return broken(wrote, "at hello");
  AgentHello r;
  r.protocol_version = a.protocol_version();
  r.software = a.software();
  r.cpu = d.cpu();
  r.os = d.os();
  r.arch = d.arch();
  r.hostname = d.hostname();
  r.cores = d.cores();
  r.memory_bytes = d.memory_bytes();
  r.free_disk_bytes = d.free_disk_bytes();
  device_cores_ = d.cores();
  return r;
}

Expected<bool> AgentClient::send_package(std::span<const uint8_t> bytes,
                                         const std::function<void(double)>& progress) {
  if (failed_) return *failed_;
  const rt::Sha256Digest digest = rt::sha256(bytes);
  HostMessage offer;
  offer.mutable_offer()->set_sha256(std::string(digest.begin(), digest.end()));
  offer.mutable_offer()->set_size(bytes.size());
  SOD2_ASSIGN_OR_RETURN(const std::string offer_frame, frame_of(offer));
  if (Status st = send_host(offer_frame); !st.ok()) return broken(st, "offering the package");
  AgentMessage m;
  SOD2_RETURN_IF_ERROR(read_message(&m, "offering the package"));
  if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
  if (m.body_case() != AgentMessage::kPackageStatus)
    return violated("it answered the package offer with something else", "offering the package");
  const bool cached = m.package_status().cached();
  if (!cached) {
    for (size_t off = 0; off < bytes.size(); off += agent::kChunkBytes) {
      const size_t n = std::min(agent::kChunkBytes, bytes.size() - off);
      HostMessage c;
      c.mutable_chunk()->set_offset(off);
      c.mutable_chunk()->set_data(reinterpret_cast<const char*>(bytes.data() + off), n);
      SOD2_ASSIGN_OR_RETURN(const std::string chunk_frame, frame_of(c));
      if (Status st = send_host(chunk_frame); !st.ok()) {
        // The agent may have refused mid-way (disk full) and said why before closing.
        AgentMessage why;
        if (read_message(&why, "sending the package").ok() &&
            why.body_case() == AgentMessage::kError)
          return agent_error(why.error());
        if (failed_) return *failed_;
        return broken(st, "sending the package (" + std::to_string(off) + " of " +
                              std::to_string(bytes.size()) + " bytes)");
      }
      if (progress) progress(static_cast<double>(off + n) / static_cast<double>(bytes.size()));
    }
  }
  HostMessage end;
  end.mutable_end();
  SOD2_ASSIGN_OR_RETURN(const std::string end_frame, frame_of(end));
  if (Status st = send_host(end_frame); !st.ok()) return broken(st, "sending the package");
  SOD2_RETURN_IF_ERROR(read_message(&m, "loading the package"));
  if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
  if (m.body_case() != AgentMessage::kLoaded)
    return violated("it answered the package with something else", "loading the package");
  const auto& l = m.loaded();
  // Every node, input and variant takes bytes of the package: a count above its size is made up.
  const uint64_t size = bytes.size();
  if (l.nodes() > size || static_cast<uint64_t>(l.inputs_size()) > size) {
    return violated("it says the " + std::to_string(size) + "-byte package has " +
                        std::to_string(l.nodes()) + " nodes and " +
                        std::to_string(l.inputs_size()) + " inputs",
                    "loading the package");
  }
  if (l.variants_size() > kMaxFamilyVariants || static_cast<uint64_t>(l.variants_size()) > size) {
    return violated("it says the package has " + std::to_string(l.variants_size()) +
                        " variants (at most " + std::to_string(kMaxFamilyVariants) + ")",
                    "loading the package");
  }
  for (const auto& v : l.variants()) {
    if (v.name().size() > kMaxDeviceText) {
      return violated("a variant name of " + std::to_string(v.name().size()) + " bytes",
                      "loading the package");
    }
  }
  nodes_ = l.nodes();
  package_bytes_ = size;
  variants_.clear();
  for (const auto& v : l.variants()) variants_.push_back({v.name(), v.macs()});
  return cached;
}

namespace {

void add_inputs(const std::vector<rt::HostTensor>& inputs,
                google::protobuf::RepeatedPtrField<agent::wire::Tensor>* out) {
  for (const rt::HostTensor& t : inputs) {
    agent::wire::Tensor* w = out->Add();
    w->set_dtype(static_cast<uint32_t>(t.dtype()));
    for (int64_t d : t.shape().dims()) w->add_dims(d);
    w->set_data(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
  }
}

}  // namespace

Expected<FamilyRunReport> AgentClient::run_family(
    const std::vector<rt::HostTensor>& inputs, const FamilyRunSettings& s,
    const std::function<void(const rt::DemoPoint&)>& on_point,
    const std::function<void(const FamilyRunReport&)>& on_started) {
  if (failed_) return *failed_;
  HostMessage req;
  agent::wire::FamilyRunRequest* r = req.mutable_family_run();
  add_inputs(inputs, r->mutable_inputs());
  r->set_budget_ms(s.budget_ms);
  r->set_duration_s(s.duration_s);
  r->set_threads(static_cast<uint32_t>(s.threads));
  r->set_managed(s.managed);
  for (double e : s.expected_ms) r->add_expected_ms(e);
  if (s.load) {
    r->set_load_start_s(s.load->start_s);
    r->set_load_stop_s(s.load->stop_s);
    r->set_load_processes(static_cast<uint32_t>(s.load->threads));
  }
  r->set_floor_variant(s.floor_variant);
  SOD2_ASSIGN_OR_RETURN(const std::string frame, frame_of(req));
  if (Status st = send_host(frame); !st.ok()) return broken(st, "sending the family run request");
  FamilyRunReport report;
  bool started = false;
  uint64_t report_bytes = 0;
  for (;;) {
    AgentMessage m;
    const std::string when =
        started ? "mid-run, after " + std::to_string(report.points.size()) + " runs"
                : "while the device warmed up the variants";
    SOD2_RETURN_IF_ERROR(read_message(&m, when));
    switch (m.body_case()) {
      case AgentMessage::kError: return agent_error(m.error());
      case AgentMessage::kFamilyStarted: {
        const auto& f = m.family_started();
        if (started) return violated("it started the family run twice", when);
        if (static_cast<size_t>(f.expected_ms_size()) != variants_.size())
          return violated(std::to_string(f.expected_ms_size()) + " expected latencies for " +
                              std::to_string(variants_.size()) + " variants",
                          when);
        for (double e : f.expected_ms())
          if (!time_ok(e))
            return violated("an expected latency of " + std::to_string(e) + " ms", when);
        if (Status st = check_threads(f.threads()); !st.ok()) return violated(st.message(), when);
        report.expected_ms.assign(f.expected_ms().begin(), f.expected_ms().end());
        report.arena_bytes = f.arena_bytes();
        report.threads = f.threads();
        started = true;
        if (on_started) on_started(report);
        continue;
      }
      case AgentMessage::kFamilyPoint: {
        const auto& w = m.family_point();
        if (!started) return violated("a family run point before the run started", when);
        if (w.variant() >= variants_.size()) {
          return violated("a family run point for variant " + std::to_string(w.variant()) + " of " +
                              std::to_string(variants_.size()),
                          when);
        }
        const double last_t = report.points.empty() ? 0.0 : report.points.back().t_s;
        if (!time_ok(w.t_s()) || w.t_s() < last_t || !time_ok(w.latency_ms())) {
          return violated("a family run point at " + std::to_string(w.t_s()) + " s (after " +
                              std::to_string(last_t) + " s) with a latency of " +
                              std::to_string(w.latency_ms()) + " ms",
                          when);
        }
        if (w.decision().size() > kMaxDeviceText) {
          return violated(
              "a controller decision of " + std::to_string(w.decision().size()) + " bytes", when);
        }
        report_bytes += sizeof(rt::DemoPoint) + w.decision().size();
        if (report_bytes > s.max_report_bytes) {
          // Legitimate or not, the host cannot keep more: the agent is stopped like a faulty one.
          Status st = violated("it sent more than " + size_text(s.max_report_bytes) +
                                   " of points (" + std::to_string(report.points.size()) +
                                   ") for a " + std::to_string(s.duration_s) + " s run",
                               when);
          failed_ =
              resource_exhausted(st.message() +
                                 "; if the device is that fast, run it for a shorter time or raise "
                                 "FamilyRunSettings::max_report_bytes");
          return *failed_;
        }
        rt::DemoPoint p;
        p.t_s = w.t_s();
        p.variant = static_cast<int>(w.variant());
        p.latency_ms = w.latency_ms();
        p.budget_ms = s.budget_ms;
        p.load_active = w.load_active();
        p.switched = w.switched();
        p.decision = w.decision();
        if (on_point) on_point(p);
        report.points.push_back(std::move(p));
        continue;
      }
      case AgentMessage::kFamilyDone:
        if (!started || m.family_done().points() != report.points.size()) {
          return violated("it reported " + std::to_string(m.family_done().points()) +
                              " runs but sent " + std::to_string(report.points.size()),
                          "at the end of the family run");
        }
        return report;
      default: return violated("an unexpected message during a family run", when);
    }
  }
}

Status AgentClient::check_threads(uint32_t threads) const {
  const uint64_t most = device_cores_ > 0 ? uint64_t{device_cores_} * rt::kMaxThreadsPerCore
                                          : uint64_t{kMaxDeviceCores} * rt::kMaxThreadsPerCore;
  if (threads >= 1 && threads <= most) return Status::ok_status();
  return parse_error("it says it ran on " + std::to_string(threads) + " threads (1 to " +
                     std::to_string(most) + " on its " + std::to_string(device_cores_) + " cores)");
}

Expected<RunReport> AgentClient::run(const std::vector<rt::HostTensor>& inputs,
                                     const RunSettings& s,
                                     const std::function<void(int, int)>& on_run,
                                     const std::function<void(const SustainedWindow&)>& on_window) {
  if (failed_) return *failed_;
  if (s.runs < 1 || s.warmup < 0 || s.threads < 0 || s.max_run_bytes < 0 ||
      s.max_loop_iterations < 0 || s.max_run_ms < 0) {
    return invalid_argument(
        "run settings need runs >= 1 and no negative warm-up, threads or "
        "limits");
  }
  if (!(s.duration_s >= 0 && s.duration_s <= 1e7) ||
      (s.duration_s > 0 && !(s.window_s >= kMinWindowS && s.window_s <= kMaxWindowS))) {
    return invalid_argument("a sustained run needs a duration from 0 s and windows from " +
                            std::to_string(kMinWindowS) + " to " + std::to_string(kMaxWindowS) +
                            " s (asked: " + std::to_string(s.duration_s) + " s in windows of " +
                            std::to_string(s.window_s) + " s)");
  }
  const uint64_t total = uint64_t(s.runs) + uint64_t(s.warmup);
  // What the report will hold if the device sends what it should: refused before asking.
  const uint64_t per_run = sizeof(RunSample) + 2 * sizeof(double) * uint64_t{nodes_};
  const uint64_t windows = max_windows(s);
  const uint64_t per_window = sizeof(SustainedWindow) + sizeof(double) * uint64_t{nodes_} +
                              kMaxWindowSensors * (sizeof(SensorStat) + kMaxSensorName);
  const uint64_t need = total > UINT32_MAX || windows > UINT32_MAX
                            ? UINT64_MAX
                            : total * per_run + windows * per_window;
  if (need > s.max_report_bytes) {
    return resource_exhausted(
        "a report of " + std::to_string(total) + " runs" +
        (windows ? " and " + std::to_string(windows) + " windows" : std::string()) +
        " of a package with " + std::to_string(nodes_) + " nodes would take " + size_text(need) +
        " on the host (at most " + size_text(s.max_report_bytes) +
        ", RunSettings::max_report_bytes): ask for fewer runs" +
        (windows ? ", a shorter duration or longer windows" : ""));
  }
  HostMessage req;
  agent::wire::RunRequest* r = req.mutable_run();
  add_inputs(inputs, r->mutable_inputs());
  r->set_runs(static_cast<uint32_t>(s.runs));
  r->set_warmup(static_cast<uint32_t>(s.warmup));
  r->set_threads(static_cast<uint32_t>(s.threads));
  r->set_max_bytes(static_cast<uint64_t>(s.max_run_bytes));
  r->set_max_loop_iterations(static_cast<uint64_t>(s.max_loop_iterations));
  r->set_max_run_ms(static_cast<uint64_t>(s.max_run_ms));
  if (s.duration_s > 0) {
    r->set_duration_s(s.duration_s);
    r->set_window_s(s.window_s);
  }
  SOD2_ASSIGN_OR_RETURN(const std::string frame, frame_of(req));
  if (Status st = send_host(frame); !st.ok()) return broken(st, "sending the run request");
  RunReport report;
  for (;;) {
    AgentMessage m;
    const std::string when =
        "mid-run, after " + std::to_string(report.runs.size()) + " of " + std::to_string(total) +
        " runs" +
        (windows ? " and " + std::to_string(report.windows.size()) + " windows" : std::string());
    SOD2_RETURN_IF_ERROR(read_message(&m, when));
    if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
    if (m.body_case() == AgentMessage::kResult) {
      const auto& w = m.result();
      const size_t next = report.runs.size();
      if (next >= total) {
        return violated(
            "it sent a run result beyond the " + std::to_string(total) + " runs asked for", when);
      }
      if (w.index() != next || w.warmup() != (next < static_cast<size_t>(s.warmup))) {
        return violated(
            "it sent run result " + std::to_string(w.index()) + (w.warmup() ? " (warm-up)" : "") +
                " where run " + std::to_string(next) +
                (next < static_cast<size_t>(s.warmup) ? " (warm-up)" : "") + " was next",
            when);
      }
      if (static_cast<uint32_t>(w.group_ms_size()) != nodes_ ||
          w.group_start_ms_size() != w.group_ms_size()) {
        return violated("a run result with " + std::to_string(w.group_ms_size()) +
                            " group times and " + std::to_string(w.group_start_ms_size()) +
                            " start times for " + std::to_string(nodes_) + " groups",
                        when);
      }
      bool times_ok = time_ok(w.latency_ms());
      for (int g = 0; times_ok && g < w.group_ms_size(); ++g)
        times_ok = time_ok(w.group_ms(g)) && time_ok(w.group_start_ms(g));
      if (!times_ok) {
        return violated("run result " + std::to_string(next) +
                            " has a negative or non-finite time (latency " +
                            std::to_string(w.latency_ms()) + " ms)",
                        when);
      }
      if (w.arena_bytes() < 0 || w.rss_bytes() < 0 ||
          w.plan_version() < plan::kBindingGreedyVersion) {
        return violated("run result " + std::to_string(next) + " has arena " +
                            std::to_string(w.arena_bytes()) + " bytes, resident set " +
                            std::to_string(w.rss_bytes()) + " bytes, plan version " +
                            std::to_string(w.plan_version()),
                        when);
      }
      // A package names at most as many symbols as its bytes could hold; no symbol is negative.
      if (static_cast<uint64_t>(w.symbol_values_size()) > package_bytes_ ||
          std::any_of(w.symbol_values().begin(), w.symbol_values().end(),
                      [](int64_t v) { return v < 0; })) {
        return violated("run result " + std::to_string(next) + " reports " +
                            std::to_string(w.symbol_values_size()) +
                            " symbol values (some negative, or more than the package holds)",
                        when);
      }
      RunSample sample;
      sample.warmup = w.warmup();
      sample.latency_ms = w.latency_ms();
      sample.group_start_ms.assign(w.group_start_ms().begin(), w.group_start_ms().end());
      sample.group_ms.assign(w.group_ms().begin(), w.group_ms().end());
      sample.arena_bytes = w.arena_bytes();
      sample.rss_bytes = w.rss_bytes();
      sample.plan_version = w.plan_version();
      sample.symbol_values.assign(w.symbol_values().begin(), w.symbol_values().end());
      report.runs.push_back(std::move(sample));
      if (on_run) on_run(static_cast<int>(report.runs.size()), static_cast<int>(total));
      continue;
    }
    if (m.body_case() == AgentMessage::kWindow) {
      const auto& w = m.window();
      if (report.windows.size() >= windows) {
        return violated(windows ? "it sent more than the " + std::to_string(windows) +
                                      " windows a sustained run of " +
                                      std::to_string(s.duration_s) + " s can have"
                                : "it sent a sustained window for a run without a duration",
                        when);
      }
      if (w.index() != report.windows.size()) {
        return violated("it sent window " + std::to_string(w.index()) + " where window " +
                            std::to_string(report.windows.size()) + " was next",
                        when);
      }
      const double previous_end = report.windows.empty() ? 0 : report.windows.back().end_s;
      if (std::string why = check_window(w, nodes_, previous_end); !why.empty())
        return violated("window " + std::to_string(w.index()) + " has " + why, when);
      if (report.unreadable_sensors.size() + static_cast<size_t>(w.unreadable_size()) >
          kMaxUnreadableSensors) {
        return violated("it reported more than " + std::to_string(kMaxUnreadableSensors) +
                            " unreadable sensors",
                        when);
      }
      report.unreadable_sensors.insert(report.unreadable_sensors.end(), w.unreadable().begin(),
                                       w.unreadable().end());
      report.windows.push_back(window_from(w));
      if (on_window) on_window(report.windows.back());
      continue;
    }
    if (m.body_case() == AgentMessage::kDone) {
      const auto& d = m.done();
      if (windows > 0 && report.windows.empty()) {
        // Not a violation: an agent from before sustained runs ignores the duration.
        return unsupported(
            "the agent on the device ran " + std::to_string(total) +
            " runs but no sustained run: it is older than this sod2 (it ignores a run's "
            "duration); reinstall it with this version of sod2");
      }
      if (d.stopped_early() && windows == 0)
        return violated("it says a run without a duration stopped early", "at the end of the runs");
      if (report.runs.size() != total) {
        return violated("it finished after " + std::to_string(report.runs.size()) + " of " +
                            std::to_string(total) + " runs",
                        when);
      }
      if (static_cast<uint32_t>(d.group_shapes_size()) > nodes_ ||
          static_cast<uint32_t>(d.group_output_bytes_size()) > nodes_) {
        return violated(std::to_string(d.group_shapes_size()) + " shapes and " +
                            std::to_string(d.group_output_bytes_size()) + " output sizes for " +
                            std::to_string(nodes_) + " groups",
                        "at the end of the runs");
      }
      for (const std::string& shape : d.group_shapes()) {
        if (shape.size() > kMaxDeviceText)
          return violated("a shape of " + std::to_string(shape.size()) + " characters",
                          "at the end of the runs");
      }
      for (int64_t b : d.group_output_bytes()) {
        if (b < 0)
          return violated("an output of " + std::to_string(b) + " bytes", "at the end of the runs");
      }
      if (d.peak_rss_bytes() < 0)
        return violated("a peak resident set of " + std::to_string(d.peak_rss_bytes()) + " bytes",
                        "at the end of the runs");
      if (Status st = check_threads(d.threads()); !st.ok())
        return violated(st.message(), "at the end of the runs");
      if (std::string why = check_body_nodes(d.body_nodes(), graph_nodes_, package_bytes_);
          !why.empty())
        return violated("it sent " + why, "at the end of the runs");
      report.group_shapes.assign(d.group_shapes().begin(), d.group_shapes().end());
      report.group_output_bytes.assign(d.group_output_bytes().begin(),
                                       d.group_output_bytes().end());
      report.group_shapes.resize(nodes_);
      report.group_output_bytes.resize(nodes_);
      report.peak_rss_bytes = d.peak_rss_bytes();
      report.arena_capacity = d.arena_capacity();
      report.value_buffer_bytes = d.value_buffer_bytes();
      report.threads = d.threads();
      report.stopped_early = d.stopped_early();
      for (const agent::wire::BodyNodeTime& b : d.body_nodes())
        report.body_nodes.push_back(
            {b.graph(), b.node(), b.name(), b.op_type(), b.total_ms(), b.calls()});
      return report;
    }
    return violated("an unexpected message during the runs", when);
  }
}

}  // namespace sod2::device
