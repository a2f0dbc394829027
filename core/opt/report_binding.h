// The values symbols take when a plan is judged or reported without being bound (DESIGN §5).
// An input symbol takes the upper end of its range. An execution symbol (an EDO output dim, an
// If's choice, a Loop's trip count) is bound with --bind, else takes its bound expression
// (RdpResult::direct_execution_bound: NonZero's count is at most the numel of its input) evaluated
// at the binding's other symbols, those the binding lacks completed the same way, and clamped to
// its constant range; where it has no bound expression (or that does not evaluate), the upper end
// of its constant range, which is the bound at the top of the input ranges. So a plan reported at
// height=320,width=320 sizes NonZero's output for 320x320, not for the largest input.
#pragma once

#include <cstdint>
#include <span>

#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"

namespace sod2::opt {

// A range whose upper end is above this is "no bound" (RDP gives an execution symbol it cannot
// bound, such as a Loop's trip count, the default INT64_MAX/4): a report cannot size tensors
// there, so such a symbol takes kUnboundedReportValue instead (unless its bound expression gives
// a value not above this at the binding).
inline constexpr int64_t kUnboundedThreshold = int64_t{1} << 31;
// The same upper end RDP gives an input symbol without a declared range.
inline constexpr int64_t kUnboundedReportValue = 65536;

// The value `s` takes when nothing is bound: its constant range's upper end, or
// kUnboundedReportValue.
int64_t report_upper_bound(const RdpResult& rdp, const sym::Symbol& s);
// The value `s` takes when it is not bound in `at`: as above for an input symbol; for an execution
// symbol, its bound expression evaluated at `at` (completed as complete_binding does), clamped.
int64_t report_upper_bound(const RdpResult& rdp, const sym::Symbol& s, const sym::Binding& at);
bool has_no_useful_bound(const RdpResult& rdp, const sym::Symbol& s);

// `binding` plus, for each of `symbols` it lacks, report_upper_bound at `binding`. Symbols that
// only the bound expressions need are used but not added.
sym::Binding complete_binding(const RdpResult& rdp, std::span<const sym::Symbol> symbols,
                              sym::Binding binding = {});

}  // namespace sod2::opt
