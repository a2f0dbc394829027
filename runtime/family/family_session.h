// Runs a family of variants (family_package.h) as one model under a latency budget (Dynamic-OFA):
// every variant has its own session, created once, and each run() uses the current variant; after
// the run its latency goes to a BudgetController, which picks the variant for the next run.
// Switching only changes which session runs next: the weights were mapped or built at load, the
// sessions share one arena and one thread pool (one variant runs at a time), and warm_up() has
// grown that arena for the largest variant at the input size, so a switch copies and allocates
// nothing.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/status/status.h"
#include "runtime/exec/session.h"
#include "runtime/family/budget_controller.h"
#include "runtime/family/family_package.h"

namespace sod2::rt {

struct FamilySessionOptions {
  SessionOptions session;  // for every variant's session
  // The latency budget in ms; 0 runs without a manager (the variant stays where set_variant()
  // puts it: the largest at first).
  double budget_ms = 0;
  BudgetControllerOptions controller;  // its budget_ms is replaced by the one above
  // The smallest variant the manager may use, by name ("" for none), and floors on MACs and
  // accuracy (0 for none; a variant without an accuracy fails an accuracy floor): the floor is
  // the smallest variant meeting all of them. Overrides controller.floor.
  std::string floor_variant;
  uint64_t min_macs = 0;
  double min_accuracy = 0;
  // Expected latency per variant in ms, in the package's order (from the profile store). Empty:
  // warm_up() measures them.
  std::vector<double> expected_ms;
};

// Turns the measured wall time of a run (ms) of `variant` into the latency the controller sees.
// Default: the measured time. Tests inject a model of a device; a demo could add other work.
using LatencySource = std::function<double(int variant, double measured_ms)>;

class FamilySession {
 public:
  // Variants are ordered small to large: by expected latency when given, else MACs, else
  // parameters, else the package's order. Errors: a variant whose session cannot be created
  // (named), expected latencies of the wrong count or not > 0.
  static Expected<std::unique_ptr<FamilySession>> create(FamilyProgram family,
                                                         const KernelRegistry& registry,
                                                         FamilySessionOptions options = {});

  int variants() const { return static_cast<int>(order_.size()); }
  // Variant i in small-to-large order.
  const VariantDesc& variant(int i) const {
    return family_.variants[order_[static_cast<size_t>(i)]];
  }
  const std::string& name() const { return family_.name; }
  // The family as loaded, its variants in the package's order.
  const FamilyProgram& family() const { return family_; }
  const FamilyLoadStats& load_stats() const { return family_.stats; }

  int current() const { return current_; }
  // Picks the variant of the next run; with a manager, it continues from there.
  Status set_variant(int i);

  // Runs every variant `runs` times on `inputs` (at least once): grows each arena to this
  // binding, so later switches allocate nothing, and records each variant's median latency,
  // which becomes the controller's expected latency unless options gave them. Made non-decreasing
  // in variant order (a smaller variant measured slower is expected as fast as the next one).
  Status warm_up(std::span<const Tensor> inputs, int runs = 3);
  // Expected latency per variant (small to large): given, or measured by warm_up().
  const std::vector<double>& expected_ms() const { return expected_ms_; }

  // Runs the current variant. The outputs are views valid until the next run (of any variant: the
  // arena is shared). With a budget, the first run warms up first if warm_up() was not called.
  Expected<std::span<const Tensor>> run(std::span<const Tensor> inputs);

  void set_latency_source(LatencySource source) { latency_source_ = std::move(source); }
  // Off: runs stay on the current variant and the controller sees nothing (the baseline a demo
  // compares the manager against). On again: the controller restarts from the current variant.
  Status set_manager_enabled(bool enabled);
  bool manager_enabled() const { return manager_enabled_; }
  Status set_budget(double budget_ms);
  // Null without a budget, or before the first warm_up().
  const BudgetController* controller() const { return controller_ ? &*controller_ : nullptr; }

  // The last run: its variant, its latency (as the controller saw it) and the measured time.
  int last_variant() const { return last_variant_; }
  double last_latency_ms() const { return last_latency_ms_; }
  double last_measured_ms() const { return last_measured_ms_; }
  Session& session(int i) { return *sessions_[static_cast<size_t>(i)]; }
  // Bytes of the arena the variants share (the largest plan run so far).
  size_t arena_capacity() const { return sessions_.front()->arena_capacity(); }

 private:
  FamilySession(FamilyProgram family, FamilySessionOptions options)
      : family_(std::move(family)), options_(std::move(options)) {}
  // A controller over expected_ms_ with the current options, starting at `start` when given.
  Status start_controller(std::optional<int> start = std::nullopt);
  // Runs variant `v` and measures its wall time.
  Expected<std::span<const Tensor>> timed_run(int v, std::span<const Tensor> inputs,
                                              double* wall_ms);

  FamilyProgram family_;
  FamilySessionOptions options_;
  std::vector<size_t> order_;                       // small to large: indices into family_.variants
  std::vector<std::unique_ptr<Session>> sessions_;  // in order_
  std::vector<double> expected_ms_;
  std::optional<BudgetController> controller_;
  LatencySource latency_source_;
  int current_ = 0;
  bool manager_enabled_ = true;
  int last_variant_ = -1;
  double last_latency_ms_ = 0, last_measured_ms_ = 0;
};

}  // namespace sod2::rt
