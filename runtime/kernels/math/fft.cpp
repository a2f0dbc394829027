#include "runtime/kernels/math/fft.h"

#include <cmath>
#include <numbers>

namespace sod2::rt::math {
namespace {

inline Cplx mul(Cplx a, Cplx b) { return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
inline Cplx add(Cplx a, Cplx b) { return {a.re + b.re, a.im + b.im}; }
inline Cplx sub(Cplx a, Cplx b) { return {a.re - b.re, a.im - b.im}; }
inline Cplx conj(Cplx a) { return {a.re, -a.im}; }

// exp(i * angle)
inline Cplx unit(double angle) { return {std::cos(angle), std::sin(angle)}; }

}  // namespace

bool RadixFft::fits(int64_t n) {
  if (n < 1) return false;
  while (n % 2 == 0) n /= 2;
  for (int64_t p = 3; p <= kMaxRadix && n > 1; p += 2)
    while (n % p == 0) n /= p;
  return n == 1;
}

void RadixFft::init(int64_t n, bool inverse, Cplx* twiddles) {
  n_ = n;
  inverse_ = inverse;
  num_factors_ = 0;
  int64_t rest = n;
  auto push = [&](int64_t p) {
    rest /= p;
    radix_[num_factors_] = p;
    rest_[num_factors_] = rest;
    ++num_factors_;
  };
  while (rest % 4 == 0) push(4);
  while (rest % 2 == 0) push(2);
  for (int64_t p = 3; p <= kMaxRadix && rest > 1; p += 2)
    while (rest % p == 0) push(p);
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; ++k)
    twiddles[k] =
        unit(sign * 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n));
  tw_ = twiddles;
}

void RadixFft::run(const Cplx* in, int64_t in_stride, Cplx* out) const {
  if (n_ == 1) {
    out[0] = in[0];
    return;
  }
  work(out, in, 1, in_stride, 0);
}

// Decimation in time: the p sub-transforms of length m = n / p (inputs p * fstride apart) land
// contiguously in out, then one butterfly pass combines them.
void RadixFft::work(Cplx* out, const Cplx* in, int64_t fstride, int64_t in_stride,
                    int level) const {
  const int64_t p = radix_[level], m = rest_[level];
  if (m == 1) {
    for (int64_t i = 0; i < p; ++i) out[i] = in[i * fstride * in_stride];
  } else {
    for (int64_t i = 0; i < p; ++i)
      work(out + i * m, in + i * fstride * in_stride, fstride * p, in_stride, level + 1);
  }
  const Cplx* tw = tw_;
  if (p == 2) {
    for (int64_t k = 0; k < m; ++k) {
      const Cplx t = mul(out[m + k], tw[k * fstride]);
      out[m + k] = sub(out[k], t);
      out[k] = add(out[k], t);
    }
  } else if (p == 4) {
    for (int64_t k = 0; k < m; ++k) {
      const Cplx s0 = mul(out[k + m], tw[k * fstride]);
      const Cplx s1 = mul(out[k + 2 * m], tw[2 * k * fstride]);
      const Cplx s2 = mul(out[k + 3 * m], tw[3 * k * fstride]);
      const Cplx s5 = sub(out[k], s1);
      const Cplx f0 = add(out[k], s1);
      const Cplx s3 = add(s0, s2), s4 = sub(s0, s2);
      out[k + 2 * m] = sub(f0, s3);
      out[k] = add(f0, s3);
      if (inverse_) {
        out[k + m] = {s5.re - s4.im, s5.im + s4.re};
        out[k + 3 * m] = {s5.re + s4.im, s5.im - s4.re};
      } else {
        out[k + m] = {s5.re + s4.im, s5.im - s4.re};
        out[k + 3 * m] = {s5.re - s4.im, s5.im + s4.re};
      }
    }
  } else {
    Cplx scratch[kMaxRadix];
    for (int64_t u = 0; u < m; ++u) {
      for (int64_t q = 0; q < p; ++q) scratch[q] = out[u + q * m];
      for (int64_t q1 = 0; q1 < p; ++q1) {
        const int64_t k = u + q1 * m;
        Cplx acc = scratch[0];
        int64_t idx = 0;
        for (int64_t q = 1; q < p; ++q) {
          idx += fstride * k;  // fstride * k < n, so one wrap suffices
          if (idx >= n_) idx -= n_;
          acc = add(acc, mul(scratch[q], tw[idx]));
        }
        out[k] = acc;
      }
    }
  }
}

int64_t Fft::bluestein_size(int64_t n) {
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  return m;
}

int64_t Fft::plan_count(int64_t n) {
  if (RadixFft::fits(n)) return RadixFft::twiddle_count(n);
  const int64_t m = bluestein_size(n);
  return RadixFft::twiddle_count(m) + n + m;
}

int64_t Fft::work_count(int64_t n) { return RadixFft::fits(n) ? 0 : 2 * bluestein_size(n); }

void Fft::init(int64_t n, bool inverse, Cplx* plan, Cplx* work) {
  n_ = n;
  inverse_ = inverse;
  bluestein_ = !RadixFft::fits(n);
  if (!bluestein_) {
    radix_.init(n, inverse, plan);
    return;
  }
  // Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2, so X[k] = w[k] * sum_j (x[j] w[j]) conj(w[k-j])
  // with w[t] = exp(sign * pi*i * t^2 / n): a convolution, done circularly at length m >= 2n-1.
  const int64_t m = bluestein_size(n);
  Cplx* twiddles = plan;
  Cplx* chirp = plan + RadixFft::twiddle_count(m);
  Cplx* filter = chirp + n;
  radix_.init(m, false, twiddles);
  const double sign = inverse ? 1.0 : -1.0;
  int64_t q = 0;  // k^2 mod 2n (the chirp's period), kept exact in integers
  for (int64_t k = 0; k < n; ++k) {
    chirp[k] = unit(sign * std::numbers::pi * static_cast<double>(q) / static_cast<double>(n));
    q = (q + 2 * k + 1) % (2 * n);
  }
  Cplx* b = work;
  for (int64_t k = 0; k < m; ++k) b[k] = Cplx{};
  b[0] = conj(chirp[0]);
  for (int64_t k = 1; k < n; ++k) b[k] = b[m - k] = conj(chirp[k]);
  radix_.run(b, 1, filter);
  const double scale = 1.0 / static_cast<double>(m);  // the inverse FFT's 1/m, folded in here
  for (int64_t k = 0; k < m; ++k) filter[k] = {filter[k].re * scale, filter[k].im * scale};
  chirp_ = chirp;
  filter_ = filter;
}

void Fft::run(const Cplx* in, Cplx* out, Cplx* work) const {
  if (!bluestein_) {
    radix_.run(in, 1, out);
    return;
  }
  const int64_t m = radix_.size();
  Cplx* a = work;
  Cplx* c = work + m;
  for (int64_t j = 0; j < n_; ++j) a[j] = mul(in[j], chirp_[j]);
  for (int64_t j = n_; j < m; ++j) a[j] = Cplx{};
  radix_.run(a, 1, c);
  // The inverse FFT as conj(FFT(conj(.))); the 1/m is in filter_.
  for (int64_t k = 0; k < m; ++k) c[k] = conj(mul(c[k], filter_[k]));
  radix_.run(c, 1, a);
  for (int64_t k = 0; k < n_; ++k) out[k] = mul(chirp_[k], conj(a[k]));
}

}  // namespace sod2::rt::math
