#include "app/cli/run_benchmark.h"

#include "runtime/exec/process_info.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>

#include <nlohmann/json.hpp>

#include "app/cli/symbol_args.h"
#include "app/profiling/body_profile.h"
#include "app/profiling/input_files.h"
#include "app/profiling/run_inputs.h"
#include "core/text/text_table.h"
#include "runtime/exec/blocked_values.h"
#include "runtime/program/step_work.h"

namespace sod2::cli {
namespace {

using text::fixed;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t i =
      std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

// The operations of the last run: every symbol as the run bound it (an execution symbol a run
// never reached, such as one in an untaken branch, at its bound).
Expected<plan::StepWork> run_work(const rt::Session& session) {
  const rt::ProgramDesc& p = session.program();
  std::vector<int64_t> values(p.symbols.size());
  std::vector<char> bound(p.symbols.size());
  for (size_t k = 0; k < values.size(); ++k) {
    values[k] = session.symbol_value(k);
    bound[k] = session.symbol_bound(k) ? 1 : 0;
  }
  return plan::step_work_at(p, values, bound);
}

// Inside each control-flow node, the body nodes that ran, depth first and indented: ms per run,
// % of the node holding them, calls per run.
void print_bodies(const rt::Session& session, std::ostream& out) {
  const rt::NodeTimes& t = session.node_times();
  const auto& nodes = session.program().graphs[0].nodes;
  std::vector<double> node_ms(nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    node_ms[n] = t.total_ms[n] / static_cast<double>(t.runs);
  const auto rows =
      profiling::body_profiles(session.program(), {t.body_total_ms, t.body_calls}, t.runs, node_ms);
  constexpr size_t kMaxRows = 40;  // per node: a large loop body is summarised
  bool header = false;
  for (size_t n = 0; n < rows.size(); ++n) {
    if (rows[n].empty()) continue;
    if (!header)
      out << "inside control flow (ms per run, % of the node holding it, calls per run):\n";
    header = true;
    out << "  " << text::visible(nodes[n].info.op_type) << " '" << text::visible(nodes[n].info.name)
        << "' " << fixed(node_ms[n], 3) << " ms\n";
    for (size_t k = 0; k < rows[n].size() && k < kMaxRows; ++k) {
      const profiling::BodyNodeProfile& b = rows[n][k];
      out << std::string(2 + 2 * static_cast<size_t>(b.depth), ' ') << std::setw(9)
          << fixed(b.avg_ms, 3) << " ms " << std::setw(6) << fixed(b.percent_of_parent, 1) << "% x"
          << fixed(b.calls_per_run, b.calls_per_run == std::floor(b.calls_per_run) ? 0 : 2) << "  "
          << b.body << ": " << text::visible(b.op_label()) << " '" << text::visible(b.name)
          << "'\n";
    }
    if (rows[n].size() > kMaxRows)
      out << "    (" << rows[n].size() - kMaxRows << " more body nodes)\n";
  }
}

// Per op type and the `max_nodes` slowest nodes (0: all), in ms per run, with the GOP/s they
// reach where their operations are counted.
void print_profile(const rt::Session& session, size_t max_nodes, std::ostream& out) {
  const rt::NodeTimes& t = session.node_times();
  const auto& nodes = session.program().graphs[0].nodes;
  if (t.runs == 0) return;
  const double runs = static_cast<double>(t.runs);
  const Expected<plan::StepWork> work = run_work(session);
  // A step's operations, -1 where not counted or only a bound (an If, a Loop that can end early):
  // no GOP/s from those.
  auto ops_of = [&](size_t n) {
    const bool bound = work.ok() && n < work->bound.size() && work->bound[n];
    return work.ok() && n < work->ops.size() && !bound ? work->ops[n] : int64_t{-1};
  };
  auto gops = [](int64_t ops, double ms) {
    return ops < 0 || ms <= 0 ? std::string("-") : fixed(static_cast<double>(ops) / (ms * 1e6), 1);
  };
  struct OpTime {
    double ms = 0;
    int nodes = 0;
    int64_t ops = 0;  // -1 once a node of the type is not counted
  };
  std::map<std::string, OpTime> by_op;
  double total = 0;
  for (size_t n = 0; n < nodes.size(); ++n) {
    OpTime& e = by_op[nodes[n].info.op_type];
    e.ms += t.total_ms[n] / runs;
    ++e.nodes;
    e.ops = e.ops < 0 || ops_of(n) < 0 ? -1 : e.ops + ops_of(n);
    total += t.total_ms[n] / runs;
  }
  std::vector<std::pair<std::string, OpTime>> ops(by_op.begin(), by_op.end());
  std::sort(ops.begin(), ops.end(),
            [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });
  out << "profile: " << std::fixed << std::setprecision(3) << total << " ms per run in "
      << nodes.size() << " nodes\n";
  text::TextTable table({{"op"},
                         {"ms", text::Align::kRight},
                         {"%", text::Align::kRight},
                         {"nodes", text::Align::kRight},
                         {"GOP/s", text::Align::kRight}},
                        "  ");
  for (const auto& [op, e] : ops) {
    table.add_row({op, fixed(e.ms, 3), fixed(100 * e.ms / std::max(total, 1e-9), 1),
                   std::to_string(e.nodes), gops(e.ops, e.ms)});
  }
  out << table.str();
  // Which results stay channel-blocked between nodes (SessionOptions::channel_blocked).
  const std::string blocked_tag =
      session.channel_block() > 0 ? rt::blocked_layout_name(session.channel_block()) : "";
  auto output_blocked = [&](const rt::NodeDesc& n) {
    return !n.outputs.empty() && n.outputs[0] >= 0 &&
           session.value_blocked(static_cast<size_t>(n.outputs[0]));
  };
  if (!blocked_tag.empty()) {
    size_t blocked = 0;
    for (const rt::NodeDesc& n : nodes) blocked += output_blocked(n) ? 1 : 0;
    out << "channel-blocked: " << blocked << " of " << nodes.size()
        << " nodes pass their result on as " << blocked_tag << " (marked below)\n";
  }
  std::vector<size_t> idx(nodes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(),
            [&](size_t a, size_t b) { return t.total_ms[a] > t.total_ms[b]; });
  out << "slowest nodes:\n";
  const size_t listed = max_nodes == 0 ? idx.size() : std::min(max_nodes, idx.size());
  for (size_t k = 0; k < listed; ++k) {
    const auto& n = nodes[idx[k]];
    const double ms = t.total_ms[idx[k]] / runs;
    out << "  " << std::setw(9) << ms << " ms  " << std::setw(7) << gops(ops_of(idx[k]), ms)
        << " GOP/s  " << text::visible(n.info.op_type) << " '" << text::visible(n.info.name) << "'"
        << (output_blocked(n) ? "  " + blocked_tag : "") << "\n";
  }
  print_bodies(session, out);
}

}  // namespace

BenchmarkOptions benchmark_options_from(const CommandLine& cl) {
  BenchmarkOptions o;
  if (auto b = cl.value("--bind")) o.bind = parse_bindings(*b);
  o.inputs_dir = cl.value("--inputs");
  o.runs = parse_count(cl.value("--runs"), 20, "--runs", 1);
  o.warmup = parse_count(cl.value("--warmup"), 3, "--warmup", 1);
  o.seed = static_cast<uint32_t>(parse_count(cl.value("--seed"), 1, "--seed", 0));
  o.json = cl.has("--json");
  o.profile = cl.has("--profile");
  o.profile_nodes = parse_count(cl.value("--profile-nodes"), 10, "--profile-nodes", 0);
  // Bounds may name the model's symbols (lengths=seq), valued at --bind.
  if (auto r = cl.value("--int-range")) o.int_ranges = parse_int_ranges(*r);
  if (auto f = cl.value("--input")) o.input_files = parse_input_files(*f);
  return o;
}

int run_benchmark(rt::Session& session, const BenchmarkOptions& o, std::ostream& out,
                  std::ostream& err) {
  auto fail = [&](const Status& st) {
    err << "sod2 run: " << st.message() << "\n";
    return 1;
  };
  // Measured before the inputs exist, like ort_bench.js: the inputs count as working memory.
  // The peak restarts here: loading holds the parsed model and its tensors at once, a peak no
  // run reaches (ResNet-50: 130 MB above the RSS after load, from the load alone).
  const int64_t rss_after_load = rt::resident_bytes().current;
  const bool peak_restarted = rt::restart_peak_resident();
  std::vector<rt::HostTensor> inputs;
  if (o.inputs_dir) {
    auto read = profiling::read_saved_inputs(session.program(), *o.inputs_dir);
    if (!read.ok()) return fail(read.status());
    inputs = std::move(*read);
  } else {
    const rt::ProgramDesc& program = session.program();
    auto files = profiling::load_input_files(program, o.input_files);
    if (!files.ok()) return fail(files.status());
    auto bind = profiling::bind_with_input_files(program, *files, o.bind);
    if (!bind.ok()) return fail(bind.status());
    auto shapes = profiling::bound_input_shapes(program, *bind);
    if (!shapes.ok()) return fail(shapes.status());
    auto ranges = profiling::int_input_ranges_at(o.int_ranges, *bind);
    if (!ranges.ok()) return fail(ranges.status());
    inputs = profiling::random_inputs(program, *shapes, *ranges, o.seed);
    if (Status st = profiling::use_input_files(*files, inputs); !st.ok()) return fail(st);
  }
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : inputs) views.push_back(h.view());

  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  auto t = Clock::now();
  auto first = session.run(views);
  const double first_ms = ms_since(t);
  if (!first.ok()) return fail(first.status());
  for (int i = 1; i < o.warmup; ++i) {
    auto r = session.run(views);
    if (!r.ok()) return fail(r.status());
  }
  session.reset_node_times();  // only the timed runs count
  if (session.backend()) session.backend()->reset_counters();
  std::vector<double> times;
  for (int i = 0; i < o.runs; ++i) {
    t = Clock::now();
    auto r = session.run(views);
    times.push_back(ms_since(t));
    if (!r.ok()) return fail(r.status());
  }
  const int64_t peak = rt::resident_bytes().peak;
  nlohmann::ordered_json j;
  j["median_ms"] = percentile(times, 0.5);
  j["p90_ms"] = percentile(times, 0.9);
  j["min_ms"] = *std::min_element(times.begin(), times.end());
  j["first_run_ms"] = first_ms;
  j["load_ms"] = o.load_ms;
  j["runs"] = o.runs;
  j["threads"] = session.threads();
  j["arena_bytes"] = session.arena_bytes();
  j["value_buffer_bytes"] = session.value_buffer_capacity();
  j["plan_version"] = session.plan_version();
  j["peak_rss_bytes"] = peak;
  j["rss_after_load_bytes"] = rss_after_load;
  j["working_bytes"] = peak - rss_after_load;
  j["peak_since_load"] = peak_restarted;
  j["main_graph_nodes"] = session.program().graphs[0].nodes.size();
  // The roofline's numerator at this run's sizes (the execution symbols at the values the last
  // run bound): achieved GOP/s = ops / median time.
  if (const Expected<plan::StepWork> work = run_work(session); work.ok()) {
    j["ops"] = work->total;
    j["ops_complete"] = work->complete();
    j["gops_per_s"] = static_cast<double>(work->total) / (percentile(times, 0.5) * 1e6);
  }
  j["backend"] = session.backend() ? session.backend()->name() : "cpu";
  if (const rt::DeviceBackend* b = session.backend(); b && o.runs > 0) {
    const rt::BackendCounters& c = b->counters();
    const double runs = o.runs;
    j["dispatches_per_run"] = c.dispatches / runs;
    j["cpu_kernels_per_run"] = c.cpu_kernels / runs;
    j["syncs_per_run"] = c.syncs / runs;
    j["uploads_per_run"] = c.uploads / runs;
    j["upload_bytes_per_run"] = c.upload_bytes / runs;
    j["runtime_fallbacks_per_run"] = c.runtime_fallbacks / runs;
  }
  if (o.profile) print_profile(session, static_cast<size_t>(o.profile_nodes), o.json ? err : out);
  if (o.json) {
    out << j.dump() << "\n";
  } else {
    for (auto it = j.begin(); it != j.end(); ++it) {
      out << std::left << std::setw(22) << it.key() << " " << it.value().dump() << "\n";
    }
  }
  return 0;
}

}  // namespace sod2::cli
