#include "runtime/family/budget_controller.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace sod2::rt {
namespace {

// A variant "settles" after this many windows of runs without a step down: a step up undone
// before that was a misprediction (its back-off doubles); a stay that long halves the back-off.
// 16, not fewer: under a bursty load the larger variant often holds for several windows before
// the next burst (measured with `sod2 ofa --load`: 4 windows let it climb back 12 times in 3 s).
constexpr int kSettleWindows = 16;

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", v);
  return buf;
}

}  // namespace

const char* decision_kind_name(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::kStart: return "start";
    case DecisionKind::kCollecting: return "collecting";
    case DecisionKind::kStepDown: return "step down";
    case DecisionKind::kOverAtFloor: return "over budget at floor";
    case DecisionKind::kStepUp: return "step up";
    case DecisionKind::kCooldown: return "cooldown";
    case DecisionKind::kNoHeadroom: return "no headroom";
    case DecisionKind::kAtLargest: return "at largest";
    case DecisionKind::kIgnoredLatency: return "ignored latency";
    case DecisionKind::kIgnoredBudget: return "ignored budget";
    case DecisionKind::kBudgetChanged: return "budget changed";
  }
  return "unknown";
}

std::string Decision::to_string() const {
  std::string s;
  if (from_set_budget && kind != DecisionKind::kIgnoredBudget) {
    s = "budget set to " + ms(budget_ms) + "; ";
  }
  const std::string step = std::to_string(from) + " → " + std::to_string(to);
  switch (kind) {
    case DecisionKind::kStart:
      return s + "start: variant " + std::to_string(to) + ", budget " + ms(budget_ms);
    case DecisionKind::kCollecting:
      return s + "collecting: " + std::to_string(samples) + " sample" + (samples == 1 ? "" : "s") +
             " since the last switch";
    case DecisionKind::kStepDown:
      return s + "over budget: median " + ms(median_ms) + " > " + ms(limit_ms) + "; " + step +
             " (predicted " + ms(predicted_ms) + ")";
    case DecisionKind::kOverAtFloor:
      return s + "over budget at floor: median " + ms(median_ms) + " > " + ms(limit_ms) +
             "; variant " + std::to_string(to) + " is the smallest allowed";
    case DecisionKind::kStepUp:
      return s + "headroom: predicted " + ms(predicted_ms) + " ≤ " + ms(limit_ms) + "; " + step;
    case DecisionKind::kCooldown:
      return s + "cooldown: median " + ms(median_ms) + " ≤ " + ms(budget_ms) + "; " +
             std::to_string(cooldown_left) + " more run" + (cooldown_left == 1 ? "" : "s") +
             " before a step up";
    case DecisionKind::kNoHeadroom:
      return s + "no headroom: predicted " + ms(predicted_ms) + " > " + ms(limit_ms) +
             " for variant " + std::to_string(to + 1);
    case DecisionKind::kAtLargest:
      return s + "within budget: median " + ms(median_ms) + " ≤ " + ms(budget_ms) +
             " on the largest variant";
    case DecisionKind::kIgnoredLatency: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%g", latency_ms);
      return "ignored latency " + std::string(buf) + " ms";
    }
    case DecisionKind::kIgnoredBudget: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%g", limit_ms);
      return "ignored budget " + std::string(buf) + " ms; keeping " + ms(budget_ms);
    }
    case DecisionKind::kBudgetChanged:
      return "budget set to " + ms(budget_ms) + "; " + std::to_string(samples) + " sample" +
             (samples == 1 ? "" : "s") + " since the last switch";
  }
  return s + decision_kind_name(kind);
}

Expected<BudgetController> BudgetController::create(std::vector<double> expected_ms,
                                                    BudgetControllerOptions options) {
  if (expected_ms.empty()) return invalid_argument("no variants: expected_ms is empty");
  const int n = static_cast<int>(expected_ms.size());
  for (int v = 0; v < n; ++v) {
    const double e = expected_ms[v];
    if (!std::isfinite(e) || e <= 0) {
      return invalid_argument("expected latency of variant " + std::to_string(v) +
                              " must be finite and > 0, got " + std::to_string(e));
    }
    // Stepping down must not make runs slower, or a missed budget could never be recovered.
    if (v > 0 && e < expected_ms[v - 1]) {
      return invalid_argument(
          "expected latencies must not decrease with the variant index: variant " +
          std::to_string(v) + " (" + ms(e) + ") < variant " + std::to_string(v - 1) + " (" +
          ms(expected_ms[v - 1]) + ")");
    }
  }
  if (!std::isfinite(options.budget_ms) || options.budget_ms <= 0) {
    return invalid_argument("budget must be finite and > 0 ms, got " +
                            std::to_string(options.budget_ms));
  }
  if (options.window < 1) {
    return invalid_argument("window must be ≥ 1, got " + std::to_string(options.window));
  }
  if (options.min_samples < 1 || options.min_samples > options.window) {
    return invalid_argument(
        "min_samples must be in [1, window = " + std::to_string(options.window) + "], got " +
        std::to_string(options.min_samples));
  }
  if (!(options.up_margin > 0 && options.up_margin <= 1)) {
    return invalid_argument("up_margin must be in (0, 1], got " +
                            std::to_string(options.up_margin));
  }
  if (options.cooldown_runs < -1) {
    return invalid_argument("cooldown_runs must be ≥ 0 (or -1 for the window), got " +
                            std::to_string(options.cooldown_runs));
  }
  if (options.floor < 0 || options.floor >= n) {
    return invalid_argument("floor must be a variant in [0, " + std::to_string(n - 1) + "], got " +
                            std::to_string(options.floor));
  }
  if (options.start != -1 && (options.start < options.floor || options.start >= n)) {
    return invalid_argument("start must be a variant in [floor = " + std::to_string(options.floor) +
                            ", " + std::to_string(n - 1) + "] (or -1), got " +
                            std::to_string(options.start));
  }
  if (options.max_up_backoff < 1) {
    return invalid_argument("max_up_backoff must be ≥ 1, got " +
                            std::to_string(options.max_up_backoff));
  }
  if (options.cooldown_runs == -1) options.cooldown_runs = options.window;
  if (options.start == -1) {
    options.start = options.floor;
    for (int v = options.floor; v < n; ++v) {
      if (expected_ms[v] <= options.budget_ms) options.start = v;
    }
  }
  return BudgetController(std::move(expected_ms), options);
}

BudgetController::BudgetController(std::vector<double> expected_ms, BudgetControllerOptions options)
    : expected_ms_(std::move(expected_ms)),
      options_(options),
      current_(options.start),
      window_(static_cast<size_t>(options.window)),
      scratch_(static_cast<size_t>(options.window)),
      up_backoff_(expected_ms_.size(), 1) {
  decision_.kind = DecisionKind::kStart;
  decision_.from = decision_.to = current_;
  decision_.budget_ms = options_.budget_ms;
}

double BudgetController::median_ms() const {
  if (count_ == 0) return Decision::kNone;
  for (int i = 0; i < count_; ++i) scratch_[i] = window_[(head_ + i) % options_.window];
  const auto begin = scratch_.begin(), end = scratch_.begin() + count_;
  const auto mid = begin + count_ / 2;
  std::nth_element(begin, mid, end);
  if (count_ % 2 == 1) return *mid;
  // Even count: the mean of the two middle values; the lower one is the largest left of mid.
  return (*std::max_element(begin, mid) + *mid) / 2;
}

int BudgetController::up_cooldown() const {
  if (cooldown_waived_ || current_ + 1 >= variants()) return 0;
  return options_.cooldown_runs * up_backoff_[current_ + 1];
}

void BudgetController::switch_to(int variant) {
  const bool up = variant > current_;
  if (!up && arrived_by_step_up_ && !settled_) {
    // The step up into current_ was predicted to fit and did not: wait longer before the next.
    up_backoff_[current_] = std::min(up_backoff_[current_] * 2, options_.max_up_backoff);
  }
  current_ = variant;
  head_ = count_ = 0;
  runs_since_switch_ = 0;
  arrived_by_step_up_ = up;
  settled_ = false;
  cooldown_waived_ = false;
  ++switches_;
}

void BudgetController::decide() {
  Decision& d = decision_;
  d.samples = count_;
  d.to = current_;
  if (count_ < options_.min_samples) {
    d.kind = DecisionKind::kCollecting;
    return;
  }
  const double budget = options_.budget_ms;
  const double median = median_ms();
  d.median_ms = median;
  if (median > budget) {
    d.limit_ms = budget;
    if (current_ == options_.floor) {
      d.kind = DecisionKind::kOverAtFloor;
      return;
    }
    // One level down, or further while the expected ratios say the next one still misses.
    int target = current_ - 1;
    auto predicted = [&](int v) { return median * expected_ms_[v] / expected_ms_[current_]; };
    while (target > options_.floor && predicted(target) > budget) --target;
    d.kind = DecisionKind::kStepDown;
    d.predicted_ms = predicted(target);
    d.to = target;
    switch_to(target);
    return;
  }
  if (!settled_ && runs_since_switch_ >= kSettleWindows * options_.window) {
    settled_ = true;
    up_backoff_[current_] = std::max(1, up_backoff_[current_] / 2);
  }
  if (current_ + 1 >= variants()) {
    d.kind = DecisionKind::kAtLargest;
    return;
  }
  const int next = current_ + 1;
  d.predicted_ms = median * expected_ms_[next] / expected_ms_[current_];
  d.limit_ms = budget * options_.up_margin;
  if (d.predicted_ms > d.limit_ms) {
    d.kind = DecisionKind::kNoHeadroom;
    return;
  }
  const int cooldown = up_cooldown();
  if (runs_since_switch_ < cooldown) {
    d.kind = DecisionKind::kCooldown;
    d.cooldown_left = cooldown - runs_since_switch_;
    return;
  }
  d.kind = DecisionKind::kStepUp;
  d.to = next;
  switch_to(next);
}

int BudgetController::observe(double latency_ms) {
  decision_ = Decision{};
  decision_.from = decision_.to = current_;
  decision_.budget_ms = options_.budget_ms;
  decision_.latency_ms = latency_ms;
  if (!std::isfinite(latency_ms) || latency_ms < 0) {
    decision_.kind = DecisionKind::kIgnoredLatency;
    decision_.samples = count_;
    return current_;
  }
  ++runs_;
  ++runs_since_switch_;
  if (count_ < options_.window) {
    window_[(head_ + count_) % options_.window] = latency_ms;
    ++count_;
  } else {
    window_[head_] = latency_ms;
    head_ = (head_ + 1) % options_.window;
  }
  decide();
  return current_;
}

void BudgetController::set_budget(double budget_ms) {
  decision_ = Decision{};
  decision_.from = decision_.to = current_;
  decision_.from_set_budget = true;
  decision_.samples = count_;
  if (!std::isfinite(budget_ms) || budget_ms <= 0) {
    decision_.kind = DecisionKind::kIgnoredBudget;
    decision_.budget_ms = options_.budget_ms;
    decision_.limit_ms = budget_ms;  // the rejected value, for the message
    return;
  }
  options_.budget_ms = budget_ms;
  decision_.budget_ms = budget_ms;
  std::fill(up_backoff_.begin(), up_backoff_.end(), 1);
  cooldown_waived_ = true;
  // A step down now is the new budget's doing, not proof that the last step up mispredicted.
  arrived_by_step_up_ = false;
  if (count_ < options_.min_samples) {
    decision_.kind = DecisionKind::kBudgetChanged;
    return;
  }
  decide();
}

}  // namespace sod2::rt
