// The values symbols take when a plan is judged or reported without being bound (DESIGN §5):
// the upper end of their range. An execution symbol (an EDO output dim, an If's choice, a Loop's
// trip count) counts like any other: bound with --bind, else its upper bound.
#pragma once

#include <cstdint>
#include <span>

#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"

namespace sod2::opt {

// A range whose upper end is above this is "no bound" (RDP gives an execution symbol it cannot
// bound, such as a Loop's trip count, the default INT64_MAX/4): a report cannot size tensors
// there, so such a symbol takes kUnboundedReportValue instead.
inline constexpr int64_t kUnboundedThreshold = int64_t{1} << 31;
// The same upper end RDP gives an input symbol without a declared range.
inline constexpr int64_t kUnboundedReportValue = 65536;

// The value `s` takes when it is not bound: its range's upper end, or kUnboundedReportValue.
int64_t report_upper_bound(const RdpResult& rdp, const sym::Symbol& s);
bool has_no_useful_bound(const RdpResult& rdp, const sym::Symbol& s);

// `binding` plus, for each of `symbols` it lacks, report_upper_bound.
sym::Binding complete_binding(const RdpResult& rdp, std::span<const sym::Symbol> symbols,
                              sym::Binding binding = {});

}  // namespace sod2::opt
