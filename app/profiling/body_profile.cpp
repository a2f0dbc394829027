#include "app/profiling/body_profile.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace sod2::profiling {
namespace {

// Deeper than any body the importer accepts (it refuses 33 nested Ifs): a package that claims
// more is cut here rather than followed.
constexpr int kMaxDepth = 64;

struct Walk {
  const rt::ProgramDesc& program;
  const BodyTimes& times;
  double runs;
  std::vector<BodyNodeProfile>* out;

  double total_ms(size_t g, size_t n) const {
    return g < times.total_ms.size() && n < times.total_ms[g].size() ? times.total_ms[g][n] : 0;
  }
  int64_t calls(size_t g, size_t n) const {
    return g < times.calls.size() && n < times.calls[g].size() ? times.calls[g][n] : 0;
  }

  // The bodies of `parent`, whose time per run is `parent_ms`.
  void bodies(const rt::NodeDesc& parent, double parent_ms, int depth) {
    if (depth > kMaxDepth) return;
    for (size_t i = 0; i < parent.subgraphs.size(); ++i) {
      const int32_t g = parent.subgraphs[i];
      if (g <= 0 || static_cast<size_t>(g) >= program.graphs.size()) continue;
      const rt::GraphDesc& graph = program.graphs[static_cast<size_t>(g)];
      for (size_t n = 0; n < graph.nodes.size(); ++n) {
        const int64_t c = calls(static_cast<size_t>(g), n);
        if (c <= 0) continue;
        const rt::NodeDesc& node = graph.nodes[n];
        BodyNodeProfile p;
        p.depth = depth;
        p.body = body_name(parent, i);
        p.graph = g;
        p.node = static_cast<int32_t>(n);
        p.name = node.info.name;
        p.op_types = node.fused_op_types.empty() ? std::vector<std::string>{node.info.op_type}
                                                 : node.fused_op_types;
        p.avg_ms = total_ms(static_cast<size_t>(g), n) / runs;
        p.calls_per_run = static_cast<double>(c) / runs;
        p.percent_of_parent = parent_ms > 0 ? 100.0 * p.avg_ms / parent_ms : 0;
        const double ms = p.avg_ms;
        out->push_back(std::move(p));
        bodies(node, ms, depth + 1);
      }
    }
  }
};

}  // namespace

std::string BodyNodeProfile::op_label() const {
  std::string s;
  for (const std::string& t : op_types) s += (s.empty() ? "" : "+") + t;
  return s;
}

std::string body_name(const rt::NodeDesc& parent, size_t i) {
  if (parent.info.op_type == "If") return i == 0 ? "then_branch" : "else_branch";
  return parent.subgraphs.size() == 1 ? "body" : "body " + std::to_string(i);
}

std::vector<std::vector<BodyNodeProfile>> body_profiles(const rt::ProgramDesc& program,
                                                        const BodyTimes& times, int64_t runs,
                                                        std::span<const double> parent_ms) {
  if (program.graphs.empty()) return {};
  const rt::GraphDesc& main = program.graphs[0];
  std::vector<std::vector<BodyNodeProfile>> out(main.nodes.size());
  if (runs <= 0) return out;
  for (size_t i = 0; i < main.nodes.size(); ++i) {
    if (main.nodes[i].subgraphs.empty()) continue;
    Walk walk{program, times, static_cast<double>(runs), &out[i]};
    walk.bodies(main.nodes[i], i < parent_ms.size() ? parent_ms[i] : 0, 1);
  }
  return out;
}

Expected<BodyTimes> body_times_of(const rt::ProgramDesc& program,
                                  std::span<const device::BodyNodeTime> nodes) {
  BodyTimes t;
  t.total_ms.resize(program.graphs.size());
  t.calls.resize(program.graphs.size());
  for (size_t g = 1; g < program.graphs.size(); ++g) {
    t.total_ms[g].assign(program.graphs[g].nodes.size(), 0.0);
    t.calls[g].assign(program.graphs[g].nodes.size(), 0);
  }
  for (const device::BodyNodeTime& b : nodes) {
    if (b.graph == 0 || b.graph >= program.graphs.size() ||
        b.node >= program.graphs[b.graph].nodes.size()) {
      return invalid_argument("the device reported a time for node " + std::to_string(b.node) +
                              " of graph " + std::to_string(b.graph) +
                              ", which the package does not have");
    }
    if (!std::isfinite(b.total_ms) || b.total_ms < 0) {
      return invalid_argument("the device reported a negative or non-finite time for body node '" +
                              b.name + "'");
    }
    t.total_ms[b.graph][b.node] = b.total_ms;
    t.calls[b.graph][b.node] = static_cast<int64_t>(std::min<uint64_t>(b.calls, INT64_MAX));
  }
  return t;
}

}  // namespace sod2::profiling
