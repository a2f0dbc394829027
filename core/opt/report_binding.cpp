#include "core/opt/report_binding.h"

namespace sod2::opt {

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

sym::Binding complete_binding(const RdpResult& rdp, std::span<const sym::Symbol> symbols,
                              sym::Binding binding) {
  for (const sym::Symbol& s : symbols) {
    if (!binding.count(s)) binding[s] = report_upper_bound(rdp, s);
  }
  return binding;
}

}  // namespace sod2::opt
