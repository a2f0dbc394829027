#include "plan_test_support.h"

#include <algorithm>
#include <random>
#include <sstream>

#include "app/cli/plan_command.h"
#include "core/pipeline/compiled_model.h"
#include "core/rdp/binding.h"

namespace sod2::studio::testing {
namespace {

std::string range_arg(const RdpOptions& options) {
  std::string out;
  for (const auto& [name, r] : options.ranges) {
    if (!out.empty()) out += ",";
    out += name + "=" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + ":" +
           std::to_string(r.multiple);
  }
  return out;
}

std::string bind_arg(const std::map<std::string, int64_t>& bind) {
  std::string out;
  for (const auto& [name, v] : bind)
    out += (out.empty() ? "" : ",") + name + "=" + std::to_string(v);
  return out;
}

}  // namespace

Expected<std::unique_ptr<PlannedModel>> plan_like_cli(const sod2::testing::CorpusModel& m,
                                                      const std::map<std::string, int64_t>& bind) {
  auto p = std::make_unique<PlannedModel>();
  pipeline::CompileOptions options;
  options.rdp = m.options;
  SOD2_ASSIGN_OR_RETURN(pipeline::CompiledModel c,
                        pipeline::compile_file(m.file.string(), options));
  SOD2_ASSIGN_OR_RETURN(p->binding, make_binding(c.rdp, bind));
  SOD2_ASSIGN_OR_RETURN(p->at, pipeline::plan_at(c, p->binding));
  // The graphs are shared, so RDP's facts (keyed by their addresses) stay valid when moved out.
  p->model = c.model;
  p->rdp = std::move(c.rdp);
  p->plan = std::move(c.plan);
  return p;
}

Expected<nlohmann::json> plan_json_from_cli(const sod2::testing::CorpusModel& m,
                                            const std::map<std::string, int64_t>& bind) {
  std::vector<std::string> args = {m.file.string(), "--bind", bind_arg(bind), "--json"};
  const std::string ranges = range_arg(m.options);
  if (!ranges.empty()) args.insert(args.end(), {"--range", ranges});
  std::ostringstream out, err;
  if (cli::run_plan(args, out, err) != 0) return internal_error("sod2 plan: " + err.str());
  nlohmann::json doc = nlohmann::json::parse(out.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return parse_error("sod2 plan printed no JSON");
  return doc;
}

TimelineModel synthetic_timeline(int num_tensors, int64_t num_steps, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<TimelineRect> rects(static_cast<size_t>(num_tensors));
  for (int i = 0; i < num_tensors; ++i) {
    TimelineRect& r = rects[static_cast<size_t>(i)];
    r.tensor = i;
    r.name = "t" + std::to_string(i);
    r.first_step = static_cast<int64_t>(rng() % static_cast<uint32_t>(num_steps));
    const int64_t life = 1 + static_cast<int64_t>(rng() % 40);
    r.last_step = std::min(num_steps - 1, r.first_step + life - 1);
    r.size = 64 * (1 + static_cast<int64_t>(rng() % 4096));
  }
  // Sweep over steps with the live tensors kept by offset: a first fit that is O(n·live).
  std::vector<int> order(rects.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return rects[static_cast<size_t>(a)].first_step < rects[static_cast<size_t>(b)].first_step;
  });
  std::vector<int> live;
  int64_t arena = 0;
  for (int t : order) {
    TimelineRect& r = rects[static_cast<size_t>(t)];
    std::erase_if(live,
                  [&](int u) { return rects[static_cast<size_t>(u)].last_step < r.first_step; });
    std::sort(live.begin(), live.end(), [&](int a, int b) {
      return rects[static_cast<size_t>(a)].offset < rects[static_cast<size_t>(b)].offset;
    });
    int64_t offset = 0;
    for (int u : live) {
      const TimelineRect& o = rects[static_cast<size_t>(u)];
      if (o.offset >= offset + r.size) break;
      offset = std::max(offset, o.offset + o.size);
    }
    r.offset = offset;
    arena = std::max(arena, offset + r.size);
    live.push_back(t);
  }
  // The lower bound is the peak of live bytes, as the planner defines it (-1 derives it).
  return TimelineModel::from_rects(std::move(rects), num_steps, arena, -1);
}

}  // namespace sod2::studio::testing
