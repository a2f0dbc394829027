// A tensor shape held inline (no heap), so kernels and the executor can make and pass shapes in
// the steady state without allocating. Ranks above kMaxRank are refused when a model loads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace sod2::rt {

inline constexpr int kMaxRank = 8;

class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) { assign(std::span(dims.begin(), dims.size())); }
  // Callers check dims.size() <= kMaxRank first (from_dims does).
  explicit Shape(std::span<const int64_t> dims) { assign(dims); }

  static bool fits(size_t rank) { return rank <= static_cast<size_t>(kMaxRank); }

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  std::span<const int64_t> dims() const { return {dims_, static_cast<size_t>(rank_)}; }
  // Product of the dims (1 for a scalar). Callers that build shapes from data check overflow.
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  void set_rank(int r) {
    for (int i = rank_; i < r; ++i) dims_[i] = 1;
    rank_ = r;
  }
  void push_back(int64_t d) { dims_[rank_++] = d; }

  std::string to_string() const;  // "[2,3,4]"

  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a.dims_[i] != b.dims_[i]) return false;
    return true;
  }

 private:
  void assign(std::span<const int64_t> dims) {
    rank_ = static_cast<int>(dims.size());
    for (int i = 0; i < rank_; ++i) dims_[i] = dims[static_cast<size_t>(i)];
  }

  int64_t dims_[kMaxRank] = {};
  int rank_ = 0;
};

// Row-major strides in elements.
void row_major_strides(const Shape& s, int64_t* strides);

}  // namespace sod2::rt
