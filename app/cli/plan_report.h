// What `sod2 plan` prints: one JSON document (the studio, tests) and a text form (people). Both
// read a MemoryPlan and its instantiation at one binding; neither computes anything new.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/ir/model.h"
#include "core/opt/fusion.h"
#include "core/opt/memory_plan.h"
#include "core/opt/model_work.h"
#include "core/rdp/rdp.h"

namespace sod2::cli {

// Bumped whenever a field changes meaning or disappears (adding fields keeps the version).
inline constexpr int kPlanSchemaVersion = 2;  // 2: a step runs a unit (group) of nodes

struct PlanReportData {
  const Model& model;
  const RdpResult& rdp;
  const opt::MemoryPlan& plan;
  const opt::PlanAtBinding& at;
  bool bound = false;  // --bind given; otherwise `at` is the upper bounds
  // The symbols --bind named; the execution symbols the plan needs that it did not name are
  // sized at their bound, which the report says.
  std::set<std::string> user_bound;
  double instantiate_us = 0;
  std::vector<std::string> warnings;
  const opt::ModelWork* work = nullptr;  // the compiled model's, when there is one
};

nlohmann::ordered_json plan_json(const PlanReportData& data);
// Short by default: the counts, the arena and its yardsticks, the few largest tensors. `verbose`:
// every group, step and tensor as well (thousands of lines on a real model).
std::string plan_text(const PlanReportData& data, bool verbose = false);

}  // namespace sod2::cli
