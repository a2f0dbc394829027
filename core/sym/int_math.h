// core/sym's internals name the contract's checked int64 arithmetic as detail:: (one definition,
// so symbolic evaluation and the runtime's shape programs agree on every overflow and division).
#pragma once

#include "runtime/program/int_math.h"

namespace sod2::sym::detail {
using namespace sod2::int_math;  // NOLINT(google-build-using-namespace): a re-export, not a
                                 // shortcut
}  // namespace sod2::sym::detail
