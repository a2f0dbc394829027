#include "runtime/agent/agent.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

#include "runtime/agent/agent_protocol.pb.h"
#include "runtime/agent/device_info.h"
#include "runtime/agent/sustained_window.h"
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

// One message from the host as the reader thread queued it. `seq` numbers them in the order they
// arrived: a Cancel cancels the run requests before it.
struct Inbound {
  enum class Kind { kMessage, kUnparsable, kNoMemory };
  Kind kind = Kind::kMessage;
  HostMessage message;
  uint64_t seq = 0;
  uint64_t bytes = 0;  // charged against the queue's byte limit
  std::string why;     // kNoMemory: what could not be received
};

// What a message costs in the queue beyond its payload (the parsed message's own objects), so
// a flood of empty messages is bounded by bytes too.
constexpr uint64_t kMessageOverhead = 1024;

const char* message_name(const HostMessage& m) {
  switch (m.body_case()) {
    case HostMessage::kHello: return "hello";
    case HostMessage::kOffer: return "package offer";
    case HostMessage::kChunk: return "package chunk";
    case HostMessage::kEnd: return "package end";
    case HostMessage::kRun: return "run request";
    case HostMessage::kCancel: return "cancel";
    case HostMessage::kFamilyRun: return "family run request";
    default: return "message";
  }
}

wire::Error::Code wire_code(const Status& st, wire::Error::Code otherwise) {
  switch (st.code()) {
    case StatusCode::kResourceExhausted: return wire::Error::RESOURCE_EXHAUSTED;
    case StatusCode::kCancelled: return wire::Error::CANCELLED;
    default: return otherwise;
  }
}

// A limit of the agent's and one a request asked for: the request may only lower it.
int64_t lower_limit(int64_t agent, uint64_t requested) {
  if (requested == 0) return agent;
  const int64_t r =
      requested > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(requested);
  return agent > 0 ? std::min(agent, r) : r;
}

// Every body node that ran since the session's times were last reset, in (graph, node) order.
std::vector<wire::BodyNodeTime> body_node_times(const rt::ProgramDesc& p, const rt::NodeTimes& t) {
  std::vector<wire::BodyNodeTime> out;
  for (size_t g = 1; g < t.body_calls.size() && g < p.graphs.size(); ++g) {
    for (size_t n = 0; n < t.body_calls[g].size(); ++n) {
      if (t.body_calls[g][n] == 0) continue;
      const rt::NodeDesc& node = p.graphs[g].nodes[n];
      wire::BodyNodeTime& b = out.emplace_back();
      b.set_graph(static_cast<uint32_t>(g));
      b.set_node(static_cast<uint32_t>(n));
      b.set_name(node.info.name);
      b.set_op_type(node.info.op_type);
      b.set_total_ms(t.body_total_ms[g][n]);
      b.set_calls(static_cast<uint64_t>(t.body_calls[g][n]));
    }
  }
  return out;
}

class Agent {
 public:
  Agent(const ReadFn& read, const WriteFn& write, const AgentOptions& options)
      : read_(read),
        reader_([this](uint8_t* b, size_t n) { return guarded_read(b, n); }),
        write_(write),
        options_(options) {
    const int hw = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    hardware_threads_ = static_cast<uint32_t>(hw);
    max_threads_ = options_.max_threads > 0
                       ? options_.max_threads
                       : static_cast<uint32_t>(rt::kMaxThreadsPerCore) * hardware_threads_;
  }
  ~Agent() {
    stop_reader();
    // A host that left mid-upload: its partial file goes (and its descriptor, which an agent
    // serving in-process would otherwise leak once per interrupted upload).
    abandon_upload();
  }

  Status serve() {
    SOD2_RETURN_IF_ERROR(write_preamble(write_));
    SOD2_RETURN_IF_ERROR(send_hello());
    reader_thread_ = std::thread([this] { read_loop(); });
    bool greeted = false;
    for (;;) {
      Inbound in;
      {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [&] { return !queue_.empty() || reader_done_; });
        if (queue_.empty() || (host_gone_ && !options_.drain_on_close)) {
          lock.unlock();
          return host_gone_status();
        }
        in = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= in.bytes;
      }
      room_.notify_all();
      if (in.kind == Inbound::Kind::kUnparsable)
        return fail(wire::Error::BAD_MESSAGE, "a message from the host does not parse");
      if (in.kind == Inbound::Kind::kNoMemory) {
        SOD2_RETURN_IF_ERROR(recover(wire::Error::RESOURCE_EXHAUSTED, in.why));
        continue;
      }
      const HostMessage& m = in.message;
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
      Status st = handle_guarded(in);
      if (!st.ok()) return after_host_left(st);
    }
  }

 private:
  // ---- Reading (its own thread) ----

  // A read that gives up when the conversation ends on the agent's side, so the reader thread
  // can be joined while the host keeps its stream open.
  Expected<size_t> guarded_read(uint8_t* buf, size_t n) {
    while (options_.host_readable) {
      if (stopping_.load()) return cancelled("the agent ended the conversation");
      if (options_.host_readable(50)) break;
    }
    if (stopping_.load()) return cancelled("the agent ended the conversation");
    return read_(buf, n);
  }

  void read_loop() {
    try {
      read_frames();
    } catch (const std::exception& e) {
      finish_reading(internal_error(std::string("reading from the host failed: ") + e.what()),
                     false);
    } catch (...) {
      finish_reading(internal_error("reading from the host failed"), false);
    }
  }

  void read_frames() {
    uint64_t seq = 0;
    for (;;) {
      Expected<std::optional<uint32_t>> header = reader_.read_header();
      if (!header.ok()) return finish_reading(header.status(), false);
      if (!*header) return finish_reading(Status::ok_status(), true);
      const uint32_t n = **header;
      const uint64_t cost = uint64_t{n} + kMessageOverhead;
      {
        // Room first, then the payload: a host that sends ahead faster than the agent works
        // waits in its write instead of growing the agent.
        std::unique_lock lock(mu_);
        room_.wait(lock, [&] {
          return stopping_.load() ||
                 queue_.empty() ||  // one message always fits, whatever its size
                 (queue_.size() < options_.max_queued_messages &&
                  queued_bytes_ + cost <= options_.max_queued_bytes);
        });
        if (stopping_.load()) return;
      }
      Inbound in;
      in.seq = ++seq;
      in.bytes = cost;
      std::string frame;
      Status got = reader_.read_payload(n, &frame);
      if (got.code() == StatusCode::kResourceExhausted) {
        in.kind = Inbound::Kind::kNoMemory;
        in.why = "the agent had no memory to receive a message of " + std::to_string(n) +
                 " bytes: send smaller inputs, or free memory on the device";
      } else if (!got.ok()) {
        return finish_reading(got, false);
      } else {
        try {
          if (!in.message.ParseFromString(frame)) in.kind = Inbound::Kind::kUnparsable;
        } catch (const std::bad_alloc&) {
          in.kind = Inbound::Kind::kNoMemory;
          in.why = "the agent had no memory to decode a message of " + std::to_string(n) +
                   " bytes: send smaller inputs, or free memory on the device";
        }
      }
      std::string().swap(frame);
      std::lock_guard lock(mu_);
      if (in.kind == Inbound::Kind::kMessage && in.message.body_case() == HostMessage::kCancel) {
        // Not queued: it acts now, on every run request sent before it.
        last_cancel_seq_ = in.seq;
        if (active_cancel_ && active_seq_ < in.seq) active_cancel_->store(true);
        continue;
      }
      const bool unparsable = in.kind == Inbound::Kind::kUnparsable;
      queued_bytes_ += in.bytes;
      queue_.push_back(std::move(in));
      ready_.notify_all();
      if (unparsable) {
        // The conversation ends at this message: a run in progress stops instead of running on
        // for a host that cannot be understood.
        if (active_cancel_) active_cancel_->store(true);
        reader_done_ = true;
        return;
      }
    }
  }

  void finish_reading(const Status& st, bool clean_end) {
    std::lock_guard lock(mu_);
    reader_done_ = true;
    host_gone_ = true;
    host_closed_ = clean_end;
    read_status_ = st;
    // The host has gone (or its stream broke): nothing it started is wanted any more.
    if (active_cancel_ && !options_.drain_on_close) active_cancel_->store(true);
    ready_.notify_all();
  }

  void stop_reader() {
    {
      std::lock_guard lock(mu_);
      stopping_.store(true);
    }
    room_.notify_all();
    if (reader_thread_.joinable()) reader_thread_.join();
  }

  // How serve() ends once the reader has stopped: the host's close is a clean end.
  Status host_gone_status() {
    std::lock_guard lock(mu_);
    if (host_closed_ || read_status_.code() == StatusCode::kCancelled) return Status::ok_status();
    return read_status_;
  }

  // A failed write after the host closed its stream is the host going away, not an error.
  Status after_host_left(const Status& st) {
    std::lock_guard lock(mu_);
    if (host_closed_ && !options_.drain_on_close) return Status::ok_status();
    return st;
  }

  // ---- Requests ----

  // Marks the request `seq` as the one running, so a Cancel read meanwhile reaches `cancel`.
  class ActiveRequest {
   public:
    ActiveRequest(Agent& a, uint64_t seq, std::atomic<bool>* cancel) : a_(a) {
      std::lock_guard lock(a_.mu_);
      a_.active_seq_ = seq;
      a_.active_cancel_ = cancel;
      if (a_.last_cancel_seq_ > seq || (a_.host_gone_ && !a_.options_.drain_on_close))
        cancel->store(true);
    }
    ~ActiveRequest() {
      std::lock_guard lock(a_.mu_);
      a_.active_cancel_ = nullptr;
    }
    ActiveRequest(const ActiveRequest&) = delete;
    ActiveRequest& operator=(const ActiveRequest&) = delete;

   private:
    Agent& a_;
  };

  // Whatever a request throws becomes an error reply: the agent outlives every request.
  Status handle_guarded(const Inbound& in) {
    std::atomic<bool> cancel{false};
    ActiveRequest active(*this, in.seq, &cancel);
    const std::string what = message_name(in.message);
    try {
      return handle(in.message, cancel);
    } catch (const std::bad_alloc&) {
      return recover(wire::Error::RESOURCE_EXHAUSTED,
                     "the agent ran out of memory handling a " + what +
                         " (it freed the request's memory and keeps serving): ask for smaller "
                         "inputs, fewer threads or a lower memory limit, or free memory on the "
                         "device");
    } catch (const std::system_error& e) {
      return recover(wire::Error::RESOURCE_EXHAUSTED,
                     "the device refused the agent a resource handling a " + what + " (" +
                         e.what() +
                         "); it keeps serving: ask for fewer threads, or free the "
                         "device's resources");
    } catch (const std::exception& e) {
      return recover(wire::Error::INTERNAL, "the agent failed handling a " + what + " (" +
                                                e.what() +
                                                "); it keeps serving: please report "
                                                "this with the package");
    } catch (...) {
      return recover(wire::Error::INTERNAL, "the agent failed handling a " + what +
                                                " (an unknown exception); it keeps serving: "
                                                "please report this with the package");
    }
  }

  // After a request failed half-way: what it held may be inconsistent, so it goes.
  Status recover(wire::Error::Code code, const std::string& message) {
    session_.reset();
    session_threads_ = -1;
    if (part_fd_ >= 0) {
      // The rest of this upload is dropped; this error answers its PackageEnd.
      abandon_upload();
      upload_failed_ = true;
    }
    return report(code, message);
  }

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

  Status handle(const HostMessage& m, std::atomic<bool>& cancel) {
    switch (m.body_case()) {
      case HostMessage::kOffer: return on_offer(m.offer());
      case HostMessage::kChunk: return on_chunk(m.chunk());
      case HostMessage::kEnd: return on_end();
      case HostMessage::kRun: return on_run(m.run(), cancel);
      case HostMessage::kFamilyRun: return on_family_run(m.family_run(), cancel);
      case HostMessage::kHello: return fail(wire::Error::BAD_MESSAGE, "the host said hello twice");
      default: return fail(wire::Error::BAD_MESSAGE, "an empty or unknown message from the host");
    }
  }

  // Threads a request asked for, checked against the device's limit. Errors name the limit.
  Status check_threads(uint32_t threads, const char* what) {
    if (threads <= max_threads_) return Status::ok_status();
    const std::string why = options_.max_threads > 0
                                ? "the agent's --max-threads"
                                : std::to_string(rt::kMaxThreadsPerCore) +
                                      " per hardware thread, " + std::to_string(hardware_threads_) +
                                      " here";
    return resource_exhausted(std::string("a ") + what + " for " + std::to_string(threads) +
                              " threads: this device takes at most " +
                              std::to_string(max_threads_) + " (" + why +
                              "); ask for fewer, or 0 for one per hardware thread");
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

  Status on_family_run(const wire::FamilyRunRequest& r, std::atomic<bool>& cancel) {
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
    if (Status st = check_threads(r.threads(), "family run request"); !st.ok())
      return report(wire::Error::RESOURCE_EXHAUSTED, st.message());
    Expected<std::vector<rt::HostTensor>> inputs = inputs_of(r.inputs());
    if (!inputs.ok()) return report(wire::Error::BAD_INPUTS, inputs.status().message());
    rt::FamilySessionOptions o;
    o.session.threads = static_cast<int>(r.threads());
    o.session.limits = options_.limits;
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
    if (!session.ok()) {
      return report(wire_code(session.status(), wire::Error::BAD_INPUTS),
                    session.status().message());
    }
    rt::FamilySession& s = **session;
    std::vector<rt::Tensor> views;
    for (const rt::HostTensor& h : *inputs) views.push_back(h.view());
    if (Status st = s.warm_up(views, 3); !st.ok())
      return report(wire_code(st, wire::Error::RUN_FAILED), st.message());
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
    // Set by the reader thread when a Cancel arrives or the host goes away, and below when the
    // host stops taking points.
    demo.cancel = &cancel;
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
      if (!stream.ok()) cancel = true;
    });
    SOD2_RETURN_IF_ERROR(stream);
    if (!result.ok())
      return report(wire_code(result.status(), wire::Error::RUN_FAILED), result.status().message());
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

  Status on_run(const wire::RunRequest& r, std::atomic<bool>& cancel) {
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
    const bool sustained = r.duration_s() > 0;
    if (std::isnan(r.duration_s()) || r.duration_s() < 0 ||
        r.duration_s() > options_.max_sustained_s) {
      return report(wire::Error::BAD_MESSAGE, "a sustained run of " +
                                                  std::to_string(r.duration_s()) + " s (at most " +
                                                  std::to_string(options_.max_sustained_s) + ")");
    }
    if (sustained && !(r.window_s() >= kMinWindowS && r.window_s() <= kMaxWindowS)) {
      return report(wire::Error::BAD_MESSAGE, "a sustained run with windows of " +
                                                  std::to_string(r.window_s()) + " s (from " +
                                                  std::to_string(kMinWindowS) + " to " +
                                                  std::to_string(kMaxWindowS) + " s)");
    }
    if (Status st = check_threads(r.threads(), "run request"); !st.ok())
      return report(wire::Error::RESOURCE_EXHAUSTED, st.message());
    Expected<std::vector<rt::HostTensor>> inputs = inputs_of(r.inputs());
    if (!inputs.ok()) return report(wire::Error::BAD_INPUTS, inputs.status().message());
    const int threads = static_cast<int>(r.threads());
    rt::RunLimits limits;
    limits.max_bytes = lower_limit(options_.limits.max_bytes, r.max_bytes());
    limits.max_loop_iterations =
        lower_limit(options_.limits.max_loop_iterations, r.max_loop_iterations());
    limits.max_run_ms = lower_limit(options_.limits.max_run_ms, r.max_run_ms());
    if (!session_ || session_threads_ != threads || !same_limits(session_limits_, limits)) {
      session_.reset();  // before the next one is made: two need not fit at once
      rt::SessionOptions so;
      so.threads = threads;
      so.profile = true;
      so.limits = limits;
      auto s = rt::Session::create(*program_, rt::KernelRegistry::standard(), so);
      if (!s.ok()) {
        return report(wire_code(s.status(), wire::Error::PACKAGE_REJECTED), s.status().message());
      }
      session_ = std::move(*s);
      session_threads_ = threads;
      session_limits_ = limits;
    }
    std::vector<rt::Tensor> views;
    for (const rt::HostTensor& h : *inputs) views.push_back(h.view());
    const uint32_t total = r.warmup() + r.runs();
    // A sustained run's timeline starts at the first measured run; its windows are
    // [k * window_s, (k + 1) * window_s) on it, the last one ending with the last run.
    std::optional<DeviceSensors> sensors;
    std::optional<SustainedWindowBuilder> window;
    if (sustained) {
      sensors.emplace(options_.sysfs_root);
      window.emplace(program_->graphs[0].nodes.size(), &*sensors);
    }
    auto t0 = std::chrono::steady_clock::now();
    const auto since_t0 = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    uint32_t next_window = 0;
    bool stopped_early = false;
    // Body-node times of the measured runs, kept before a sustained run adds its own.
    std::vector<wire::BodyNodeTime> body_nodes;
    for (uint64_t i = 0;; ++i) {
      const bool detailed = i < total;
      if (!detailed) {
        if (!sustained || since_t0() >= r.duration_s()) break;
        if (cancel.load()) {
          stopped_early = true;
          break;
        }
      } else if (cancel.load()) {
        return report(wire::Error::CANCELLED,
                      "cancelled by the host after " + std::to_string(i) + " runs");
      }
      const bool measured = i >= r.warmup();
      if (i == r.warmup()) {
        t0 = std::chrono::steady_clock::now();
        session_->reset_node_times();  // body times are summed over the measured runs only
      }
      if (window && measured) window->sample_sensors(since_t0());
      const auto run_start = std::chrono::steady_clock::now();
      auto out = session_->run(views, &cancel);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - run_start)
              .count();
      if (!out.ok()) {
        const std::string which =
            detailed ? "run " + std::to_string(i + 1) + " of " + std::to_string(total)
                     : "run " + std::to_string(i + 1) + " (sustained)";
        if (out.status().code() == StatusCode::kCancelled || cancel.load()) {
          if (!detailed) {  // what the sustained run measured so far is kept
            stopped_early = true;
            break;
          }
          return report(wire::Error::CANCELLED, "cancelled by the host during " + which);
        }
        return report(wire_code(out.status(), wire::Error::RUN_FAILED),
                      which + ": " + out.status().message());
      }
      const rt::NodeTimes& t = session_->node_times();
      if (detailed) {
        AgentMessage m;
        wire::RunResult* res = m.mutable_result();
        res->set_index(static_cast<uint32_t>(i));
        res->set_warmup(i < r.warmup());
        res->set_latency_ms(ms);
        for (double s : t.last_start_ms) res->add_group_start_ms(s);
        for (double s : t.last_ms) res->add_group_ms(s);
        res->set_arena_bytes(session_->arena_bytes());
        res->set_rss_bytes(rt::resident_bytes().current);
        res->set_plan_version(session_->plan_version());
        for (size_t k = 0; k < session_->program().symbols.size(); ++k)
          res->add_symbol_values(session_->symbol_value(k));
        SOD2_RETURN_IF_ERROR(send(m));
        if (i + 1 == total) body_nodes = body_node_times(session_->program(), t);
      }
      if (!window || !measured) continue;
      window->add_run(ms, t.last_ms);
      const double now_s = since_t0();
      const double w = r.window_s();
      // Windows that end before the duration close as their time passes (empty ones too: a run
      // longer than a window); the last one closes with the last run.
      while ((next_window + 1) * w <= now_s && (next_window + 1) * w < r.duration_s()) {
        SOD2_RETURN_IF_ERROR(send_window(window->close(
            next_window, next_window * w, (next_window + 1) * w, rt::resident_bytes().current)));
        ++next_window;
      }
    }
    if (window && (window->runs() > 0 || next_window == 0)) {
      const double start = next_window * r.window_s();
      SOD2_RETURN_IF_ERROR(send_window(window->close(
          next_window, start, std::max(since_t0(), start), rt::resident_bytes().current)));
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
    done->set_stopped_early(stopped_early);
    for (wire::BodyNodeTime& b : body_nodes) *done->add_body_nodes() = std::move(b);
    return send(m);
  }

  Status send_window(wire::SustainedWindow w) {
    AgentMessage m;
    *m.mutable_window() = std::move(w);
    return send(m);
  }

  static bool same_limits(const rt::RunLimits& a, const rt::RunLimits& b) {
    return a.max_bytes == b.max_bytes && a.max_loop_iterations == b.max_loop_iterations &&
           a.max_run_ms == b.max_run_ms;
  }

  using Sha256Digest = rt::Sha256Digest;
  ReadFn read_;
  FrameReader reader_;  // used by the reader thread only
  const WriteFn& write_;
  const AgentOptions& options_;
  uint32_t hardware_threads_ = 1;
  uint32_t max_threads_ = 1;
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
  rt::RunLimits session_limits_;
  bool is_family_ = false;                         // the package is a family
  std::vector<std::string> family_variants_;       // its variants small to large
  std::vector<std::string> family_package_order_;  // and in the package's order

  // Shared by the reader thread and the serving thread, under mu_.
  std::thread reader_thread_;
  std::mutex mu_;
  std::condition_variable ready_;  // a message was queued, or reading ended
  std::condition_variable room_;   // the queue shrank, or the agent is stopping
  std::deque<Inbound> queue_;      // sent ahead of the request being handled
  uint64_t queued_bytes_ = 0;
  bool reader_done_ = false;  // it reads no more
  bool host_gone_ = false;    // because the stream ended or broke
  bool host_closed_ = false;  // because the stream ended cleanly
  Status read_status_;        // why reading ended
  std::atomic<bool> stopping_{false};
  uint64_t last_cancel_seq_ = 0;                // the latest Cancel's place in the stream
  uint64_t active_seq_ = 0;                     // the request being handled
  std::atomic<bool>* active_cancel_ = nullptr;  // and its cancel flag
};

}  // namespace

Status serve(const ReadFn& read, const WriteFn& write, const AgentOptions& options) {
  // The last line of defence: whatever escaped a request's own handler (or starting the reader
  // thread) ends the conversation with a message, never the process.
  std::string why;
  try {
    return Agent(read, write, options).serve();
  } catch (const std::bad_alloc&) {
    why = "the agent ran out of memory: free memory on the device and start it again";
  } catch (const std::exception& e) {
    why = std::string("the agent failed: ") + e.what() + " (please report this)";
  } catch (...) {
    why = "the agent failed with an unknown exception (please report this)";
  }
  try {
    AgentMessage m;
    m.mutable_error()->set_code(wire::Error::INTERNAL);
    m.mutable_error()->set_message(why);
    (void)write_frame(write, m);
  } catch (...) {
    // Nothing more can be said over a stream that cannot even carry this.
  }
  return internal_error(why);
}

}  // namespace sod2::agent
