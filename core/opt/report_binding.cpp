#include "core/opt/report_binding.h"

#include <algorithm>

#include "core/sym/transform.h"

namespace sod2::opt {
namespace {

// Bound expressions only mention older symbols, so the recursion ends; this only keeps a chain of
// thousands of execution symbols off the stack (deeper ones take their constant bound).
constexpr int kMaxBoundDepth = 256;

// The value of `s` under `work`, completing `work` with every symbol it needed.
int64_t value_at(const RdpResult& rdp, const sym::Symbol& s, sym::Binding& work, int depth) {
  if (auto it = work.find(s); it != work.end()) return it->second;
  int64_t v = report_upper_bound(rdp, s);
  const auto bound = rdp.is_execution_symbol(s) && depth < kMaxBoundDepth
                         ? rdp.direct_execution_bound(s)
                         : std::nullopt;
  if (bound) {
    for (const sym::Symbol& f : sym::free_symbols(*bound))
      if (!work.count(f)) value_at(rdp, f, work, depth + 1);
    auto e = sym::evaluate(*bound, work);
    const sym::SymbolRange r = rdp.ranges().get(s);
    if (e.ok()) {
      const int64_t clamped = std::clamp(*e, r.lo, r.hi);
      if (clamped <= kUnboundedThreshold) v = clamped;
    }
  }
  work[s] = v;
  return v;
}

}  // namespace

bool has_no_useful_bound(const RdpResult& rdp, const sym::Symbol& s) {
  return rdp.ranges().get(s).hi > kUnboundedThreshold;
}

int64_t report_upper_bound(const RdpResult& rdp, const sym::Symbol& s) {
  if (!has_no_useful_bound(rdp, s)) return rdp.ranges().get(s).hi;
  // The largest value on the symbol's multiple that is not above the report value.
  const sym::SymbolRange r = rdp.ranges().get(s);
  const int64_t v = kUnboundedReportValue - kUnboundedReportValue % r.multiple;
  return v < r.lo ? r.lo : v;
}

int64_t report_upper_bound(const RdpResult& rdp, const sym::Symbol& s, const sym::Binding& at) {
  sym::Binding work = at;
  return value_at(rdp, s, work, 0);
}

sym::Binding complete_binding(const RdpResult& rdp, std::span<const sym::Symbol> symbols,
                              sym::Binding binding) {
  sym::Binding work = binding;
  for (const sym::Symbol& s : symbols)
    if (!binding.count(s)) binding[s] = value_at(rdp, s, work, 0);
  return binding;
}

}  // namespace sod2::opt
