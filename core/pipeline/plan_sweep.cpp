#include "core/pipeline/plan_sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "core/opt/report_binding.h"
#include "core/rdp/binding.h"

namespace sod2::pipeline {

Expected<SweepValues> sweep_values(const std::string& symbol, int64_t range_lo, int64_t range_hi,
                                   int64_t multiple, const SweepRequest& request) {
  SweepValues out;
  out.lo = request.lo.value_or(range_lo);
  out.hi = request.hi.value_or(range_hi);
  if (out.lo < range_lo || out.hi > range_hi || out.lo > out.hi) {
    return invalid_argument(symbol + "=" + std::to_string(out.lo) + ":" + std::to_string(out.hi) +
                            " is outside its range " + std::to_string(range_lo) + ":" +
                            std::to_string(range_hi) + " (declare a wider one with --range)");
  }
  const int64_t m = std::max<int64_t>(multiple, 1);
  const int64_t max_points = std::max<int64_t>(request.max_points, 2);
  const bool whole_range = !request.lo && !request.hi;
  out.step = request.step.value_or(
      whole_range
          ? std::max<int64_t>(m, (out.hi - out.lo + max_points - 2) / (max_points - 1) / m * m)
          : m);
  if (out.step < 1) return invalid_argument("the step must be at least 1");
  constexpr int64_t kMaxPoints = 100000;
  if ((out.hi - out.lo) / out.step + 1 > kMaxPoints) {
    return invalid_argument(std::to_string((out.hi - out.lo) / out.step + 1) + " points; at most " +
                            std::to_string(kMaxPoints) + " (use a larger step)");
  }
  return out;
}

Expected<PlanSweep> sweep_plan(const CompiledModel& compiled, const SweepRequest& request,
                               const std::atomic<bool>* cancel) {
  const RdpResult& rdp = compiled.rdp;
  std::optional<sym::Symbol> swept;
  std::string names;
  for (const SymbolInfo& info : rdp.symbols()) {
    if (info.kind != SymbolKind::kInput) continue;
    if (info.symbol.name() == request.symbol) swept = info.symbol;
    names += (names.empty() ? "" : ", ") + info.symbol.name();
  }
  if (!swept) {
    return invalid_argument("'" + request.symbol + "' is not an input symbol of the model (" +
                            (names.empty() ? std::string("it has none") : names) + ")");
  }
  if (request.held.count(request.symbol))
    return invalid_argument("'" + request.symbol + "' is both swept and held");
  const sym::SymbolRange range = rdp.ranges().get(*swept);
  PlanSweep out;
  out.symbol = request.symbol;
  SOD2_ASSIGN_OR_RETURN(const SweepValues visited,
                        sweep_values(request.symbol, range.lo, range.hi, range.multiple, request));
  out.lo = visited.lo;
  out.hi = visited.hi;
  out.step = visited.step;
  out.held = request.held;
  for (const SymbolInfo& info : rdp.symbols()) {
    if (info.kind != SymbolKind::kInput || info.symbol == *swept) continue;
    if (!out.held.count(info.symbol.name()))
      out.held[info.symbol.name()] = opt::report_upper_bound(rdp, info.symbol);
  }
  const auto start = std::chrono::steady_clock::now();
  // The groups' expressions once; each point only evaluates them.
  std::vector<std::optional<sym::SymExpr>> group_ops, group_bytes;
  if (request.per_group) {
    for (const opt::FusionGroup& grp : compiled.plan.fusion.groups) {
      group_ops.push_back(opt::group_ops(compiled.work, grp));
      group_bytes.push_back(opt::group_bytes(compiled.graph(), rdp, grp));
    }
  }
  auto at = [](const std::optional<sym::SymExpr>& e, const sym::Binding& b) -> int64_t {
    if (!e) return -1;
    return opt::ops_at(*e, b).value_or(-1);
  };
  // Each point is planned on its own (the plan, RDP and the symbol table are shared read-only;
  // each thread keeps its own greedy workspace), so points are spread over the cores; what they
  // say is then read in order.
  const size_t count = static_cast<size_t>((out.hi - out.lo) / out.step + 1);
  out.points.resize(count);
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  const auto plan_points = [&] {
    for (size_t i = next++; i < count; i = next++) {
      if (cancel && cancel->load(std::memory_order_relaxed)) {
        stopped = true;
        return;
      }
      SweepPoint& p = out.points[i];
      p.value = out.lo + static_cast<int64_t>(i) * out.step;
      try {
        std::map<std::string, int64_t> values = out.held;
        values[out.symbol] = p.value;
        Expected<sym::Binding> b = make_binding(rdp, values);
        if (!b.ok()) {
          p.error = b.status().message();
        } else if (auto at = plan_at(compiled, *b, request.greedy_yardstick); !at.ok()) {
          p.error = at.status().message();
        } else {
          p.at = std::move(*at);
        }
        if (p.at) {
          p.ops = opt::ops_at(compiled.work.total_ops, p.at->binding);
          for (size_t k = 0; k < group_ops.size(); ++k) {
            p.group_ops.push_back(at(group_ops[k], p.at->binding));
            p.group_bytes.push_back(at(group_bytes[k], p.at->binding));
          }
        }
      } catch (const std::exception& e) {  // no memory for this point: the others go on
        p.at.reset();
        p.error = std::string("planning this point failed: ") + e.what();
      }
    }
  };
  const size_t threads = std::min<size_t>(
      {std::max(1u, std::thread::hardware_concurrency()), size_t{8}, (count + 31) / 32});
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(plan_points);
  plan_points();
  for (std::thread& w : workers) w.join();
  if (stopped) return cancelled("the sweep was cancelled");
  std::optional<int32_t> last;
  for (const SweepPoint& p : out.points) {
    if (!p.at) {
      ++out.failed;
      continue;
    }
    if (last && *last != p.at->version) out.changes.push_back({p.value, *last, p.at->version});
    last = p.at->version;
    const double r = static_cast<double>(p.at->arena_bytes) /
                     static_cast<double>(std::max<int64_t>(p.at->lower_bound_bytes, 1));
    if (r > out.worst_ratio) {
      out.worst_ratio = r;
      out.worst_at = p.value;
    }
  }
  out.sweep_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace sod2::pipeline
