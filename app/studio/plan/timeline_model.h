// What the memory-plan timeline shows (DESIGN §8): one rectangle per arena tensor, x = the steps
// it lives, y = its bytes in the arena, with the arena size, the lower bound and the peak steps.
// Built from exactly what `sod2 plan --json` prints (a MemoryPlan and its PlanAtBinding), so the
// rectangles equal that document's `tensors` at the same binding. No widgets: tested headless.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/plan/rect_index.h"
#include "core/ir/model.h"
#include "core/opt/memory_plan.h"
#include "core/rdp/rdp.h"
#include "core/status/byte_size.h"
#include "core/status/status.h"

namespace sod2::studio {

struct TimelineRect {
  int tensor = -1;  // index into MemoryPlan::tensors.tensors
  std::string name;
  int64_t first_step = 0;  // both included
  int64_t last_step = 0;
  int64_t offset = 0;  // bytes, at the binding
  int64_t size = 0;    // aligned bytes, at the binding
  std::string size_expr;
  std::string offset_expr;
  NodeId producer = kNoNode;
  // Values that are this tensor's bytes under another shape (tensor_sizes.h): their Reshape,
  // Squeeze... copies nothing, and their readers keep the rectangle alive.
  std::vector<std::string> views;
};

class TimelineModel {
 public:
  // Errors: `at` is not an instantiation of `plan` (tensor counts differ). `plan` must outlive
  // the model: a rebind to another plan version reads that version's expressions from it.
  static Expected<TimelineModel> build(const Model& model, const RdpResult& rdp,
                                       const opt::MemoryPlan& plan, const opt::PlanAtBinding& at);
  // A timeline of given rectangles (synthetic plans, packages, tests); `rects[i].tensor` should
  // be i. A negative `lower_bound_bytes` means the peak of the rectangles' live bytes.
  static TimelineModel from_rects(std::vector<TimelineRect> rects, int64_t num_steps,
                                  int64_t arena_bytes, int64_t lower_bound_bytes);

  const std::vector<TimelineRect>& rects() const { return rects_; }
  int64_t arena_bytes() const { return arena_bytes_; }
  int64_t lower_bound_bytes() const { return lower_bound_bytes_; }
  int64_t num_steps() const { return num_steps_; }
  // Bytes live at each step (sum of the sizes of the rectangles alive then).
  const std::vector<int64_t>& live_bytes_per_step() const { return live_bytes_; }
  // The steps whose live bytes equal the maximum, ascending.
  const std::vector<int64_t>& peak_steps() const { return peak_steps_; }
  int64_t peak_live_bytes() const { return peak_live_bytes_; }
  int32_t plan_version() const { return version_; }

  // The rectangle under a point (x in steps, y in bytes): O(log n + k). With overlapping
  // rectangles (never in a valid plan) the lowest index wins; all_hits gives every one.
  std::optional<int> hit(double step, double offset) const;
  std::vector<int> all_hits(double step, double offset) const { return index_.at(step, offset); }
  const RectIndex& index() const { return index_; }

  // Tensor, size expression = value, offset expression = value, lifetime, producer.
  std::string tooltip_text(int rect) const;
  const std::string& producer_name(int rect) const;

  // New numbers from another binding of the same plan: offsets, sizes, arena, lower bound, live
  // bytes, peaks and the index are recomputed; expressions are reused (per plan version, each
  // turned into text once). Errors: `at` has another tensor count.
  Status rebind(const opt::PlanAtBinding& at);

 private:
  struct Expressions {
    std::vector<std::string> sizes;
    std::vector<std::string> offsets;
  };
  const Expressions& expressions_of(int32_t version);
  void refresh_derived();

  std::vector<TimelineRect> rects_;
  std::vector<std::string> producer_names_;
  int64_t num_steps_ = 0;
  int64_t arena_bytes_ = 0;
  int64_t lower_bound_bytes_ = 0;
  int64_t peak_live_bytes_ = 0;
  int32_t version_ = -1;
  std::vector<int64_t> live_bytes_;
  std::vector<int64_t> peak_steps_;
  RectIndex index_;
  const opt::MemoryPlan* plan_ = nullptr;  // for expressions of other versions; null: synthetic
  std::map<int32_t, Expressions> expressions_;
};

}  // namespace sod2::studio
