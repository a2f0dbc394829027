// Shared by the plan-view tests: a corpus model planned exactly as `sod2 plan --bind` plans it,
// that command's JSON at the same binding, and a synthetic timeline of any size.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "../../opt/corpus.h"
#include "app/studio/plan/timeline_model.h"
#include "core/ir/model.h"
#include "core/opt/memory_plan.h"
#include "core/rdp/rdp.h"
#include "core/status/status.h"

namespace sod2::studio::testing {

// Everything a timeline is built from, kept together (the plan refers to the graph).
struct PlannedModel {
  Model model;
  RdpResult rdp;
  sym::Binding binding;
  opt::MemoryPlan plan;
  opt::PlanAtBinding at;
};

// What `sod2 plan MODEL --range R --bind B` computes: the compiled model (pipeline::compile with
// the corpus ranges), the binding checked like --bind, the plan evaluated there.
Expected<std::unique_ptr<PlannedModel>> plan_like_cli(const sod2::testing::CorpusModel& m,
                                                      const std::map<std::string, int64_t>& bind);

// `sod2 plan MODEL --range R --bind B --json`, run in-process and parsed.
Expected<nlohmann::json> plan_json_from_cli(const sod2::testing::CorpusModel& m,
                                            const std::map<std::string, int64_t>& bind);

// `num_tensors` tensors over `num_steps` steps with random lifetimes and sizes, stacked without
// overlap (first fit by offset among the tensors live at the same time), deterministic per seed.
TimelineModel synthetic_timeline(int num_tensors, int64_t num_steps, uint32_t seed);

}  // namespace sod2::studio::testing
