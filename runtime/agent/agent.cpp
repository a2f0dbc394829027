#include "runtime/agent/agent.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/device_info.h"
#include "runtime/exec/process_info.h"
#include "runtime/exec/session.h"
#include "runtime/family/family_demo.h"
#include "runtime/family/family_package.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/package/sha256.h"

namespace sod2::agent {
namespace {

using wire::AgentMessage;
using wire::HostMessage;

class Agent {
 public:
  Agent(const ReadFn& read, const WriteFn& write, const AgentOptions& options)
      : reader_(read), write_(write), options_(options) {}

  Status serve() {
    SOD2_RETURN_IF_ERROR(write_preamble(write_));
    SOD2_RETURN_IF_ERROR(send_hello());
    std::string frame;
    bool greeted = false;
    for (;;) {
      HostMessage m;
      if (!pending_.empty()) {
        m = std::move(pending_.front());
        pending_.pop_front();
      } else {
        if (host_closed_) return Status::ok_status();
        SOD2_ASSIGN_OR_RETURN(const bool more, reader_.read_frame(&frame));
        if (!more) return Status::ok_status();
        if (!m.ParseFromString(frame)) {
          return fail(wire::Error::BAD_MESSAGE, "a message from the host does not parse");
        }
      }
      if (!greeted) {
        if (m.body_case() != HostMessage::kHello)
          return fail(wire::Error::BAD_MESSAGE, "the host must say hello first");
        if (m.hello().protocol_version() != kProtocolVersion) {
          return fail(wire::Error::VERSION_MISMATCH,
                      "the host speaks sod2 agent protocol " +
                          std::to_string(m.hello().protocol_version()) + " (" +
                          m.hello().software() + "), this agent speaks " +
                          std::to_string(kProtocolVersion) + " (" + options_.software +
                          "): use an agent built with the host's version");
        }
        greeted = true;
        continue;
      }
      Status st = handle(m);
      if (!st.ok()) return st;
    }
  }

 private:
  Status send(const AgentMessage& m) { return write_frame(write_, m); }

  // Tells the host and keeps serving (the host decides what to do next).
  Status report(wire::Error::Code code, const std::string& message) {
    AgentMessage m;
    m.mutable_error()->set_code(code);
    m.mutable_error()->set_message(message);
    return send(m);
  }
  // Tells the host and stops: the conversation cannot go on.
  Status fail(wire::Error::Code code, const std::string& message) {
    SOD2_RETURN_IF_ERROR(report(code, message));
    return invalid_argument(message);
  }

  Status send_hello() {
    AgentMessage m;
    wire::Hello* h = m.mutable_hello();
    h->set_protocol_version(kProtocolVersion);
    h->set_software(options_.software);
    const MachineInfo info = machine_info(options_.dir);
    wire::DeviceInfo* d = h->mutable_device();
    d->set_cpu(info.cpu);
    d->set_cores(info.cores);
    d->set_memory_bytes(info.memory_bytes);
    d->set_os(info.os);
    d->set_arch(info.arch);
    d->set_hostname(info.hostname);
    d->set_free_disk_bytes(info.free_disk_bytes);
    return send(m);
  }

  Status handle(const HostMessage& m) {
    switch (m.body_case()) {
      case HostMessage::kOffer: return on_offer(m.offer());
      case HostMessage::kChunk: return on_chunk(m.chunk());
      case HostMessage::kEnd: return on_end();
      case HostMessage::kRun: return on_run(m.run());
      case HostMessage::kFamilyRun: return on_family_run(m.family_run());
      case HostMessage::kCancel: return Status::ok_status();  // nothing running
      case HostMessage::kHello: return fail(wire::Error::BAD_MESSAGE, "the host said hello twice");
      default: return fail(wire::Error::BAD_MESSAGE, "an empty or unknown message from the host");
    }
  }

  std::string packages_dir() const { return options_.dir + "/packages"; }

  Status on_offer(const wire::PackageOffer& offer) {
    abandon_upload();
    upload_failed_ = false;
    program_.reset();
    is_family_ = false;
    family_variants_.clear();
    family_package_order_.clear();
    package_path_.clear();
    if (offer.sha256().size() != 32)
      return fail(wire::Error::BAD_MESSAGE, "a package offer without a 32-byte SHA-256");
    Sha256Digest digest;
    std::memcpy(digest.data(), offer.sha256().data(), 32);
    offered_ = digest;
    offered_size_ = offer.size();
    const std::string hex = rt::to_hex(digest);
    package_path_ = packages_dir() + "/" + hex + ".sod2";
    ::mkdir(options_.dir.c_str(), 0755);
    ::mkdir(packages_dir().c_str(), 0755);
    struct stat st {};
    const bool cached = ::stat(package_path_.c_str(), &st) == 0 &&
                        static_cast<uint64_t>(st.st_size) == offer.size();
    if (!cached) {
      part_path_ = packages_dir() + "/" + hex + ".part";
      part_fd_ = ::open(part_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (part_fd_ < 0) {
        return report(errno == ENOSPC ? wire::Error::DISK_FULL : wire::Error::IO,
                      "cannot create " + part_path_ + ": " + std::strerror(errno));
      }
      received_ = 0;
      hasher_.emplace();
    }
    AgentMessage reply;
    reply.mutable_package_status()->set_cached(cached);
    return send(reply);
  }

  void abandon_upload() {
    if (part_fd_ >= 0) {
      ::close(part_fd_);
      ::unlink(part_path_.c_str());
    }
    part_fd_ = -1;
    hasher_.reset();
  }

  Status on_chunk(const wire::PackageChunk& chunk) {
    if (upload_failed_) return Status::ok_status();  // reported already: drop the rest
    if (part_fd_ < 0) return fail(wire::Error::BAD_MESSAGE, "a package chunk without an offer");
    if (chunk.offset() != received_ || received_ + chunk.data().size() > offered_size_) {
      abandon_upload();
      return fail(wire::Error::BAD_MESSAGE, "a package chunk at offset " +
                                                std::to_string(chunk.offset()) + " after " +
                                                std::to_string(received_) + " of " +
                                                std::to_string(offered_size_) + " bytes");
    }
    const auto* p = reinterpret_cast<const uint8_t*>(chunk.data().data());
    size_t done = 0;
    while (done < chunk.data().size()) {
      const ssize_t k = ::write(part_fd_, p + done, chunk.data().size() - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) {
        const int e = k < 0 ? errno : ENOSPC;
        abandon_upload();
        upload_failed_ = true;
        const bool full = e == ENOSPC || e == EFBIG || e == EDQUOT;
        return report(full ? wire::Error::DISK_FULL : wire::Error::IO,
                      std::string(full ? "no room on the device for the package"
                                       : "writing the package failed") +
                          ": " + std::strerror(e) + " after " + std::to_string(received_ + done) +
                          " of " + std::to_string(offered_size_) + " bytes in " + packages_dir() +
                          (full ? " (free some space on the device)" : ""));
      }
      done += static_cast<size_t>(k);
    }
    hasher_->update({p, chunk.data().size()});
    received_ += chunk.data().size();
    return Status::ok_status();
  }

  Status on_end() {
    if (package_path_.empty())
      return fail(wire::Error::BAD_MESSAGE, "a package end without an offer");
    if (upload_failed_) return Status::ok_status();  // the error was reported already
    if (hasher_) {
      const Sha256Digest got = hasher_->finish();
      const bool complete = received_ == offered_size_;
      if (::fsync(part_fd_) != 0 && errno != EINVAL) {
        const int e = errno;
        abandon_upload();
        return report(e == ENOSPC ? wire::Error::DISK_FULL : wire::Error::IO,
                      std::string("storing the package failed: ") + std::strerror(e));
      }
      ::close(part_fd_);
      part_fd_ = -1;
      hasher_.reset();
      if (!complete || got != offered_) {
        ::unlink(part_path_.c_str());
        return report(wire::Error::PACKAGE_CHECKSUM,
                      "the package arrived damaged: " + std::to_string(received_) + " of " +
                          std::to_string(offered_size_) + " bytes, SHA-256 " + rt::to_hex(got) +
                          " instead of " + rt::to_hex(offered_));
      }
      if (::rename(part_path_.c_str(), package_path_.c_str()) != 0)
        return report(wire::Error::IO,
                      "cannot store " + package_path_ + ": " + std::strerror(errno));
    }
    if (rt::is_family_package_file(package_path_)) return load_family();
    Expected<rt::ProgramDesc> program = rt::load_package_file(package_path_);
    if (!program.ok()) {
      // A cached file that no longer loads is removed, so the next offer sends it again.
      ::unlink(package_path_.c_str());
      return report(wire::Error::PACKAGE_REJECTED, program.status().message());
    }
    program_ = std::move(*program);
    session_.reset();
    AgentMessage reply;
    wire::PackageLoaded* l = reply.mutable_loaded();
    l->set_nodes(static_cast<uint32_t>(program_->graphs[0].nodes.size()));
    for (const rt::InputSignature& in : program_->inputs) l->add_inputs(in.name);
    return send(reply);
  }

  // A family package: checked by loading it and making its sessions; each family run request
  // loads it again with that request's threads and expected latencies (the file is mapped, so
  // that costs building its weight views, not reading it).
  Expected<std::unique_ptr<rt::FamilySession>> open_family(const rt::FamilySessionOptions& o) {
    Expected<rt::FamilyProgram> family = rt::load_family_package_file(package_path_);
    if (!family.ok()) return family.status();
    return rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), o);
  }

  Status load_family() {
    auto family = open_family({});
    if (!family.ok()) {
      ::unlink(package_path_.c_str());
      return report(wire::Error::PACKAGE_REJECTED, family.status().message());
    }
    const rt::FamilySession& f = **family;
    is_family_ = true;
    AgentMessage reply;
    wire::PackageLoaded* l = reply.mutable_loaded();
    const rt::ProgramDesc& smallest = f.variant(0).program;
    l->set_nodes(static_cast<uint32_t>(smallest.graphs[0].nodes.size()));
    for (const rt::InputSignature& in : smallest.inputs) l->add_inputs(in.name);
    for (int i = 0; i < f.variants(); ++i) {
      wire::FamilyVariant* v = l->add_variants();
      v->set_name(f.variant(i).name);
      v->set_macs(f.variant(i).macs);
      family_variants_.push_back(f.variant(i).name);
    }
    for (const rt::VariantDesc& v : f.family().variants) family_package_order_.push_back(v.name);
    // Each family run request makes its own sessions; these were only the check.
    return send(reply);
  }

  Status on_family_run(const wire::FamilyRunRequest& r) {
    if (!is_family_) {
      return report(wire::Error::BAD_MESSAGE,
                    program_ ? "a family run request for a single model (use RunRequest)"
                             : "a family run request before a family package");
    }
    if (!(r.budget_ms() > 0) || !(r.duration_s() > 0) ||
        r.duration_s() > options_.max_family_run_s) {
      return report(wire::Error::BAD_MESSAGE,
                    "a family run needs a budget > 0 and a duration in (0, " +
                        std::to_string(options_.max_family_run_s) + "] s");
    }
    if (r.expected_ms_size() != 0 &&
        static_cast<size_t>(r.expected_ms_size()) != family_variants_.size()) {
      return report(wire::Error::BAD_MESSAGE,
                    std::to_string(r.expected_ms_size()) + " expected latencies for " +
                        std::to_string(family_variants_.size()) + " variants");
    }
    std::optional<rt::LoadSchedule> load;
    if (r.load_processes() > 0) {
      if (r.load_processes() > options_.max_load_processes || !(r.load_start_s() >= 0) ||
          !(r.load_stop_s() > r.load_start_s())) {
        return report(wire::Error::BAD_MESSAGE, "a family run's load needs 1.." +
                                                    std::to_string(options_.max_load_processes) +
                                                    " processes and 0 <= start < stop");
      }
      load =
          rt::LoadSchedule{r.load_start_s(), r.load_stop_s(), static_cast<int>(r.load_processes())};
    }
    Expected<std::vector<rt::HostTensor>> inputs = inputs_of(r.inputs());
    if (!inputs.ok()) return report(wire::Error::BAD_INPUTS, inputs.status().message());
    rt::FamilySessionOptions o;
    o.session.threads = static_cast<int>(r.threads());
    o.budget_ms = r.budget_ms();
    o.floor_variant = r.floor_variant();
    if (r.expected_ms_size() != 0) {
      // Sent small to large; the session takes them in the package's order.
      o.expected_ms.resize(family_package_order_.size());
      for (size_t k = 0; k < family_package_order_.size(); ++k) {
        for (size_t i = 0; i < family_variants_.size(); ++i) {
          if (family_variants_[i] == family_package_order_[k])
            o.expected_ms[k] = r.expected_ms(static_cast<int>(i));
        }
      }
    }
    auto session = open_family(o);
    if (!session.ok()) return report(wire::Error::BAD_INPUTS, session.status().message());
    rt::FamilySession& s = **session;
    std::vector<rt::Tensor> views;
    for (const rt::HostTensor& h : *inputs) views.push_back(h.view());
    if (Status st = s.warm_up(views, 3); !st.ok())
      return report(wire::Error::RUN_FAILED, st.message());
    {
      AgentMessage m;
      wire::FamilyRunStarted* started = m.mutable_family_started();
      for (double e : s.expected_ms()) started->add_expected_ms(e);
      started->set_arena_bytes(s.arena_capacity());
      started->set_threads(static_cast<uint32_t>(s.session(0).threads()));
      SOD2_RETURN_IF_ERROR(send(m));
    }
    rt::DemoOptions demo;
    demo.duration_s = r.duration_s();
    demo.managed = r.managed();
    demo.load = load;
    std::atomic<bool> stop{false};
    demo.cancel = &stop;
    Status stream = Status::ok_status();
    uint32_t points = 0;
    auto result = rt::run_demo(s, views, demo, [&](const rt::DemoPoint& p) {
      AgentMessage m;
      wire::FamilyRunPoint* w = m.mutable_family_point();
      w->set_t_s(p.t_s);
      w->set_variant(static_cast<uint32_t>(p.variant));
      w->set_latency_ms(p.latency_ms);
      w->set_load_active(p.load_active);
      w->set_switched(p.switched);
      w->set_decision(p.decision);
      if (stream.ok()) stream = send(m);
      ++points;
      Expected<bool> cancel = cancelled();
      if (!cancel.ok() && stream.ok()) stream = cancel.status();
      if (!stream.ok() || (cancel.ok() && *cancel)) stop = true;
    });
    SOD2_RETURN_IF_ERROR(stream);
    if (!result.ok()) return report(wire::Error::RUN_FAILED, result.status().message());
    if (result->cancelled) {
      return report(wire::Error::CANCELLED,
                    "cancelled by the host after " + std::to_string(points) + " runs");
    }
    AgentMessage m;
    m.mutable_family_done()->set_points(points);
    return send(m);
  }

  Expected<std::vector<rt::HostTensor>> inputs_of(
      const google::protobuf::RepeatedPtrField<wire::Tensor>& tensors) {
    std::vector<rt::HostTensor> out;
    for (int i = 0; i < tensors.size(); ++i) {
      const wire::Tensor& t = tensors.Get(i);
      const std::string what = "input " + std::to_string(i);
      if (t.dtype() > 255 || !rt::is_known_dtype(static_cast<uint8_t>(t.dtype())) ||
          rt::dtype_size(static_cast<rt::DType>(t.dtype())) == 0)
        return invalid_argument(what + ": element type " + std::to_string(t.dtype()) +
                                " is not one the runtime handles");
      if (!rt::Shape::fits(static_cast<size_t>(t.dims_size())))
        return invalid_argument(what + ": rank " + std::to_string(t.dims_size()) + " is too high");
      const auto type = static_cast<rt::DType>(t.dtype());
      uint64_t numel = 1;
      for (int64_t d : t.dims()) {
        if (d < 0 || (d > 0 && numel > (uint64_t{1} << 40) / static_cast<uint64_t>(d)))
          return invalid_argument(what + ": dim " + std::to_string(d) + " is out of range");
        numel *= static_cast<uint64_t>(d);
      }
      if (numel * rt::dtype_size(type) != t.data().size()) {
        return invalid_argument(what + ": " + std::to_string(t.data().size()) + " bytes for " +
                                std::to_string(numel) + " elements of " + rt::dtype_name(type));
      }
      rt::HostTensor h(type, rt::Shape(std::span<const int64_t>(
                                 t.dims().data(), static_cast<size_t>(t.dims_size()))));
      std::memcpy(h.bytes().data(), t.data().data(), t.data().size());
      out.push_back(std::move(h));
    }
    return out;
  }

  // True when a Cancel arrived or the host closed the stream: the run request ends there. Other
  // messages the host sent ahead (it may pipeline) wait in pending_ until the request is done.
  Expected<bool> cancelled() {
    while (!host_closed_ && options_.host_has_data && options_.host_has_data()) {
      std::string frame;
      SOD2_ASSIGN_OR_RETURN(const bool more, reader_.read_frame(&frame));
      if (!more) {
        host_closed_ = true;
        return true;
      }
      HostMessage m;
      if (!m.ParseFromString(frame))
        return fail(wire::Error::BAD_MESSAGE, "a message from the host does not parse");
      if (m.body_case() == HostMessage::kCancel) return true;
      if (pending_.size() >= kMaxPending) {
        return fail(wire::Error::BAD_MESSAGE, "more than " + std::to_string(kMaxPending) +
                                                  " messages sent ahead during a run request");
      }
      pending_.push_back(std::move(m));
    }
    return host_closed_;
  }

  Status on_run(const wire::RunRequest& r) {
    if (is_family_) {
      return report(wire::Error::BAD_MESSAGE,
                    "a run request for a family package (use FamilyRunRequest, or profile its "
                    "variants one by one)");
    }
    if (!program_) return report(wire::Error::BAD_MESSAGE, "a run request before a package");
    if (r.runs() == 0) return report(wire::Error::BAD_MESSAGE, "a run request for zero runs");
    if (uint64_t{r.runs()} + r.warmup() > options_.max_runs_per_request) {
      return report(wire::Error::BAD_MESSAGE,
                    "a run request for " + std::to_string(uint64_t{r.runs()} + r.warmup()) +
                        " runs (at most " + std::to_string(options_.max_runs_per_request) + ")");
    }
    Expected<std::vector<rt::HostTensor>> inputs = inputs_of(r.inputs());
    if (!inputs.ok()) return report(wire::Error::BAD_INPUTS, inputs.status().message());
    const int threads = static_cast<int>(r.threads());
    if (!session_ || session_threads_ != threads) {
      rt::SessionOptions so;
      so.threads = threads;
      so.profile = true;
      auto s = rt::Session::create(*program_, rt::KernelRegistry::standard(), so);
      if (!s.ok()) return report(wire::Error::PACKAGE_REJECTED, s.status().message());
      session_ = std::move(*s);
      session_threads_ = threads;
    }
    std::vector<rt::Tensor> views;
    for (const rt::HostTensor& h : *inputs) views.push_back(h.view());
    const uint32_t total = r.warmup() + r.runs();
    for (uint32_t i = 0; i < total; ++i) {
      SOD2_ASSIGN_OR_RETURN(const bool stop, cancelled());
      if (stop)
        return report(wire::Error::CANCELLED,
                      "cancelled by the host after " + std::to_string(i) + " runs");
      const auto t0 = std::chrono::steady_clock::now();
      auto out = session_->run(views);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!out.ok()) return report(wire::Error::RUN_FAILED, out.status().message());
      const rt::NodeTimes& t = session_->node_times();
      AgentMessage m;
      wire::RunResult* res = m.mutable_result();
      res->set_index(i);
      res->set_warmup(i < r.warmup());
      res->set_latency_ms(ms);
      for (double s : t.last_start_ms) res->add_group_start_ms(s);
      for (double s : t.last_ms) res->add_group_ms(s);
      res->set_arena_bytes(session_->arena_bytes());
      res->set_rss_bytes(rt::resident_bytes().current);
      res->set_plan_version(session_->plan_version());
      SOD2_RETURN_IF_ERROR(send(m));
    }
    const rt::NodeTimes& t = session_->node_times();
    AgentMessage m;
    wire::RunDone* done = m.mutable_done();
    for (const rt::Shape& s : t.last_output_shape) done->add_group_shapes(s.to_string());
    for (int64_t b : t.last_output_bytes) done->add_group_output_bytes(b);
    done->set_peak_rss_bytes(rt::resident_bytes().peak);
    done->set_arena_capacity(session_->arena_capacity());
    done->set_value_buffer_bytes(session_->value_buffer_capacity());
    done->set_threads(static_cast<uint32_t>(session_->threads()));
    return send(m);
  }

  using Sha256Digest = rt::Sha256Digest;
  FrameReader reader_;
  const WriteFn& write_;
  const AgentOptions& options_;
  Sha256Digest offered_{};
  uint64_t offered_size_ = 0;
  std::string package_path_, part_path_;
  int part_fd_ = -1;
  bool upload_failed_ = false;
  uint64_t received_ = 0;
  std::optional<rt::Sha256> hasher_;
  std::optional<rt::ProgramDesc> program_;
  std::unique_ptr<rt::Session> session_;
  int session_threads_ = -1;
  bool is_family_ = false;                         // the package is a family
  std::vector<std::string> family_variants_;       // its variants small to large
  std::vector<std::string> family_package_order_;  // and in the package's order
  static constexpr size_t kMaxPending = 64;
  std::deque<HostMessage> pending_;  // sent ahead while a run request ran
  bool host_closed_ = false;
};

}  // namespace

Status serve(const ReadFn& read, const WriteFn& write, const AgentOptions& options) {
  return Agent(read, write, options).serve();
}

}  // namespace sod2::agent
