#include "app/profiling/profile_job.h"

#include <cmath>
#include <filesystem>

#include "app/profiling/run_inputs.h"
#include "core/onnx/onnx_import.h"
#include "core/package/package_writer.h"
#include "core/pipeline/compiled_model.h"
#include "core/status/input_file.h"
#include "core/store/profile_store.h"
#include "core/version.h"
#include "plugins/device/transport_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/package/sha256.h"
#include "runtime/program/step_work.h"

namespace sod2::profiling {
namespace {

using namespace std::chrono_literals;

// A model or a package, read whole: a regular file (never a FIFO or a device), whatever its size
// (a package's header bounds it; a model is refused above 2 GiB when it is imported).
Expected<std::vector<uint8_t>> read_file(const std::string& path) {
  return read_input_file(path, kNoInputSizeLimit);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
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

std::vector<GroupProfile> groups_of(const rt::ProgramDesc& program, const device::RunReport& rep,
                                    const std::optional<plan::StepWork>& work) {
  const rt::GraphDesc& g = program.graphs[0];
  std::vector<GroupProfile> out(g.nodes.size());
  int measured = 0;
  for (const device::RunSample& s : rep.runs) {
    if (s.warmup) continue;
    ++measured;
    for (size_t i = 0; i < out.size() && i < s.group_ms.size(); ++i) out[i].avg_ms += s.group_ms[i];
  }
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const rt::NodeDesc& n = g.nodes[i];
    GroupProfile& p = out[i];
    p.index = static_cast<int>(i);
    p.name = n.info.name;
    p.nodes = n.fused_nodes.empty() ? std::vector<std::string>{n.info.name} : n.fused_nodes;
    p.op_types =
        n.fused_op_types.empty() ? std::vector<std::string>{n.info.op_type} : n.fused_op_types;
    if (measured > 0) p.avg_ms /= measured;
    p.shape = i < rep.group_shapes.size() ? rep.group_shapes[i] : "";
    p.output_bytes = i < rep.group_output_bytes.size() ? rep.group_output_bytes[i] : 0;
    if (work && i < work->ops.size()) p.ops = work->ops[i];
    for (int32_t v : n.outputs) {
      if (v < 0) continue;
      p.dims = g.values[static_cast<size_t>(v)].dims;
      break;
    }
    total += p.avg_ms;
  }
  double cum = 0;
  for (GroupProfile& p : out) {
    p.percent = total > 0 ? 100.0 * p.avg_ms / total : 0;
    cum += p.percent;
    p.cumulative_percent = cum;
  }
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

}  // namespace

std::string GroupProfile::op_label() const { return join(op_types, "+"); }

LatencyStats latency_stats(const std::vector<device::RunSample>& runs) {
  LatencyStats s;
  int warm = 0;
  double sum = 0, sq = 0;
  bool first = true;
  for (const device::RunSample& r : runs) {
    if (first) s.first_ms = r.latency_ms;
    first = false;
    if (r.warmup) {
      s.warmup_avg_ms += r.latency_ms;
      ++warm;
      continue;
    }
    if (s.count == 0 || r.latency_ms < s.min_ms) s.min_ms = r.latency_ms;
    if (s.count == 0 || r.latency_ms > s.max_ms) s.max_ms = r.latency_ms;
    ++s.count;
    sum += r.latency_ms;
    sq += r.latency_ms * r.latency_ms;
  }
  if (warm > 0) s.warmup_avg_ms /= warm;
  if (s.count > 0) {
    s.avg_ms = sum / s.count;
    s.std_ms = std::sqrt(std::max(0.0, sq / s.count - s.avg_ms * s.avg_ms));
  }
  return s;
}

Expected<ProfileResult> profile(const ProfileRequest& r, const ProfileProgress& progress) {
  auto stage = [&](const std::string& what, double f) {
    if (progress.report) progress.report(what, f);
  };
  auto stopped = [&] { return progress.cancel && progress.cancel->load(); };
  ProfileResult res;
  res.settings = r.settings;
  // "yolo_tiny/model.onnx" rather than "model.onnx" when the file has a generic name.
  const std::filesystem::path model_path(r.model_path);
  res.model_name = model_path.filename().string();
  if (model_path.stem() == "model" && model_path.has_parent_path() &&
      !model_path.parent_path().filename().empty())
    res.model_name = (model_path.parent_path().filename() / model_path.filename()).string();
  if (!r.model_name.empty()) res.model_name = r.model_name;
  res.bindings = bindings_text(r.bind);
  if (r.settings.runs < 1) return invalid_argument("--runs must be at least 1");
  if (r.settings.warmup < 0) return invalid_argument("--warmup must not be negative");

  // The store first: a database that cannot be opened should stop us before the device work.
  std::unique_ptr<store::ProfileStore> db;
  const std::string db_path = r.db_path.value_or(store::ProfileStore::default_path());
  if (!db_path.empty()) {
    SOD2_ASSIGN_OR_RETURN(db, store::ProfileStore::open(db_path));
    res.db_path = db_path;
  }
  SOD2_ASSIGN_OR_RETURN(const device::DeviceId id, device::parse_device_id(r.device));
  SOD2_ASSIGN_OR_RETURN(std::unique_ptr<device::DeviceTransport> transport,
                        device::load_transport(id.transport));

  stage("compiling " + res.model_name, 0.02);
  Expected<Compiled> compiled = compile(r);
  if (!compiled.ok()) return compiled.status().with_context(r.model_path);
  res.model_sha256 = compiled->model_sha256;
  res.package_sha256 = rt::to_hex(rt::sha256(compiled->package));
  res.package_bytes = static_cast<int64_t>(compiled->package.size());
  SOD2_ASSIGN_OR_RETURN(const std::vector<rt::Shape> shapes,
                        bound_input_shapes(*compiled->program, r.bind));
  const std::vector<rt::HostTensor> inputs =
      random_inputs(*compiled->program, shapes, r.int_ranges, r.seed);
  if (stopped()) return cancelled("cancelled before reaching the device");

  // From here on the device is involved: a failure is recorded with its reason.
  const std::string host_software = std::string("sod2 ") + SOD2_VERSION_STRING;
  auto record = [&](bool ok, const std::string& failure) -> Expected<int64_t> {
    if (!db) return int64_t{0};
    store::RunRecord rec;
    rec.device = device_record(res.device, res.agent);
    if (rec.device.device_id.empty()) {
      rec.device.device_id = r.device;
      rec.device.transport = id.transport;
    }
    rec.model_sha256 = res.model_sha256;
    rec.model_name = res.model_name;
    rec.model_path = std::filesystem::absolute(r.model_path).string();
    rec.package_sha256 = res.package_sha256;
    rec.package_bytes = res.package_bytes;
    rec.bindings = res.bindings;
    rec.threads = r.settings.threads;
    rec.runs = r.settings.runs;
    rec.warmup = r.settings.warmup;
    rec.ok = ok;
    rec.failure = failure;
    rec.host_software = host_software;
    rec.agent_software = res.agent.software;
    if (ok) {
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
      for (const device::RunSample& s : res.report.runs)
        rec.latencies.push_back({s.warmup, s.latency_ms, s.arena_bytes, s.rss_bytes});
      for (const GroupProfile& g : res.groups) {
        rec.groups.push_back(
            {g.index, g.name, g.op_label(), join(g.nodes, ","), g.shape, g.avg_ms, g.output_bytes});
      }
    }
    return db->record_run(std::move(rec));
  };
  auto failed = [&](const Status& st) -> Status {
    Expected<int64_t> run = record(false, st.message());
    if (!run.ok())
      return Status(st.code(), st.message() + " (and recording the failure failed: " +
                                   run.status().message() + ")");
    if (*run == 0) return st;
    return Status(st.code(),
                  st.message() + " [recorded as failed run " + std::to_string(*run) + "]");
  };

  stage("starting the agent on " + r.device, 0.1);
  device::AgentStart start;
  start.serial = id.serial;
  start.cancel = progress.cancel;
  start.progress = [&](const std::string& s) { stage(s, 0.12); };
  Expected<std::unique_ptr<device::ChildProcess>> child = transport->start_agent(start);
  res.device = transport->connected_device();
  if (!child.ok()) return failed(child.status());
  (*child)->set_cancel_flag(progress.cancel);
  (*child)->set_idle_timeout(120s);
  device::AgentClient client(**child);
  Expected<device::AgentHello> hello = client.hello(host_software);
  if (!hello.ok()) return failed(hello.status());
  res.agent = *hello;

  stage("sending the package", 0.15);
  Expected<bool> cached = client.send_package(
      compiled->package, [&](double f) { stage("sending the package", 0.15 + 0.2 * f); });
  if (!cached.ok()) return failed(cached.status());
  res.package_cached = *cached;

  stage("running", 0.35);
  Expected<device::RunReport> report = client.run(inputs, r.settings, [&](int done, int of) {
    stage("run " + std::to_string(done) + " of " + std::to_string(of), 0.35 + 0.6 * done / of);
  });
  if (!report.ok()) return failed(report.status());
  (*child)->close_stdin();
  res.report = std::move(*report);
  res.stats = latency_stats(res.report.runs);
  const std::optional<plan::StepWork> work = work_at_bind(*compiled->program, r.bind);
  res.groups = groups_of(*compiled->program, res.report, work);
  res.ops_at_most = work && work->at_most;

  stage("recording", 0.97);
  Expected<int64_t> run = record(true, "");
  if (!run.ok()) return run.status().with_context("the profile was measured but not recorded");
  res.run_id = *run;
  stage("done", 1.0);
  return res;
}

}  // namespace sod2::profiling
