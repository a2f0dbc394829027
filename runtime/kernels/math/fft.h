// A discrete Fourier transform of any length in caller-provided memory (no heap), for DFT and
// STFT:
//
//   out[k] = sum_j in[j] * exp(sign * 2*pi*i * j * k / n),  sign = -1 forward, +1 inverse
//
// unscaled in both directions (the caller divides an inverse by n). Lengths whose prime factors
// are all at most kMaxRadix use mixed-radix Cooley-Tukey (radix-4 and radix-2 butterflies, a
// generic O(p^2) one for other primes); other lengths use Bluestein's algorithm, a convolution
// through a power-of-two FFT. Either way a transform costs O(n log n). Arithmetic is in double.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/status/status.h"

namespace sod2::rt::math {

struct Cplx {
  double re = 0, im = 0;
};

// The mixed-radix plan of one length: factors and twiddles exp(sign * 2*pi*i * k / n).
class RadixFft {
 public:
  static constexpr int64_t kMaxRadix = 64;

  // Whether every prime factor of n is at most kMaxRadix.
  static bool fits(int64_t n);
  // Complex values of twiddle memory a plan of length n needs.
  static int64_t twiddle_count(int64_t n) { return n; }
  // n must fit(); `twiddles` holds twiddle_count(n) values and outlives the plan.
  void init(int64_t n, bool inverse, Cplx* twiddles);
  // in -> out, n values each, distinct buffers; `in` is read with stride `in_stride`.
  void run(const Cplx* in, int64_t in_stride, Cplx* out) const;
  int64_t size() const { return n_; }

 private:
  void work(Cplx* out, const Cplx* in, int64_t fstride, int64_t in_stride, int level) const;

  int64_t n_ = 0;
  bool inverse_ = false;
  int num_factors_ = 0;
  int64_t radix_[64] = {};  // radix of each level
  int64_t rest_[64] = {};   // length remaining below each level
  const Cplx* tw_ = nullptr;
};

class Fft {
 public:
  // The largest length supported (the plan and work memory stay addressable).
  static constexpr int64_t kMaxLength = int64_t{1} << 31;

  // Complex values of plan memory for length n (1 <= n <= kMaxLength).
  static int64_t plan_count(int64_t n);
  // Complex values of work memory for one transform in flight.
  static int64_t work_count(int64_t n);
  // Builds the plan in `plan` (plan_count(n) values, outliving this object); `work` holds
  // work_count(n) values (used only while building).
  void init(int64_t n, bool inverse, Cplx* plan, Cplx* work);
  // in -> out (n values each, distinct buffers); `work` holds work_count(n) values.
  void run(const Cplx* in, Cplx* out, Cplx* work) const;
  int64_t size() const { return n_; }

 private:
  static int64_t bluestein_size(int64_t n);

  int64_t n_ = 0;
  bool inverse_ = false;
  bool bluestein_ = false;
  RadixFft radix_;                // length n, or the power-of-two convolution length (forward)
  const Cplx* chirp_ = nullptr;   // Bluestein: exp(sign * pi*i * k^2 / n), k < n
  const Cplx* filter_ = nullptr;  // Bluestein: the FFT of the conjugate chirp, scaled by 1/m
};

}  // namespace sod2::rt::math
