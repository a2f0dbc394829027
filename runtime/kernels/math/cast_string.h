// Cast between strings and numbers. Numbers are written as the shortest text that reads back as
// the same value (as numpy and ONNX's test data write them; "NaN", "INF", "-INF"); strings are
// read strictly: the whole string must be one number (a leading '+' and the names NaN/INF in any
// case allowed).
#pragma once

#include "core/status/status.h"
#include "runtime/tensor/tensor.h"

namespace sod2::rt::math {

// Whether Cast converts between strings and `t`.
bool string_castable(DType t);

// y[i] = x[i] written as a string; y is a string tensor of x's shape.
Status cast_to_strings(const Tensor& x, const Tensor& y);

// y[i] = x[i] (a string tensor) read as y's type.
Status cast_from_strings(const Tensor& x, const Tensor& y);

}  // namespace sod2::rt::math
