// Small value types every planning stage shares: a step interval and a tensor laid out at one
// concrete binding. They are the runtime's (runtime/program/plan_layout.h), which checks every
// plan it instantiates by the same rules the planners keep.
#pragma once

#include "runtime/program/plan_layout.h"

namespace sod2::opt {

using plan::kTensorAlignment;
using plan::Lifetime;
using plan::PlacedTensor;

}  // namespace sod2::opt
