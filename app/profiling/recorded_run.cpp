#include "app/profiling/recorded_run.h"

namespace sod2::profiling {
store::GroupRecord group_record(const GroupProfile& g) {
  store::GroupRecord r;
  r.index = g.index;
  r.name = g.name;
  r.op_types = store::join_names(g.op_types, '+');
  r.nodes = store::join_names(g.nodes, ',');
  r.shape = g.shape;
  r.avg_ms = g.avg_ms;
  r.output_bytes = g.output_bytes;
  r.ops = g.ops;
  r.p50_ms = g.p50_ms;
  r.p90_ms = g.p90_ms;
  r.ops_bound = g.ops_bound;
  for (const BodyNodeProfile& b : g.body) {
    r.body.push_back({b.depth, b.body, b.graph, b.node, b.name, store::join_names(b.op_types, '+'),
                      b.avg_ms, b.calls_per_run, b.percent_of_parent});
  }
  return r;
}

ProfileResult result_from_record(const store::RunRecord& run) {
  ProfileResult r;
  r.device.id = run.device.device_id;
  r.device.transport = run.device.transport;
  r.device.model = run.device.model;
  r.agent.cpu = run.device.cpu;
  r.agent.arch = run.device.arch;
  r.agent.os = run.device.os;
  r.agent.cores = static_cast<uint32_t>(run.device.cores);
  r.agent.memory_bytes = static_cast<uint64_t>(run.device.memory_bytes);
  r.agent.software = run.agent_software;
  r.model_name = run.model_name;
  r.model_sha256 = run.model_sha256;
  r.package_sha256 = run.package_sha256;
  r.package_bytes = run.package_bytes;
  r.bindings = run.bindings;
  r.run_id = run.id;
  r.report.threads = static_cast<uint32_t>(run.threads);
  r.report.peak_rss_bytes = run.peak_rss_bytes;
  for (const store::LatencyRecord& l : run.latencies) {
    device::RunSample sample;
    sample.warmup = l.warmup;
    sample.latency_ms = l.ms;
    sample.arena_bytes = l.arena_bytes;
    sample.rss_bytes = l.rss_bytes;
    sample.plan_version = static_cast<int32_t>(run.plan_version);
    r.report.runs.push_back(sample);
  }
  r.stats = latency_stats(r.report.runs);
  for (const store::GroupRecord& g : run.groups) {
    GroupProfile p;
    p.index = static_cast<int>(g.index);
    p.name = g.name;
    p.nodes = store::split_names(g.nodes, ',');
    p.op_types = store::split_names(g.op_types, '+');
    p.shape = g.shape;
    p.avg_ms = g.avg_ms;
    p.p50_ms = g.p50_ms;
    p.p90_ms = g.p90_ms;
    p.output_bytes = g.output_bytes;
    p.ops = g.ops;
    p.ops_bound = g.ops_bound;
    for (const store::BodyRecord& b : g.body) {
      BodyNodeProfile n;
      n.depth = static_cast<int>(b.depth);
      n.body = b.body;
      n.graph = static_cast<int32_t>(b.graph);
      n.node = static_cast<int32_t>(b.node);
      n.name = b.name;
      n.op_types = store::split_names(b.op_types, '+');
      n.avg_ms = b.avg_ms;
      n.calls_per_run = b.calls_per_run;
      n.percent_of_parent = b.percent_of_parent;
      p.body.push_back(std::move(n));
    }
    r.groups.push_back(std::move(p));
  }
  set_time_shares(r.groups);
  r.predicted_arena_bytes = run.predicted_arena_bytes;
  r.prediction_exact = run.prediction_exact;
  return r;
}

}  // namespace sod2::profiling
