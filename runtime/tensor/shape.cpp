#include "runtime/tensor/shape.h"

namespace sod2::rt {

std::string Shape::to_string() const {
  std::string out = "[";
  for (int i = 0; i < rank_; ++i) out += (i ? "," : "") + std::to_string(dims_[i]);
  return out + "]";
}

void row_major_strides(const Shape& s, int64_t* strides) {
  int64_t st = 1;
  for (int i = s.rank(); i-- > 0;) {
    strides[i] = st;
    st *= s[i];
  }
}

}  // namespace sod2::rt
