#include "plugins/device/agent_client.h"

#include <algorithm>

#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/frame_io.h"
#include "runtime/package/sha256.h"

namespace sod2::device {
namespace {

using agent::wire::AgentMessage;
using agent::wire::HostMessage;

agent::ReadFn reader_of(ChildProcess& c) {
  return [&c](uint8_t* buf, size_t n) { return c.read(buf, n); };
}

Status agent_error(const agent::wire::Error& e) {
  using E = agent::wire::Error;
  const std::string& m = e.message();
  switch (e.code()) {
    case E::VERSION_MISMATCH: return unsupported(m);
    case E::DISK_FULL: return io_error("the device's disk is full: " + m);
    case E::PACKAGE_CHECKSUM: return io_error(m);
    case E::PACKAGE_REJECTED: return invalid_model("the agent rejected the package: " + m);
    case E::BAD_INPUTS: return invalid_argument("the agent rejected the inputs: " + m);
    case E::RUN_FAILED: return internal_error("a run failed on the device: " + m);
    case E::CANCELLED: return cancelled(m);
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

}  // namespace

Status AgentClient::broken(const Status& st, const std::string& what) {
  if (st.code() == StatusCode::kCancelled) return st;
  child_.close_stdin();
  const std::string how = child_.wait_and_describe(std::chrono::milliseconds(500));
  std::string msg = "the connection to the agent broke " + what + ": " + st.message();
  if (how != "still running") msg += "; the agent (or its transport) " + how;
  const std::string err = child_.stderr_tail();
  if (!err.empty()) {
    std::string last = err.substr(err.rfind('\n') == std::string::npos ? 0 : err.rfind('\n') + 1);
    msg += "; it said: \"" + last + "\"";
  }
  if (how.find("signal") != std::string::npos || err.find("device") != std::string::npos ||
      err.find("closed") != std::string::npos)
    msg += " (was the device unplugged or the agent killed?)";
  return Status(st.code() == StatusCode::kOk ? StatusCode::kIoError : st.code(), msg);
}

Status AgentClient::send_host(const std::string& bytes) {
  return child_.write(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

template <typename Message>
Status AgentClient::read_message(Message* m, const std::string& what) {
  agent::FrameReader reader(reader_of(child_));
  std::string frame;
  Expected<bool> more = reader.read_frame(&frame);
  if (!more.ok()) return broken(more.status(), what);
  if (!*more) return broken(io_error("the stream ended"), what);
  if (!m->ParseFromString(frame)) return broken(parse_error("a message does not parse"), what);
  return Status::ok_status();
}

Expected<AgentHello> AgentClient::hello(const std::string& host_software) {
  HostMessage h;
  h.mutable_hello()->set_protocol_version(agent::kProtocolVersion);
  h.mutable_hello()->set_software(host_software);
  // Written before reading: both sides greet at once. A failed write is reported after reading
  // what the other end said, which tells more (a shell's "not found", a version mismatch).
  SOD2_ASSIGN_OR_RETURN(const std::string out, frame_of(h));
  const Status wrote = send_host(out);
  agent::FrameReader reader(reader_of(child_));
  Status pre = reader.read_preamble();
  if (!pre.ok()) {
    // Not the protocol: show what the transport or shell said instead, and how it ended.
    std::string msg = pre.message();
    const std::string err = child_.stderr_tail();
    if (!err.empty()) msg += "; on stderr: \"" + err.substr(0, 300) + "\"";
    return Status(pre.code(), "starting the agent failed: " + msg);
  }
  AgentMessage m;
  SOD2_RETURN_IF_ERROR(read_message(&m, "at hello"));
  if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
  if (m.body_case() != AgentMessage::kHello)
    return broken(parse_error("the agent did not say hello first"), "at hello");
  const auto& a = m.hello();
  if (a.protocol_version() != agent::kProtocolVersion) {
    return unsupported("the agent speaks sod2 agent protocol " +
                       std::to_string(a.protocol_version()) + " (" + a.software() +
                       "), this host speaks " + std::to_string(agent::kProtocolVersion) + " (" +
                       host_software + "): use an agent built with the host's version");
  }
  if (!wrote.ok()) return broken(wrote, "at hello");
  AgentHello r;
  r.protocol_version = a.protocol_version();
  r.software = a.software();
  r.cpu = a.device().cpu();
  r.os = a.device().os();
  r.arch = a.device().arch();
  r.hostname = a.device().hostname();
  r.cores = a.device().cores();
  r.memory_bytes = a.device().memory_bytes();
  r.free_disk_bytes = a.device().free_disk_bytes();
  return r;
}

Expected<bool> AgentClient::send_package(std::span<const uint8_t> bytes,
                                         const std::function<void(double)>& progress) {
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
    return broken(parse_error("an unexpected answer to the package offer"), "offering the package");
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
    return broken(parse_error("an unexpected answer to the package"), "loading the package");
  nodes_ = m.loaded().nodes();
  variants_.clear();
  for (const auto& v : m.loaded().variants()) variants_.push_back({v.name(), v.macs()});
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
  for (;;) {
    AgentMessage m;
    SOD2_RETURN_IF_ERROR(read_message(
        &m, started ? "mid-run, after " + std::to_string(report.points.size()) + " runs"
                    : "while the device warmed up the variants"));
    switch (m.body_case()) {
      case AgentMessage::kError: return agent_error(m.error());
      case AgentMessage::kFamilyStarted:
        report.expected_ms.assign(m.family_started().expected_ms().begin(),
                                  m.family_started().expected_ms().end());
        report.arena_bytes = m.family_started().arena_bytes();
        report.threads = m.family_started().threads();
        started = true;
        if (on_started) on_started(report);
        continue;
      case AgentMessage::kFamilyPoint: {
        const auto& w = m.family_point();
        if (!started || w.variant() >= variants_.size()) {
          return broken(
              parse_error("a family run point for variant " + std::to_string(w.variant()) + " of " +
                          std::to_string(variants_.size())),
              "mid-run");
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
        if (m.family_done().points() != report.points.size()) {
          return broken(
              parse_error("the agent reported " + std::to_string(m.family_done().points()) +
                          " runs but sent " + std::to_string(report.points.size())),
              "at the end of the family run");
        }
        return report;
      default: return broken(parse_error("an unexpected message during a family run"), "mid-run");
    }
  }
}

Expected<RunReport> AgentClient::run(const std::vector<rt::HostTensor>& inputs,
                                     const RunSettings& s,
                                     const std::function<void(int, int)>& on_run) {
  HostMessage req;
  agent::wire::RunRequest* r = req.mutable_run();
  add_inputs(inputs, r->mutable_inputs());
  r->set_runs(static_cast<uint32_t>(s.runs));
  r->set_warmup(static_cast<uint32_t>(s.warmup));
  r->set_threads(static_cast<uint32_t>(s.threads));
  SOD2_ASSIGN_OR_RETURN(const std::string frame, frame_of(req));
  if (Status st = send_host(frame); !st.ok()) return broken(st, "sending the run request");
  const int total = s.runs + s.warmup;
  RunReport report;
  for (;;) {
    AgentMessage m;
    SOD2_RETURN_IF_ERROR(read_message(&m, "mid-run, after " + std::to_string(report.runs.size()) +
                                              " of " + std::to_string(total) + " runs"));
    if (m.body_case() == AgentMessage::kError) return agent_error(m.error());
    if (m.body_case() == AgentMessage::kResult) {
      const auto& w = m.result();
      if (static_cast<uint32_t>(w.group_ms_size()) != nodes_ ||
          w.group_start_ms_size() != w.group_ms_size())
        return broken(parse_error("a run result with " + std::to_string(w.group_ms_size()) +
                                  " group times for " + std::to_string(nodes_) + " groups"),
                      "mid-run");
      RunSample sample;
      sample.warmup = w.warmup();
      sample.latency_ms = w.latency_ms();
      sample.group_start_ms.assign(w.group_start_ms().begin(), w.group_start_ms().end());
      sample.group_ms.assign(w.group_ms().begin(), w.group_ms().end());
      sample.arena_bytes = w.arena_bytes();
      sample.rss_bytes = w.rss_bytes();
      sample.plan_version = w.plan_version();
      report.runs.push_back(std::move(sample));
      if (on_run) on_run(static_cast<int>(report.runs.size()), total);
      continue;
    }
    if (m.body_case() == AgentMessage::kDone) {
      const auto& d = m.done();
      if (report.runs.size() != static_cast<size_t>(total))
        return broken(parse_error("the agent finished after " + std::to_string(report.runs.size()) +
                                  " of " + std::to_string(total) + " runs"),
                      "mid-run");
      report.group_shapes.assign(d.group_shapes().begin(), d.group_shapes().end());
      report.group_output_bytes.assign(d.group_output_bytes().begin(),
                                       d.group_output_bytes().end());
      report.group_shapes.resize(nodes_);
      report.group_output_bytes.resize(nodes_);
      report.peak_rss_bytes = d.peak_rss_bytes();
      report.arena_capacity = d.arena_capacity();
      report.value_buffer_bytes = d.value_buffer_bytes();
      report.threads = d.threads();
      return report;
    }
    return broken(parse_error("an unexpected message during the runs"), "mid-run");
  }
}

}  // namespace sod2::device
