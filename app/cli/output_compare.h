// How far a runtime output is from a reference one, numpy.allclose-style:
// |actual - expected| <= atol + rtol * |expected| for every element.
#pragma once

#include <string>

#include "runtime/tensor/tensor.h"

namespace sod2::cli {

struct Comparison {
  bool shape_matches = false;
  bool dtype_matches = false;
  double max_abs = 0;      // over all elements
  double max_rel = 0;      // |a - e| / |e| over elements with e != 0
  int64_t mismatches = 0;  // elements outside the tolerance (NaN where the other is not)
  bool comparable = true;  // false: an element type the comparison cannot read (a failure)
  bool ok() const { return shape_matches && dtype_matches && comparable && mismatches == 0; }
};

Comparison compare_tensors(const rt::Tensor& actual, const rt::Tensor& expected, double rtol,
                           double atol);

}  // namespace sod2::cli
