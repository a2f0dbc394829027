#include "app/studio/plan/timeline_model.h"

#include <algorithm>
#include <cstdio>

#include "core/sym/bounded_text.h"

namespace sod2::studio {
namespace {

// Expressions can run to thousands of characters (a max over many tensors); a tooltip shows the
// start and says how much it left out.
std::string shortened(const std::string& text, size_t limit = 240) {
  if (text.size() <= limit) return text;
  return text.substr(0, limit) + "… (" + std::to_string(text.size() - limit) + " more chars)";
}

std::string with_thousands(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

}  // namespace

Expected<TimelineModel> TimelineModel::build(const Model& model, const RdpResult& /*rdp*/,
                                             const opt::MemoryPlan& plan,
                                             const opt::PlanAtBinding& at) {
  const size_t n = plan.tensors.tensors.size();
  if (at.tensors.size() != n || plan.lives.size() != n)
    return invalid_argument("the plan at the binding has " + std::to_string(at.tensors.size()) +
                            " tensors, the plan " + std::to_string(n));
  TimelineModel m;
  m.plan_ = &plan;
  m.num_steps_ = static_cast<int64_t>(plan.order.steps.size());
  m.rects_.resize(n);
  m.producer_names_.resize(n);
  const Graph& g = *model.graph;
  for (size_t t = 0; t < n; ++t) {
    const opt::ArenaTensor& tensor = plan.tensors.tensors[t];
    TimelineRect& r = m.rects_[t];
    r.tensor = static_cast<int>(t);
    r.name = tensor.name;
    r.producer = tensor.producer;
    for (ValueId v : tensor.views) r.views.push_back(g.value(v).name);
    if (tensor.producer != kNoNode) {
      const Node& node = g.node(tensor.producer);
      m.producer_names_[t] = node.name + " (" + node.op_type + ")";
    }
  }
  SOD2_RETURN_IF_ERROR(m.rebind(at));
  return m;
}

TimelineModel TimelineModel::from_rects(std::vector<TimelineRect> rects, int64_t num_steps,
                                        int64_t arena_bytes, int64_t lower_bound_bytes) {
  TimelineModel m;
  m.rects_ = std::move(rects);
  m.producer_names_.resize(m.rects_.size());
  m.num_steps_ = num_steps;
  m.arena_bytes_ = arena_bytes;
  m.refresh_derived();
  // The peak of the live bytes is the lower bound of any placement of these rectangles.
  m.lower_bound_bytes_ = lower_bound_bytes >= 0 ? lower_bound_bytes : m.peak_live_bytes_;
  return m;
}

const TimelineModel::Expressions& TimelineModel::expressions_of(int32_t version) {
  auto it = expressions_.find(version);
  if (it != expressions_.end()) return it->second;
  Expressions e;
  // A layout made at the binding has sizes like every version's but offsets of that binding only.
  const bool at_binding = plan::laid_out_at_binding(version);
  const opt::SymbolicPlan& symbolic = plan_->symbolic_of(at_binding ? -1 : version);
  e.sizes.reserve(symbolic.sizes.size());
  e.offsets.reserve(symbolic.offsets.size());
  for (const sym::SymExpr& s : symbolic.sizes) e.sizes.push_back(sym::bounded_text(s));
  const std::string stand_in = "(" + plan::version_text(version) + ")";
  for (const sym::SymExpr& o : symbolic.offsets)
    e.offsets.push_back(at_binding ? stand_in : sym::bounded_text(o));
  return expressions_.emplace(version, std::move(e)).first->second;
}

Status TimelineModel::rebind(const opt::PlanAtBinding& at) {
  if (at.tensors.size() != rects_.size())
    return invalid_argument("the plan at the binding has " + std::to_string(at.tensors.size()) +
                            " tensors, the timeline " + std::to_string(rects_.size()));
  for (size_t t = 0; t < rects_.size(); ++t) {
    const opt::PlacedTensor& p = at.tensors[t];
    TimelineRect& r = rects_[t];
    r.offset = p.offset;
    r.size = p.size;
    r.first_step = p.life.first_step;
    r.last_step = p.life.last_step;
  }
  arena_bytes_ = at.arena_bytes;
  lower_bound_bytes_ = at.lower_bound_bytes;
  // Each plan version has its own offset expressions: switch the texts only when the binding
  // lands in another version.
  if (plan_ && (expressions_.empty() || at.version != version_)) {
    const Expressions& e = expressions_of(at.version);
    if (e.sizes.size() != rects_.size() || e.offsets.size() != rects_.size())
      return internal_error("plan version " + std::to_string(at.version) +
                            " has another tensor count");
    for (size_t t = 0; t < rects_.size(); ++t) {
      rects_[t].size_expr = e.sizes[t];
      rects_[t].offset_expr = e.offsets[t];
    }
  }
  version_ = at.version;
  refresh_derived();
  return {};
}

void TimelineModel::refresh_derived() {
  // A difference array over steps: +size where a tensor starts, -size after it ends.
  const size_t steps = static_cast<size_t>(std::max<int64_t>(num_steps_, 0));
  std::vector<int64_t> delta(steps + 1, 0);
  std::vector<IndexedRect> boxes(rects_.size());
  for (size_t i = 0; i < rects_.size(); ++i) {
    const TimelineRect& r = rects_[i];
    boxes[i] = {r.first_step, r.last_step, r.offset, r.size};
    if (steps == 0 || r.last_step < r.first_step) continue;
    const size_t first = static_cast<size_t>(std::clamp<int64_t>(r.first_step, 0, num_steps_ - 1));
    const size_t last = static_cast<size_t>(std::clamp<int64_t>(r.last_step, 0, num_steps_ - 1));
    delta[first] += r.size;
    delta[last + 1] -= r.size;
  }
  live_bytes_.assign(steps, 0);
  int64_t running = 0;
  peak_live_bytes_ = 0;
  for (size_t s = 0; s < steps; ++s) {
    running += delta[s];
    live_bytes_[s] = running;
    peak_live_bytes_ = std::max(peak_live_bytes_, running);
  }
  peak_steps_.clear();
  for (size_t s = 0; s < steps; ++s)
    if (live_bytes_[s] == peak_live_bytes_) peak_steps_.push_back(static_cast<int64_t>(s));
  index_ = RectIndex(boxes, num_steps_);
}

std::optional<int> TimelineModel::hit(double step, double offset) const {
  const std::vector<int> hits = index_.at(step, offset);
  if (hits.empty()) return std::nullopt;
  return hits.front();
}

const std::string& TimelineModel::producer_name(int rect) const {
  return producer_names_.at(static_cast<size_t>(rect));
}

std::string TimelineModel::tooltip_text(int rect) const {
  if (rect < 0 || static_cast<size_t>(rect) >= rects_.size()) return {};
  const TimelineRect& r = rects_[static_cast<size_t>(rect)];
  const std::string size_expr = r.size_expr.empty() ? "" : shortened(r.size_expr) + " = ";
  const std::string offset_expr = r.offset_expr.empty() ? "" : shortened(r.offset_expr) + " = ";
  std::string text = "tensor    " + r.name + "\n";
  text +=
      "size      " + size_expr + with_thousands(r.size) + " bytes (" + human_bytes(r.size) + ")\n";
  text += "offset    " + offset_expr + with_thousands(r.offset) + "\n";
  const int64_t steps = r.last_step - r.first_step + 1;
  text += "lifetime  steps " + std::to_string(r.first_step) + "–" + std::to_string(r.last_step) +
          " (" + std::to_string(steps) + (steps == 1 ? " step)" : " steps)");
  if (!producer_name(rect).empty()) text += "\nproducer  " + producer_name(rect);
  if (!r.views.empty()) {
    // A long chain of views names its first few: the tooltip stays a tooltip.
    constexpr size_t kNamed = 3;
    std::string names;
    for (size_t i = 0; i < std::min(r.views.size(), kNamed); ++i)
      names += (i ? ", " : "") + r.views[i];
    if (r.views.size() > kNamed)
      names += " and " + std::to_string(r.views.size() - kNamed) + " more";
    text += "\nviews     " + names + " (the same bytes, not copied)";
  }
  return text;
}

}  // namespace sod2::studio
