// A small hand-built program that uses every part of the package format: input and execution
// symbols, fixed and symbolic input dims, constants in three dtypes, attributes of every kind (a
// small tensor inline, a large one in the blob), an omitted optional input, If with two bodies
// that read outer-scope values, a plan with a bucketed version and an assumption program.
#pragma once

#include "runtime/program/program.h"

namespace sod2::testing {

rt::ProgramDesc tiny_program();

}  // namespace sod2::testing
