#include "app/studio/plan/rect_index.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sod2::studio {
namespace {

// floor/ceil of a double as int64, saturating so that a point far outside the plan cannot wrap.
int64_t floor_to_int(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kMax = 9.0e18;
  return static_cast<int64_t>(std::floor(std::clamp(v, -kMax, kMax)));
}
int64_t ceil_to_int(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kMax = 9.0e18;
  return static_cast<int64_t>(std::ceil(std::clamp(v, -kMax, kMax)));
}

}  // namespace

RectIndex::RectIndex(const std::vector<IndexedRect>& rects, int64_t num_steps)
    : num_steps_(std::max<int64_t>(num_steps, 0)) {
  first_step_.resize(rects.size());
  if (num_steps_ == 0) {
    node_begin_.assign(2, 0);
    return;
  }
  const size_t num_nodes = 4 * static_cast<size_t>(num_steps_);
  std::vector<std::pair<size_t, int>> pairs;  // (node, rect)
  pairs.reserve(rects.size() * 4);
  for (size_t i = 0; i < rects.size(); ++i) {
    const IndexedRect& r = rects[i];
    const int64_t first = std::clamp<int64_t>(r.first_step, 0, num_steps_ - 1);
    const int64_t last = std::clamp<int64_t>(r.last_step, 0, num_steps_ - 1);
    first_step_[i] = first;
    if (r.size <= 0 || last < first) continue;
    insert(1, 0, num_steps_ - 1, first, last, static_cast<int>(i), pairs);
  }
  // Counting sort by node, then each node's entries by offset: a CSR layout that one query walks
  // without chasing pointers.
  node_begin_.assign(num_nodes + 2, 0);
  for (const auto& [node, rect] : pairs) ++node_begin_[node + 1];
  for (size_t n = 1; n < node_begin_.size(); ++n) node_begin_[n] += node_begin_[n - 1];
  entries_.resize(pairs.size());
  std::vector<size_t> fill(node_begin_.begin(), node_begin_.end() - 1);
  for (const auto& [node, rect] : pairs) {
    const IndexedRect& r = rects[static_cast<size_t>(rect)];
    entries_[fill[node]++] = {rect, r.offset, r.offset + r.size, 0};
  }
  for (size_t n = 0; n < num_nodes; ++n) {
    const auto b = entries_.begin() + static_cast<std::ptrdiff_t>(node_begin_[n]);
    const auto e = entries_.begin() + static_cast<std::ptrdiff_t>(node_begin_[n + 1]);
    std::sort(b, e, [](const Entry& x, const Entry& y) {
      return x.offset != y.offset ? x.offset < y.offset : x.rect < y.rect;
    });
    int64_t running = std::numeric_limits<int64_t>::min();
    for (auto it = b; it != e; ++it) it->max_end = running = std::max(running, it->end);
  }
}

void RectIndex::insert(size_t node, int64_t lo, int64_t hi, int64_t first, int64_t last, int rect,
                       std::vector<std::pair<size_t, int>>& pairs) const {
  if (first <= lo && hi <= last) {
    pairs.emplace_back(node, rect);
    return;
  }
  const int64_t mid = lo + (hi - lo) / 2;
  if (first <= mid) insert(2 * node, lo, mid, first, last, rect, pairs);
  if (last > mid) insert(2 * node + 1, mid + 1, hi, first, last, rect, pairs);
}

template <typename F>
void RectIndex::scan_node(size_t node, int64_t below, int64_t above, F&& on_entry) const {
  const Entry* b = entries_.data() + node_begin_[node];
  const Entry* e = entries_.data() + node_begin_[node + 1];
  const Entry* it =
      std::upper_bound(b, e, below, [](int64_t v, const Entry& x) { return v < x.offset; });
  // max_end never decreases along the node, so once it is at or below `above` nothing earlier
  // can reach `above` either.
  while (it != b) {
    --it;
    if (it->max_end <= above) break;
    if (it->end > above) on_entry(*it);
  }
}

std::vector<int> RectIndex::at(double step, double offset) const {
  std::vector<int> out;
  const int64_t s = floor_to_int(step);
  if (num_steps_ == 0 || s < 0 || s >= num_steps_) return out;
  const int64_t y = floor_to_int(offset);
  size_t node = 1;
  int64_t lo = 0, hi = num_steps_ - 1;
  while (true) {
    scan_node(node, y, y, [&](const Entry& e) { out.push_back(e.rect); });
    if (lo == hi) break;
    const int64_t mid = lo + (hi - lo) / 2;
    if (s <= mid) {
      node = 2 * node;
      hi = mid;
    } else {
      node = 2 * node + 1;
      lo = mid + 1;
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void RectIndex::visit_in(double step_lo, double step_hi, double offset_lo, double offset_hi,
                         const std::function<void(int)>& visit) const {
  if (num_steps_ == 0) return;
  const int64_t s0 = std::max<int64_t>(0, floor_to_int(step_lo));
  const int64_t s1 = std::min<int64_t>(num_steps_ - 1, floor_to_int(step_hi));
  const int64_t o0 = floor_to_int(offset_lo);
  const int64_t o1 = ceil_to_int(offset_hi);
  if (s0 > s1 || o1 <= o0) return;
  visit_nodes(1, 0, num_steps_ - 1, s0, s1, o0, o1, visit);
}

void RectIndex::visit_nodes(size_t node, int64_t lo, int64_t hi, int64_t s0, int64_t s1, int64_t o0,
                            int64_t o1, const std::function<void(int)>& visit) const {
  if (hi < s0 || lo > s1) return;
  // A rectangle is stored at several nodes; report it only at the one holding the first step of
  // its part inside the query, so each is visited once without a "seen" set.
  scan_node(node, o1 - 1, o0, [&](const Entry& e) {
    if (lo <= std::max(first_step_[static_cast<size_t>(e.rect)], s0)) visit(e.rect);
  });
  if (lo == hi) return;
  const int64_t mid = lo + (hi - lo) / 2;
  visit_nodes(2 * node, lo, mid, s0, s1, o0, o1, visit);
  visit_nodes(2 * node + 1, mid + 1, hi, s0, s1, o0, o1, visit);
}

}  // namespace sod2::studio
