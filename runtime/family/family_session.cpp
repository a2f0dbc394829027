#include "runtime/family/family_session.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace sod2::rt {

Expected<std::unique_ptr<FamilySession>> FamilySession::create(FamilyProgram family,
                                                               const KernelRegistry& registry,
                                                               FamilySessionOptions options) {
  const size_t n = family.variants.size();
  if (n == 0) return invalid_argument("the family has no variants");
  if (!options.expected_ms.empty()) {
    if (options.expected_ms.size() != n) {
      return invalid_argument(std::to_string(options.expected_ms.size()) +
                              " expected latencies for " + std::to_string(n) + " variants");
    }
    for (double ms : options.expected_ms) {
      if (!(ms > 0) || !std::isfinite(ms)) {
        return invalid_argument("expected latencies must be finite and > 0");
      }
    }
  }
  if (options.budget_ms < 0 || !std::isfinite(options.budget_ms)) {
    return invalid_argument("the latency budget must be a finite number of ms >= 0");
  }
  std::unique_ptr<FamilySession> s(new FamilySession(std::move(family), std::move(options)));
  const std::vector<VariantDesc>& v = s->family_.variants;
  s->order_.resize(n);
  std::iota(s->order_.begin(), s->order_.end(), size_t{0});
  const bool all_macs =
      std::all_of(v.begin(), v.end(), [](const VariantDesc& d) { return d.macs > 0; });
  const bool all_params =
      std::all_of(v.begin(), v.end(), [](const VariantDesc& d) { return d.params > 0; });
  const std::vector<double>& given = s->options_.expected_ms;
  std::stable_sort(s->order_.begin(), s->order_.end(), [&](size_t a, size_t b) {
    if (!given.empty()) return given[a] < given[b];
    if (all_macs) return v[a].macs < v[b].macs;
    if (all_params) return v[a].params < v[b].params;
    return false;
  });
  // Only one variant runs at a time: they share one arena (sized by the largest plan) and one
  // set of worker threads.
  SessionOptions shared = s->options_.session;
  if (!shared.shared_arena) shared.shared_arena = std::make_shared<Arena>();
  if (!shared.shared_pool) shared.shared_pool = std::make_shared<ThreadPool>(shared.threads);
  for (size_t i : s->order_) {
    if (!given.empty()) s->expected_ms_.push_back(given[i]);
    auto session = Session::create(v[i].program, registry, shared);
    if (!session.ok()) return session.status().with_context("variant '" + v[i].name + "'");
    s->sessions_.push_back(std::move(*session));
  }
  s->current_ = static_cast<int>(n) - 1;
  int floor = 0;
  if (!s->options_.floor_variant.empty()) {
    floor = -1;
    std::string names;
    for (int i = 0; i < s->variants(); ++i) {
      if (s->variant(i).name == s->options_.floor_variant) floor = i;
      names += (i ? ", " : "") + s->variant(i).name;
    }
    if (floor < 0) {
      return invalid_argument("no variant '" + s->options_.floor_variant +
                              "' for the floor; the family has " + names);
    }
  }
  const uint64_t min_macs = s->options_.min_macs;
  const double min_accuracy = s->options_.min_accuracy;
  auto meets = [&](int i) {
    const VariantDesc& d = s->variant(i);
    return d.macs >= min_macs &&
           (min_accuracy <= 0 || (d.has_accuracy && d.accuracy >= min_accuracy));
  };
  while (floor < s->variants() && !meets(floor)) ++floor;
  if (floor == s->variants()) {
    return invalid_argument("no variant has at least " + std::to_string(min_macs) + " MACs" +
                            (min_accuracy > 0
                                 ? " and an accuracy of at least " + std::to_string(min_accuracy)
                                 : std::string()));
  }
  s->options_.controller.floor = floor;
  if (s->options_.budget_ms > 0 && !s->expected_ms_.empty()) {
    SOD2_RETURN_IF_ERROR(s->start_controller());
  }
  return s;
}

Status FamilySession::start_controller(std::optional<int> start) {
  BudgetControllerOptions o = options_.controller;
  o.budget_ms = options_.budget_ms;
  if (start) o.start = *start;
  SOD2_ASSIGN_OR_RETURN(BudgetController c, BudgetController::create(expected_ms_, o));
  controller_.emplace(std::move(c));
  current_ = controller_->current();
  return Status::ok_status();
}

Status FamilySession::set_variant(int i) {
  if (i < 0 || i >= variants()) {
    return invalid_argument("variant " + std::to_string(i) + " of " + std::to_string(variants()));
  }
  current_ = i;
  // The controller continues from the chosen variant: restart it there.
  if (controller_ && manager_enabled_)
    return start_controller(std::max(i, options_.controller.floor));
  return Status::ok_status();
}

Status FamilySession::set_manager_enabled(bool enabled) {
  if (enabled && !manager_enabled_ && controller_) {
    manager_enabled_ = true;
    return set_variant(current_);
  }
  manager_enabled_ = enabled;
  return Status::ok_status();
}

Status FamilySession::set_budget(double budget_ms) {
  if (!(budget_ms > 0) || !std::isfinite(budget_ms)) {
    return invalid_argument("the latency budget must be a finite number of ms > 0");
  }
  options_.budget_ms = budget_ms;
  if (controller_) {
    controller_->set_budget(budget_ms);
    if (manager_enabled_) current_ = controller_->current();
  } else if (!expected_ms_.empty()) {
    SOD2_RETURN_IF_ERROR(start_controller());
  }
  return Status::ok_status();
}

Expected<std::span<const Tensor>> FamilySession::timed_run(int v, std::span<const Tensor> inputs,
                                                           double* wall_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  auto out = sessions_[static_cast<size_t>(v)]->run(inputs);
  *wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Status FamilySession::warm_up(std::span<const Tensor> inputs, int runs) {
  runs = std::max(runs, 1);
  std::vector<double> measured;
  for (int i = 0; i < variants(); ++i) {
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
      double wall = 0;
      auto out = timed_run(i, inputs, &wall);
      if (!out.ok())
        return out.status().with_context("warming up variant '" + variant(i).name + "'");
      ms.push_back(latency_source_ ? latency_source_(i, wall) : wall);
    }
    std::nth_element(ms.begin(), ms.begin() + static_cast<long>(ms.size() / 2), ms.end());
    measured.push_back(std::max(ms[ms.size() / 2], 1e-6));
  }
  if (options_.expected_ms.empty()) {
    for (size_t i = 1; i < measured.size(); ++i)
      measured[i] = std::max(measured[i], measured[i - 1]);
    expected_ms_ = std::move(measured);
  }
  if (options_.budget_ms > 0) SOD2_RETURN_IF_ERROR(start_controller());
  return Status::ok_status();
}

Expected<std::span<const Tensor>> FamilySession::run(std::span<const Tensor> inputs) {
  if (options_.budget_ms > 0 && !controller_ && manager_enabled_) {
    SOD2_RETURN_IF_ERROR(warm_up(inputs, 1));
  }
  const int v = current_;
  double wall = 0;
  auto out = timed_run(v, inputs, &wall);
  if (!out.ok()) return out.status().with_context("variant '" + variant(v).name + "'");
  last_variant_ = v;
  last_measured_ms_ = wall;
  last_latency_ms_ = latency_source_ ? latency_source_(v, wall) : wall;
  if (controller_ && manager_enabled_) current_ = controller_->observe(last_latency_ms_);
  return out;
}

}  // namespace sod2::rt
