#include "app/profiling/profile_connection.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "app/profiling/input_files.h"
#include "app/profiling/recorded_run.h"
#include "app/profiling/run_inputs.h"
#include "app/profiling/sustained_report.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "core/status/input_file.h"
#include "core/text/text_table.h"
#include "core/version.h"
#include "plugins/device/transport_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/package/sha256.h"
#include "runtime/program/program_dataflow.h"
#include "runtime/program/program_plan_at.h"
#include "runtime/program/step_work.h"

namespace sod2::profiling {
namespace {

using namespace std::chrono_literals;

// A model or a package, read whole: a regular file (never a FIFO or a device), whatever its size
// (a package's header bounds it; a model is refused above 2 GiB when it is imported).
Expected<std::vector<uint8_t>> read_file(const std::string& path) {
  return read_input_file(path, kNoInputSizeLimit);
}

// The compiled program and its package bytes, from a package or an ONNX model.
struct Compiled {
  std::shared_ptr<const rt::ProgramDesc> program;
  std::vector<uint8_t> package;
  std::string model_sha256;
};

Expected<Compiled> compile(const ProfileRequest& r) {
  Compiled c;
  SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file(r.model_path));
  c.model_sha256 = rt::to_hex(rt::sha256(bytes));
  if (rt::is_package_file(r.model_path)) {
    if (r.weights != package::WeightStorage::kAsIs) {
      return invalid_argument(r.model_path +
                              " is a compiled package: it keeps the weights it was compiled "
                              "with (compile it with `sod2 compile --weights fp16|int8`)");
    }
    SOD2_ASSIGN_OR_RETURN(rt::ProgramDesc loaded, rt::load_package_file(r.model_path));
    c.program = std::make_shared<const rt::ProgramDesc>(std::move(loaded));
    c.package = std::move(bytes);
    return c;
  }
  if (r.compiled && !r.compiled->graphs.empty()) {
    c.program = r.compiled;
  } else {
    pipeline::CompileOptions options;
    options.rdp = r.rdp;
    options.fuse = r.fuse;
    SOD2_ASSIGN_OR_RETURN(pipeline::CompiledModel compiled,
                          pipeline::compile_file(r.model_path, options));
    c.program = std::make_shared<const rt::ProgramDesc>(std::move(compiled.program));
  }
  package::PackageOptions options;
  options.weights = r.weights;
  SOD2_ASSIGN_OR_RETURN(c.package, package::serialize_package(*c.program, nullptr, options));
  return c;
}

// Each step's operations at the bound sizes, execution symbols the binding leaves out at their
// bounds; nullopt when the program carries no counts.
std::optional<plan::StepWork> work_at_bind(const rt::ProgramDesc& program,
                                           const std::map<std::string, int64_t>& bind) {
  std::vector<int64_t> values(program.symbols.size(), 0);
  std::vector<char> bound(program.symbols.size(), 0);
  for (size_t k = 0; k < values.size(); ++k) {
    const auto it = bind.find(program.symbols[k].name);
    if (it != bind.end()) {
      values[k] = it->second;
      bound[k] = 1;
    } else if (!program.symbols[k].execution) {
      return std::nullopt;  // bound_input_shapes said which
    }
  }
  Expected<plan::StepWork> work = plan::step_work_at(program, values, bound);
  return work.ok() ? std::optional(std::move(*work)) : std::nullopt;
}

Expected<std::vector<GroupProfile>> groups_of(const rt::ProgramDesc& program,
                                              const device::RunReport& rep,
                                              const std::optional<plan::StepWork>& work) {
  const rt::GraphDesc& g = program.graphs[0];
  std::vector<GroupProfile> out(g.nodes.size());
  int measured = 0;
  std::vector<std::vector<double>> times(out.size());
  for (const device::RunSample& s : rep.runs) {
    if (s.warmup) continue;
    ++measured;
    for (size_t i = 0; i < out.size() && i < s.group_ms.size(); ++i) {
      out[i].avg_ms += s.group_ms[i];
      times[i].push_back(s.group_ms[i]);
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const rt::NodeDesc& n = g.nodes[i];
    GroupProfile& p = out[i];
    p.index = static_cast<int>(i);
    p.name = n.info.name;
    p.nodes = n.fused_nodes.empty() ? std::vector<std::string>{n.info.name} : n.fused_nodes;
    p.op_types =
        n.fused_op_types.empty() ? std::vector<std::string>{n.info.op_type} : n.fused_op_types;
    if (measured > 0) p.avg_ms /= measured;
    p.p50_ms = percentile(times[i], 0.5);
    p.p90_ms = percentile(times[i], 0.9);
    p.shape = i < rep.group_shapes.size() ? rep.group_shapes[i] : "";
    p.output_bytes = i < rep.group_output_bytes.size() ? rep.group_output_bytes[i] : 0;
    if (work && i < work->ops.size()) p.ops = work->ops[i];
    p.ops_bound = work && i < work->bound.size() && work->bound[i];
    for (int32_t v : n.outputs) {
      if (v < 0) continue;
      p.dims = g.values[static_cast<size_t>(v)].dims;
      break;
    }
  }
  set_time_shares(out);
  // The device sums body nodes over the measured runs; each group's share is of its own time.
  SOD2_ASSIGN_OR_RETURN(const BodyTimes body, body_times_of(program, rep.body_nodes));
  std::vector<double> group_ms(out.size());
  for (size_t i = 0; i < out.size(); ++i) group_ms[i] = out[i].avg_ms;
  std::vector<std::vector<BodyNodeProfile>> rows = body_profiles(program, body, measured, group_ms);
  for (size_t i = 0; i < out.size(); ++i) out[i].body = std::move(rows[i]);
  return out;
}

store::DeviceRecord device_record(const device::DeviceEntry& e, const device::AgentHello& h) {
  store::DeviceRecord d;
  d.device_id = e.id;
  d.transport = e.transport;
  d.model = e.model;
  d.cpu = h.cpu;
  d.arch = h.arch;
  d.os = h.os;
  d.cores = h.cores;
  d.memory_bytes = static_cast<int64_t>(h.memory_bytes);
  return d;
}

std::string host_software() { return std::string("sod2 ") + SOD2_VERSION_STRING; }

}  // namespace

ProfileConnection::~ProfileConnection() {
  // The agent ends when its input does; the client goes first, it reads from the child.
  client_.reset();
  if (child_) {
    child_->close_stdin();
    child_->wait_and_describe(std::chrono::seconds(2));
  }
}

Expected<std::unique_ptr<ProfileConnection>> ProfileConnection::open(
    const ProfileRequest& r, bool bind_is_complete, const ProfileProgress& progress, double from,
    double to) {
  auto stage = [&](const std::string& what, double f) {
    if (progress.report) progress.report(what, from + (to - from) * f);
  };
  std::unique_ptr<ProfileConnection> c(new ProfileConnection());
  c->request_ = r;
  ProfileResult& res = c->base_;
  res.settings = r.settings;
  // "yolo_tiny/model.onnx" rather than "model.onnx" when the file has a generic name.
  const std::filesystem::path model_path(r.model_path);
  res.model_name = model_path.filename().string();
  if (model_path.stem() == "model" && model_path.has_parent_path() &&
      !model_path.parent_path().filename().empty())
    res.model_name = (model_path.parent_path().filename() / model_path.filename()).string();
  if (!r.model_name.empty()) res.model_name = r.model_name;
  if (r.settings.runs < 1) return invalid_argument("--runs must be at least 1");
  if (r.settings.warmup < 0) return invalid_argument("--warmup must not be negative");

  // The store first: a database that cannot be opened should stop us before the device work.
  const std::string db_path = r.db_path.value_or(store::ProfileStore::default_path());
  if (!db_path.empty()) {
    SOD2_ASSIGN_OR_RETURN(c->db_, store::ProfileStore::open(db_path));
    res.db_path = db_path;
  }
  SOD2_ASSIGN_OR_RETURN(const device::DeviceId id, device::parse_device_id(r.device));
  c->device_transport_ = id.transport;
  c->device_serial_ = id.serial;
  SOD2_ASSIGN_OR_RETURN(c->transport_, device::load_transport(id.transport));

  stage("compiling " + res.model_name, 0.05);
  Expected<Compiled> compiled = compile(r);
  if (!compiled.ok()) return compiled.status().with_context(r.model_path);
  res.model_sha256 = compiled->model_sha256;
  res.package_sha256 = rt::to_hex(rt::sha256(compiled->package));
  res.package_bytes = static_cast<int64_t>(compiled->package.size());
  c->program_ = compiled->program;
  c->package_ = std::move(compiled->package);
  // Named inputs must exist, and the files are read and checked once, before the device.
  for (const IntInputRange& range : r.int_ranges) {
    if (std::none_of(c->program_->inputs.begin(), c->program_->inputs.end(),
                     [&](const rt::InputSignature& s) { return s.name == range.input; }))
      return invalid_argument("integer input " + range.input +
                              ": the model has no input of that name");
  }
  SOD2_ASSIGN_OR_RETURN(c->input_files_, load_input_files(*c->program_, r.input_files));
  SOD2_ASSIGN_OR_RETURN(c->request_.bind,
                        bind_with_input_files(*c->program_, c->input_files_, r.bind));
  // A binding that cannot run is refused before the device is involved.
  if (bind_is_complete)
    SOD2_RETURN_IF_ERROR(bound_input_shapes(*c->program_, c->request_.bind).status());
  // The session derives the same lifetimes before it lays out a binding; a program it would
  // refuse is refused here, before the device.
  SOD2_ASSIGN_OR_RETURN(rt::ArenaLifetimes lives, rt::check_program_dataflow(*c->program_));
  c->lives_ = std::move(lives.life);
  if (progress.cancel && progress.cancel->load())
    return cancelled("cancelled before reaching the device");
  SOD2_RETURN_IF_ERROR(c->start_agent(progress, from + (to - from) * 0.1, to, true));
  return c;
}

Status ProfileConnection::start_agent(const ProfileProgress& progress, double from, double to,
                                      bool record) {
  auto stage = [&](const std::string& what, double f) {
    if (progress.report) progress.report(what, from + (to - from) * f);
  };
  const std::string bindings = bindings_text(request_.bind);
  auto fail = [&](const Status& st) { return record ? failed(st, bindings, {}, -1) : st; };
  stage("starting the agent on " + request_.device, 0);
  client_.reset();
  child_.reset();
  device::AgentStart start;
  start.serial = device_serial_;
  start.cancel = progress.cancel;
  start.progress = [&](const std::string& s) { stage(s, 0.05); };
  Expected<std::unique_ptr<device::ChildProcess>> child = transport_->start_agent(start);
  base_.device = transport_->connected_device();
  if (!child.ok()) return fail(child.status());
  child_ = std::move(*child);
  child_->set_cancel_flag(progress.cancel);
  child_->set_idle_timeout(120s);
  client_ = std::make_unique<device::AgentClient>(*child_);
  std::vector<uint32_t> graph_nodes;
  for (const rt::GraphDesc& g : program_->graphs)
    graph_nodes.push_back(static_cast<uint32_t>(g.nodes.size()));
  client_->expect_graphs(std::move(graph_nodes));
  Expected<device::AgentHello> hello = client_->hello(host_software());
  if (!hello.ok()) return fail(hello.status());
  base_.agent = *hello;

  stage("sending the package", 0.2);
  Expected<bool> cached = client_->send_package(
      package_, [&](double f) { stage("sending the package", 0.2 + 0.8 * f); });
  if (!cached.ok()) return fail(cached.status());
  base_.package_cached = *cached;
  return Status::ok_status();
}

Status ProfileConnection::restart(const ProfileProgress& progress) {
  client_.reset();
  if (child_) child_->kill();
  return start_agent(progress, 0, 0, false);
}

store::RunRecord ProfileConnection::run_record(const std::string& bindings,
                                               const Point& point) const {
  store::RunRecord rec;
  rec.device = device_record(base_.device, base_.agent);
  if (rec.device.device_id.empty()) {  // the device was never reached
    rec.device.device_id = request_.device;
    rec.device.transport = device_transport_;
  }
  rec.model_sha256 = base_.model_sha256;
  rec.model_name = base_.model_name;
  rec.model_path = std::filesystem::absolute(request_.model_path).string();
  rec.package_sha256 = base_.package_sha256;
  rec.package_bytes = base_.package_bytes;
  rec.bindings = bindings;
  rec.threads = request_.settings.threads;
  rec.runs = request_.settings.runs;
  rec.warmup = request_.settings.warmup;
  rec.host_software = host_software();
  rec.agent_software = base_.agent.software;
  rec.sweep_id = point.sweep_id;
  rec.sweep_value = point.value;
  return rec;
}

Status ProfileConnection::failed(const Status& st, const std::string& bindings, const Point& point,
                                 int64_t predicted_arena) {
  if (!db_) return st;
  store::RunRecord rec = run_record(bindings, point);
  rec.ok = false;
  rec.failure = st.message();
  rec.predicted_arena_bytes = predicted_arena;
  Expected<int64_t> run = db_->record_run(std::move(rec));
  if (!run.ok())
    return Status(st.code(), st.message() + " (and recording the failure failed: " +
                                 run.status().message() + ")");
  return Status(st.code(), st.message() + " [recorded as failed run " + std::to_string(*run) + "]");
}

Expected<plan::ProgramPlanAt> ProfileConnection::plan_at(
    const std::map<std::string, int64_t>& bind) const {
  return plan::program_plan_at(*program_, lives_, bind);
}

Expected<ProfileResult> ProfileConnection::measure(const std::map<std::string, int64_t>& bind,
                                                   const Point& point,
                                                   const ProfileProgress& progress, double from,
                                                   double to) {
  auto stage = [&](const std::string& what, double f) {
    if (progress.report) progress.report(what, from + (to - from) * f);
  };
  ProfileResult res = base_;
  res.bindings = bindings_text(bind);
  const rt::ProgramDesc& program = *program_;
  SOD2_ASSIGN_OR_RETURN(const std::vector<rt::Shape> shapes, bound_input_shapes(program, bind));
  // What the plan view shows at these sizes, execution symbols at their bounds, before the
  // device says what it ran in.
  if (Expected<plan::ProgramPlanAt> at = plan_at(bind); at.ok()) {
    res.predicted_arena_bytes = at->arena_bytes;
    res.prediction_exact = std::none_of(program.symbols.begin(), program.symbols.end(),
                                        [](const rt::SymbolDesc& s) { return s.execution; });
  }
  SOD2_ASSIGN_OR_RETURN(const auto int_ranges, int_input_ranges_at(request_.int_ranges, bind));
  std::vector<rt::HostTensor> inputs = random_inputs(program, shapes, int_ranges, request_.seed);
  SOD2_RETURN_IF_ERROR(use_input_files(input_files_, inputs));
  if (progress.cancel && progress.cancel->load())
    return failed(cancelled("cancelled before the run"), res.bindings, point,
                  res.predicted_arena_bytes);
  if (!client_) {
    return failed(io_error("the agent is not running (it ended after an earlier failure)"),
                  res.bindings, point, res.predicted_arena_bytes);
  }

  stage("running", 0);
  const device::RunSettings& settings = request_.settings;
  const bool sustained = settings.duration_s > 0;
  // The first runs are a small share of a sustained run's time.
  const double runs_share = sustained ? 0.05 : 1.0;
  const auto on_run = [&](int done, int of) {
    stage("run " + std::to_string(done) + " of " + std::to_string(of),
          runs_share * static_cast<double>(done) / of);
  };
  const auto on_window = [&](const device::SustainedWindow& w) {
    stage("sustained run: " + text::fixed(w.end_s, 0) + " of " +
              text::fixed(settings.duration_s, 0) + " s, p50 " + text::fixed(w.p50_ms, 2) + " ms",
          runs_share + (1 - runs_share) * std::min(1.0, w.end_s / settings.duration_s));
    if (progress.window) progress.window(w);
  };
  Expected<device::RunReport> report = [&] {
    if (!sustained || !progress.cancel) return client_->run(inputs, settings, on_run, on_window);
    // Cancelling a sustained run keeps what it measured: the agent is asked to stop and the
    // read goes on until it has (the stream's own cancel, which abandons the read, is off
    // meanwhile; the stream's idle timeout still ends an agent that does not answer).
    child_->set_cancel_flag(nullptr);
    std::atomic<bool> over{false};
    std::thread stopper([&] {
      while (!over.load()) {
        if (progress.cancel->load()) {
          (void)client_->request_cancel();
          return;
        }
        std::this_thread::sleep_for(50ms);
      }
    });
    Expected<device::RunReport> r = client_->run(inputs, settings, on_run, on_window);
    over = true;
    stopper.join();
    child_->set_cancel_flag(progress.cancel);
    return r;
  }();
  if (!report.ok()) return failed(report.status(), res.bindings, point, res.predicted_arena_bytes);
  res.report = std::move(*report);
  res.stats = latency_stats(res.report.runs);
  // With the execution symbols' values the run bound, the plan is evaluated at exactly the
  // run's sizes: what the package view shows with those values on its sliders.
  if (!res.report.runs.empty()) {
    const std::vector<int64_t>& ran = res.report.runs.back().symbol_values;
    if (ran.size() == program.symbols.size()) {
      std::map<std::string, int64_t> at_run;
      for (size_t k = 0; k < ran.size(); ++k) at_run[program.symbols[k].name] = ran[k];
      Expected<plan::ProgramPlanAt> at = plan_at(at_run);
      res.predicted_arena_bytes = at.ok() ? at->arena_bytes : -1;
      res.prediction_exact = at.ok();
    }
  }
  const std::optional<plan::StepWork> work = work_at_bind(program, bind);
  Expected<std::vector<GroupProfile>> groups = groups_of(program, res.report, work);
  if (!groups.ok()) return failed(groups.status(), res.bindings, point, res.predicted_arena_bytes);
  res.groups = std::move(*groups);
  res.ops_at_most = work && work->at_most;

  if (db_) {
    store::RunRecord rec = run_record(res.bindings, point);
    rec.ok = true;
    const LatencyStats& s = res.stats;
    rec.first_ms = s.first_ms;
    rec.warmup_avg_ms = s.warmup_avg_ms;
    rec.avg_ms = s.avg_ms;
    rec.std_ms = s.std_ms;
    rec.min_ms = s.min_ms;
    rec.max_ms = s.max_ms;
    rec.threads = res.report.threads;
    rec.peak_rss_bytes = res.report.peak_rss_bytes;
    if (!res.report.runs.empty()) {
      rec.arena_bytes = res.report.runs.back().arena_bytes;
      rec.plan_version = res.report.runs.back().plan_version;
    }
    rec.predicted_arena_bytes = res.predicted_arena_bytes;
    rec.prediction_exact = res.prediction_exact;
    for (const device::RunSample& r : res.report.runs)
      rec.latencies.push_back({r.warmup, r.latency_ms, r.arena_bytes, r.rss_bytes});
    for (const GroupProfile& g : res.groups) rec.groups.push_back(group_record(g));
    if (sustained) {
      rec.duration_s = settings.duration_s;
      rec.window_s = settings.window_s;
      rec.unreadable_sensors = res.report.unreadable_sensors;
      rec.stopped_early = res.report.stopped_early;
      for (const device::SustainedWindow& w : res.report.windows)
        rec.windows.push_back(window_record(w));
    }
    Expected<int64_t> run = db_->record_run(std::move(rec));
    if (!run.ok()) return run.status().with_context("the profile was measured but not recorded");
    res.run_id = *run;
  }
  return res;
}

}  // namespace sod2::profiling
