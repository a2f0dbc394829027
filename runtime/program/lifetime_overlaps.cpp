#include "runtime/program/lifetime_overlaps.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace sod2::plan {

bool find_overlap_lists(std::span<const Lifetime> lives, size_t max_pairs, OverlapLists* out) {
  const size_t n = lives.size();
  out->begin.clear();
  out->neighbours.clear();
  // By first step: the tensors still live when one starts are exactly those it overlaps among
  // the ones started before it (a sweep over the steps).
  std::vector<int32_t> by_first(n);
  std::iota(by_first.begin(), by_first.end(), 0);
  std::stable_sort(by_first.begin(), by_first.end(),
                   [&](int32_t a, int32_t b) { return lives[a].first_step < lives[b].first_step; });
  std::vector<int32_t> degree(n, 0), live;
  std::vector<std::pair<int32_t, int32_t>> pairs;
  for (int32_t t : by_first) {
    std::erase_if(live, [&](int32_t p) { return lives[p].last_step < lives[t].first_step; });
    if (pairs.size() + live.size() > max_pairs) return false;
    for (int32_t p : live) {
      pairs.emplace_back(p, t);
      ++degree[static_cast<size_t>(p)];
      ++degree[static_cast<size_t>(t)];
    }
    live.push_back(t);
  }
  out->begin.assign(n + 1, 0);
  for (size_t t = 0; t < n; ++t) out->begin[t + 1] = out->begin[t] + degree[t];
  out->neighbours.resize(static_cast<size_t>(out->begin[n]));
  std::vector<int32_t> fill(out->begin.begin(), out->begin.end() - 1);
  for (const auto& [a, b] : pairs) {
    out->neighbours[static_cast<size_t>(fill[static_cast<size_t>(a)]++)] = b;
    out->neighbours[static_cast<size_t>(fill[static_cast<size_t>(b)]++)] = a;
  }
  return true;
}

}  // namespace sod2::plan
