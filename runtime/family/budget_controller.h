// Holds a latency budget with a family of sub-networks of one supernet (Dynamic-OFA): variants are
// ordered small → large, and after every run the controller says which variant the next run uses.
// It steps down as soon as the recent median misses the budget (several levels at once if the
// expected latencies say one is not enough), and up one level only when the next larger variant
// is predicted to fit with headroom and the last switch is a cooldown away, so a budget that sits
// between two variants' latencies does not make it flip between them.
//
// Pure logic: the caller times its runs and feeds the latencies in. No clock and no thread, and the
// same latencies give the same decisions, so policies are tested on simulated latency sources and
// a timeline can show why each switch happened (last_decision()).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt {

struct BudgetControllerOptions {
  double budget_ms = 0;  // required, > 0; set_budget() changes it at run time
  // Latencies kept, all from runs of the current variant: a switch empties the window, because
  // latencies of another variant say nothing direct about this one.
  int window = 8;
  int min_samples = 3;  // latencies since the last switch before any decision; in [1, window]
  // A step up needs the next larger variant's predicted latency (the current median scaled by the
  // ratio of expected latencies) ≤ budget × up_margin. Below 1 it leaves a band where neither step
  // is taken, which with the cooldown is what stops oscillation. In (0, 1].
  double up_margin = 0.85;
  int cooldown_runs = -1;  // runs after any switch before a step up; -1: = window
  int floor = 0;           // the smallest variant allowed (an accuracy or MAC floor)
  int start = -1;          // -1: the largest variant whose expected latency fits, else floor
  // When expected ratios are wrong (MAC-derived estimates), a step up can be predicted to fit and
  // then miss. Each step up undone that way doubles the cooldown before the next step up to that
  // variant, up to this factor; a long stay within budget halves it again. 1: no back-off.
  int max_up_backoff = 32;
};

enum class DecisionKind {
  kStart,           // no run observed yet: the initial variant
  kCollecting,      // fewer than min_samples latencies since the last switch
  kStepDown,        // the median missed the budget: a smaller variant
  kOverAtFloor,     // the median missed the budget, but the current variant is the floor
  kStepUp,          // the next larger variant is predicted to fit with headroom
  kCooldown,        // within budget, too soon after a switch to step up
  kNoHeadroom,      // within budget, but the next larger variant is predicted not to fit
  kAtLargest,       // within budget on the largest variant
  kIgnoredLatency,  // observe() got a NaN, infinite or negative latency and dropped it
  kIgnoredBudget,   // set_budget() got a NaN, infinite or non-positive budget and kept the old one
  kBudgetChanged,   // set_budget() with too few latencies to decide anything yet
};

const char* decision_kind_name(DecisionKind kind);

// Why the current variant is what it is, for a timeline.
struct Decision {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();

  DecisionKind kind = DecisionKind::kStart;
  int from = 0, to = 0;          // the variant before and after (equal unless a step)
  bool from_set_budget = false;  // made by set_budget() rather than observe()
  double budget_ms = 0;          // the budget in force
  double latency_ms = kNone;     // the latency observe() got; kNone from set_budget()
  double median_ms = kNone;      // of the window the decision read
  double predicted_ms = kNone;   // of the variant stepped to, or of the one up not taken
  double limit_ms = kNone;       // what median or prediction was compared with; for
                                 // kIgnoredBudget, the budget rejected
  int samples = 0;               // latencies in the window
  int cooldown_left = 0;         // kCooldown: runs before a step up may be taken

  // One line: "over budget: median 41.2 ms > 33.0 ms; 3 → 1 (predicted 20.6 ms)",
  // "headroom: predicted 25.1 ms ≤ 28.0 ms; 1 → 2".
  std::string to_string() const;
};

class BudgetController {
 public:
  // expected_ms: one per variant, small → large (non-decreasing), each finite and > 0; measured
  // in profiles or estimated from MACs. Only their ratios matter for predictions, and the
  // absolute values only for the default start. Errors (kInvalidArgument) name the bad input.
  static Expected<BudgetController> create(std::vector<double> expected_ms,
                                           BudgetControllerOptions options);

  int current() const { return current_; }
  // Records the latency of a run made with current() and returns the variant for the next run.
  // NaN, infinite and negative latencies (a failed or untimed run) are ignored: they change
  // nothing, and do not count as runs for min_samples or the cooldown.
  int observe(double latency_ms);
  // Takes effect at once: with min_samples latencies in the window, a miss steps down right away
  // and a step up no longer waits for the cooldown. Back-offs are forgotten, since a new budget
  // changes which steps fit. A NaN, infinite or non-positive budget is ignored (kIgnoredBudget).
  void set_budget(double budget_ms);

  double budget_ms() const { return options_.budget_ms; }
  int switches() const { return switches_; }
  int64_t runs() const { return runs_; }  // latencies accepted by observe()
  int variants() const { return static_cast<int>(expected_ms_.size()); }
  int floor() const { return options_.floor; }
  const std::vector<double>& expected_ms() const { return expected_ms_; }
  const BudgetControllerOptions& options() const { return options_; }  // defaults resolved
  const Decision& last_decision() const { return decision_; }
  // The median of the window, or NaN when it is empty.
  double median_ms() const;

 private:
  BudgetController(std::vector<double> expected_ms, BudgetControllerOptions options);

  // Decides on the current window; fills decision_ (from, budget and latency already set).
  void decide();
  void switch_to(int variant);
  int up_cooldown() const;  // runs needed after a switch before stepping up from current_

  std::vector<double> expected_ms_;
  BudgetControllerOptions options_;
  int current_ = 0;
  // Ring of the latest latencies of current_, oldest first from head_.
  std::vector<double> window_;
  int head_ = 0, count_ = 0;
  mutable std::vector<double> scratch_;  // for the median, so observe() does not allocate
  int runs_since_switch_ = 0;
  bool arrived_by_step_up_ = false;  // the last switch was a step up into current_
  bool settled_ = false;             // current_ held the budget long enough to halve its back-off
  bool cooldown_waived_ = false;     // set_budget() since the last switch
  std::vector<int> up_backoff_;      // per variant: cooldown factor for stepping up into it
  int switches_ = 0;
  int64_t runs_ = 0;
  Decision decision_;
};

}  // namespace sod2::rt
