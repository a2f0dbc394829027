// Signal processing (opset 17): DFT and STFT over the FFT of fft.h, the Hann, Hamming and
// Blackman windows, and MelWeightMatrix.
//
// Complex tensors are real tensors with a last dim of 2 (real, imaginary); a last dim of 1 is a
// real signal. Transforms compute in double and write the input's type (float32 or double).
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <string>

#include "runtime/kernels/math/fft.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

// Scratch for the FFT plan plus `slots` transforms in flight, each with an input and output line
// of n values and the FFT's work memory.
struct FftScratch {
  Fft fft;
  Cplx* lines = nullptr;  // slots * (2n + work)
  int64_t per_slot = 0;
  int64_t n = 0;

  Cplx* in(int64_t slot) const { return lines + slot * per_slot; }
  Cplx* out(int64_t slot) const { return lines + slot * per_slot + n; }
  Cplx* work(int64_t slot) const { return lines + slot * per_slot + 2 * n; }
};

Status make_fft_scratch(KernelContext& ctx, const char* op, int64_t n, bool inverse, int64_t slots,
                        FftScratch* s) {
  if (n < 1 || n > Fft::kMaxLength) {
    return invalid_argument(std::string(op) + ": transform length " + std::to_string(n) +
                            " is outside [1, " + std::to_string(Fft::kMaxLength) + "]");
  }
  const int64_t plan = Fft::plan_count(n), work = Fft::work_count(n);
  s->n = n;
  s->per_slot = 2 * n + work;
  const int64_t total = plan + slots * s->per_slot;  // n <= 2^31, slots <= threads: no overflow
  SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(total) * sizeof(Cplx)));
  Cplx* base = static_cast<Cplx*>(mem);
  s->lines = base + plan;
  s->fft.init(n, inverse, base, s->work(0));  // slot 0's work memory, before any transform
  return Status::ok_status();
}

// Runs `lines` independent jobs over at most num_threads slots, each job given its slot.
template <class F>
void for_lines(ThreadPool& pool, int64_t lines, int64_t slots, F&& f) {
  pool.parallel_for(slots, 1, [&](int64_t b, int64_t e) {
    for (int64_t s = b; s < e; ++s) {
      const int64_t begin = lines * s / slots, end = lines * (s + 1) / slots;
      for (int64_t l = begin; l < end; ++l) f(l, s);
    }
  });
}

int64_t slot_count(ThreadPool& pool, int64_t lines) {
  return std::max<int64_t>(1, std::min<int64_t>(pool.num_threads(), lines));
}

// Reads an optional scalar int input; *present says whether it was given.
Status read_optional_int(const char* op, const char* what, const Tensor* t, int64_t* out,
                         bool* present) {
  *present = t != nullptr;
  if (!t) return Status::ok_status();
  return read_scalar_int(op, what, t, out);
}

// ---- DFT ----------------------------------------------------------------------------------

class DftKernel final : public Kernel {
 public:
  DftKernel(int64_t axis, bool inverse, bool onesided)
      : axis_(axis), inverse_(inverse), onesided_(onesided) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("DFT: input is missing");
    const Shape& s = x->shape;
    const int rank = s.rank();
    if (rank < 2 || (s[rank - 1] != 1 && s[rank - 1] != 2)) {
      return invalid_argument("DFT: input must be [batch, signal..., 1 or 2], got " +
                              s.to_string());
    }
    int axis = 0;
    SOD2_RETURN_IF_ERROR(normalize_axis("DFT", axis_, rank, &axis));
    if (axis == rank - 1) {
      return invalid_argument("DFT: axis " + std::to_string(axis_) +
                              " is the last (real/imaginary) dim of " + s.to_string());
    }
    const bool complex_in = s[rank - 1] == 2;
    if (onesided_ && complex_in)
      return invalid_argument("DFT: onesided output needs a real input (last dim 1), got " +
                              s.to_string());
    int64_t length = s[axis];
    bool given = false;
    SOD2_RETURN_IF_ERROR(read_optional_int("DFT", "dft_length", ctx.input(1), &length, &given));
    if (given && length < 1)
      return invalid_argument("DFT: dft_length must be positive, got " + std::to_string(length));
    const int64_t out_len = onesided_ ? length / 2 + 1 : length;
    Shape out_shape = s;
    out_shape[axis] = length == 0 ? 0 : out_len;
    out_shape[rank - 1] = 2;
    return visit_dtype("DFT", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, out_shape));
        if (y->numel() == 0) return Status::ok_status();
        const int64_t outer = dims_product(s, 0, axis), inner = dims_product(s, axis + 1, rank - 1);
        const int64_t n_in = s[axis], c = s[rank - 1], lines = outer * inner;
        const int64_t slots = slot_count(ctx.pool(), lines);
        FftScratch fs;
        SOD2_RETURN_IF_ERROR(make_fft_scratch(ctx, "DFT", length, inverse_, slots, &fs));
        const T* in = x->as<const T>();
        T* out = y->as<T>();
        const int64_t take = std::min(n_in, length);
        const double scale = inverse_ ? 1.0 / static_cast<double>(length) : 1.0;
        const int64_t out_rows = out_shape[axis];
        for_lines(ctx.pool(), lines, slots, [&](int64_t line, int64_t slot) {
          const int64_t o = line / inner, i = line % inner;
          const T* src = in + (o * n_in * inner + i) * c;
          Cplx* buf = fs.in(slot);
          for (int64_t j = 0; j < take; ++j) {
            const T* v = src + j * inner * c;
            buf[j] = {static_cast<double>(v[0]), complex_in ? static_cast<double>(v[1]) : 0.0};
          }
          for (int64_t j = take; j < length; ++j) buf[j] = Cplx{};
          Cplx* res = fs.out(slot);
          fs.fft.run(buf, res, fs.work(slot));
          T* dst = out + (o * out_rows * inner + i) * 2;
          for (int64_t k = 0; k < out_rows; ++k) {
            dst[k * inner * 2] = static_cast<T>(res[k].re * scale);
            dst[k * inner * 2 + 1] = static_cast<T>(res[k].im * scale);
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("DFT", x->dtype);
      }
    });
  }

 private:
  int64_t axis_;
  bool inverse_, onesided_;
};

Expected<std::unique_ptr<Kernel>> dft_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
  SOD2_ASSIGN_OR_RETURN(int64_t inverse, node.attrs.get_int("inverse", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t onesided, node.attrs.get_int("onesided", 0));
  return std::unique_ptr<Kernel>(std::make_unique<DftKernel>(axis, inverse != 0, onesided != 0));
}

// ---- STFT ---------------------------------------------------------------------------------

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* window = ctx.input(2);
    if (!x) return invalid_argument("STFT: signal is missing");
    const Shape& s = x->shape;
    if (s.rank() != 3 || (s[2] != 1 && s[2] != 2)) {
      return invalid_argument("STFT: signal must be [batch, signal_length, 1 or 2], got " +
                              s.to_string());
    }
    const bool complex_in = s[2] == 2;
    if (onesided_ && complex_in)
      return invalid_argument("STFT: onesided output needs a real signal (last dim 1), got " +
                              s.to_string());
    int64_t step = 0;
    SOD2_RETURN_IF_ERROR(read_scalar_int("STFT", "frame_step", ctx.input(1), &step));
    if (step < 1)
      return invalid_argument("STFT: frame_step must be positive, got " + std::to_string(step));
    if (window) {
      if (window->shape.rank() != 1)
        return invalid_argument("STFT: window must be 1-D, got " + window->shape.to_string());
      if (window->dtype != x->dtype)
        return invalid_argument(std::string("STFT: window is ") + dtype_name(window->dtype) +
                                " but the signal is " + dtype_name(x->dtype));
    }
    int64_t length = window ? window->shape[0] : s[1];
    bool given = false;
    SOD2_RETURN_IF_ERROR(read_optional_int("STFT", "frame_length", ctx.input(3), &length, &given));
    if (length < 1)
      return invalid_argument("STFT: frame_length must be positive, got " + std::to_string(length));
    if (window && window->shape[0] != length) {
      return invalid_argument("STFT: window has " + std::to_string(window->shape[0]) +
                              " values but frame_length is " + std::to_string(length));
    }
    if (s[1] < length) {
      return invalid_argument("STFT: signal length " + std::to_string(s[1]) +
                              " is shorter than frame_length " + std::to_string(length));
    }
    const int64_t frames = (s[1] - length) / step + 1;
    const int64_t bins = onesided_ ? length / 2 + 1 : length;
    return visit_dtype("STFT", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, Shape{s[0], frames, bins, 2}));
        if (y->numel() == 0) return Status::ok_status();
        const int64_t lines = s[0] * frames;
        const int64_t slots = slot_count(ctx.pool(), lines);
        FftScratch fs;
        SOD2_RETURN_IF_ERROR(make_fft_scratch(ctx, "STFT", length, false, slots, &fs));
        const T* in = x->as<const T>();
        const T* w = window ? window->as<const T>() : nullptr;
        T* out = y->as<T>();
        const int64_t c = s[2];
        for_lines(ctx.pool(), lines, slots, [&](int64_t line, int64_t slot) {
          const int64_t b = line / frames, f = line % frames;
          const T* src = in + (b * s[1] + f * step) * c;
          Cplx* buf = fs.in(slot);
          for (int64_t j = 0; j < length; ++j) {
            const double wj = w ? static_cast<double>(w[j]) : 1.0;
            buf[j] = {static_cast<double>(src[j * c]) * wj,
                      complex_in ? static_cast<double>(src[j * c + 1]) * wj : 0.0};
          }
          Cplx* res = fs.out(slot);
          fs.fft.run(buf, res, fs.work(slot));
          T* dst = out + line * bins * 2;
          for (int64_t k = 0; k < bins; ++k) {
            dst[2 * k] = static_cast<T>(res[k].re);
            dst[2 * k + 1] = static_cast<T>(res[k].im);
          }
        });
        return Status::ok_status();
      } else {
        return unsupported_dtype("STFT", x->dtype);
      }
    });
  }

 private:
  bool onesided_;
};

Expected<std::unique_ptr<Kernel>> stft_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_ASSIGN_OR_RETURN(int64_t onesided, node.attrs.get_int("onesided", 1));
  return std::unique_ptr<Kernel>(std::make_unique<StftKernel>(onesided != 0));
}

// ---- Windows ------------------------------------------------------------------------------

// The output_datatype attribute (default float32) as a DType the windows can write.
Status read_output_datatype(const NodeInfo& node, DType* out) {
  SOD2_ASSIGN_OR_RETURN(int64_t v, node.attrs.get_int("output_datatype", 1));
  if (v < 0 || v > 255 || !is_known_dtype(static_cast<uint8_t>(v))) {
    return invalid_model(node.op_type + ": unknown output_datatype " + std::to_string(v));
  }
  const DType t = static_cast<DType>(v);
  if (t == DType::kBool || t == DType::kString || t == DType::kFloat16 || t == DType::kBFloat16 ||
      t == DType::kUndefined)
    return unsupported_dtype(node.op_type.c_str(), t);
  *out = t;
  return Status::ok_status();
}

enum class WindowKind : uint8_t { kHann, kHamming, kBlackman };

// The window's value at n with denominator N (the size when periodic, size - 1 when symmetric).
double window_value(WindowKind kind, int64_t n, int64_t denom) {
  const double a = 2.0 * std::numbers::pi * static_cast<double>(n) / static_cast<double>(denom);
  switch (kind) {
    case WindowKind::kHann: return 0.5 - 0.5 * std::cos(a);
    case WindowKind::kHamming: return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
    case WindowKind::kBlackman: return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2.0 * a);
  }
  return 0;
}

class WindowKernel final : public Kernel {
 public:
  WindowKernel(const char* op, WindowKind kind, DType dtype, bool periodic)
      : op_(op), kind_(kind), dtype_(dtype), periodic_(periodic) {}

  Status run(KernelContext& ctx) override {
    int64_t size = 0;
    SOD2_RETURN_IF_ERROR(read_scalar_int(op_, "size", ctx.input(0), &size));
    if (size < 0)
      return invalid_argument(std::string(op_) + ": size must be >= 0, got " +
                              std::to_string(size));
    return visit_dtype(op_, dtype_, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, dtype_, Shape{size}));
        T* out = y->as<T>();
        const int64_t denom = periodic_ ? size : size - 1;
        // A symmetric window of one value is 1 (its denominator would be 0).
        if (denom == 0) {
          if (size == 1) out[0] = static_cast<T>(1);
          return Status::ok_status();
        }
        for (int64_t n = 0; n < size; ++n) out[n] = static_cast<T>(window_value(kind_, n, denom));
        return Status::ok_status();
      } else {
        return unsupported_dtype(op_, dtype_);
      }
    });
  }

 private:
  const char* op_;
  WindowKind kind_;
  DType dtype_;
  bool periodic_;
};

template <WindowKind kKind>
Expected<std::unique_ptr<Kernel>> window_factory(const NodeInfo& node) {
  static constexpr const char* kNames[] = {"HannWindow", "HammingWindow", "BlackmanWindow"};
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  DType dtype = DType::kFloat;
  SOD2_RETURN_IF_ERROR(read_output_datatype(node, &dtype));
  SOD2_ASSIGN_OR_RETURN(int64_t periodic, node.attrs.get_int("periodic", 1));
  return std::unique_ptr<Kernel>(
      std::make_unique<WindowKernel>(kNames[static_cast<int>(kKind)], kKind, dtype, periodic != 0));
}

// ---- MelWeightMatrix ----------------------------------------------------------------------

// A one-value float32/double tensor.
Status read_scalar_float(const char* op, const char* what, const Tensor* t, double* out) {
  if (!t) return invalid_argument(std::string(op) + ": input '" + what + "' is missing");
  if (t->numel() != 1) {
    return invalid_argument(std::string(op) + ": '" + what + "' should hold one value, not " +
                            t->shape.to_string());
  }
  if (t->dtype == DType::kFloat) {
    *out = *t->as<float>();
  } else if (t->dtype == DType::kDouble) {
    *out = *t->as<double>();
  } else {
    return invalid_argument(std::string(op) + ": '" + what + "' should be float32 or double, not " +
                            dtype_name(t->dtype));
  }
  return Status::ok_status();
}

// Triangular filters equally spaced on the mel scale (mel = 2595 log10(1 + hz / 700)), as ONNX
// defines them: num_mel_bins + 2 edges from lower to upper edge, each mapped to the spectrogram
// bin floor((dft_length + 1) * hz / sample_rate); filter i rises from edge i to edge i + 1 and
// falls to edge i + 2.
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType dtype) : dtype_(dtype) {}

  Status run(KernelContext& ctx) override {
    constexpr const char* kOp = "MelWeightMatrix";
    int64_t mel_bins = 0, dft_length = 0, sample_rate = 0;
    double lower = 0, upper = 0;
    SOD2_RETURN_IF_ERROR(read_scalar_int(kOp, "num_mel_bins", ctx.input(0), &mel_bins));
    SOD2_RETURN_IF_ERROR(read_scalar_int(kOp, "dft_length", ctx.input(1), &dft_length));
    SOD2_RETURN_IF_ERROR(read_scalar_int(kOp, "sample_rate", ctx.input(2), &sample_rate));
    SOD2_RETURN_IF_ERROR(read_scalar_float(kOp, "lower_edge_hertz", ctx.input(3), &lower));
    SOD2_RETURN_IF_ERROR(read_scalar_float(kOp, "upper_edge_hertz", ctx.input(4), &upper));
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1) {
      return invalid_argument(std::string(kOp) +
                              ": num_mel_bins, dft_length and sample_rate must be positive, got " +
                              std::to_string(mel_bins) + ", " + std::to_string(dft_length) + ", " +
                              std::to_string(sample_rate));
    }
    if (!(lower >= 0) || !(upper >= lower)) {
      return invalid_argument(std::string(kOp) +
                              ": need 0 <= lower_edge_hertz <= " + "upper_edge_hertz, got " +
                              std::to_string(lower) + " and " + std::to_string(upper));
    }
    if (mel_bins > (int64_t{1} << 31) || dft_length > (int64_t{1} << 40)) {
      return invalid_argument(std::string(kOp) + ": num_mel_bins " + std::to_string(mel_bins) +
                              " or dft_length " + std::to_string(dft_length) + " is too large");
    }
    const int64_t spec_bins = dft_length / 2 + 1;
    // The edges' spectrogram bins.
    SOD2_ASSIGN_OR_RETURN(void* mem, ctx.scratch(static_cast<size_t>(mel_bins + 2) * 8));
    auto* edge = static_cast<int64_t*>(mem);
    // The mel end points in the edges' own precision (float32 unless given as double).
    const bool f32 = ctx.input(3)->dtype == DType::kFloat;
    auto to_mel = [&](double hz) {
      return f32 ? static_cast<double>(2595.0f * std::log10(1.0f + static_cast<float>(hz) / 700.0f))
                 : 2595.0 * std::log10(1.0 + hz / 700.0);
    };
    const double low_mel = to_mel(lower), high_mel = to_mel(upper);
    double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    if (f32) step = static_cast<float>(step);
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double mel = static_cast<double>(i) * step + low_mel;
      const double hz = 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0);
      const double bin =
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      if (!(bin >= 0) || bin >= static_cast<double>(spec_bins)) {
        return invalid_argument(std::string(kOp) + ": upper_edge_hertz " + std::to_string(upper) +
                                " maps past the last of the " + std::to_string(spec_bins) +
                                " spectrogram bins (at most sample_rate / 2 = " +
                                std::to_string(sample_rate / 2) + ")");
      }
      edge[i] = static_cast<int64_t>(bin);
    }
    return visit_dtype(kOp, dtype_, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNumeric<T>) {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, dtype_, Shape{spec_bins, mel_bins}));
        T* out = y->as<T>();
        std::fill(out, out + spec_bins * mel_bins, T{0});
        for (int64_t i = 0; i < mel_bins; ++i) {
          const int64_t left = edge[i], center = edge[i + 1], right = edge[i + 2];
          if (center == left) {
            out[center * mel_bins + i] = static_cast<T>(1);
          } else {
            for (int64_t j = left; j <= center; ++j)
              out[j * mel_bins + i] = static_cast<T>(static_cast<double>(j - left) /
                                                     static_cast<double>(center - left));
          }
          for (int64_t j = center; j < right; ++j)
            out[j * mel_bins + i] = static_cast<T>(static_cast<double>(right - j) /
                                                   static_cast<double>(right - center));
        }
        return Status::ok_status();
      } else {
        return unsupported_dtype(kOp, dtype_);
      }
    });
  }

 private:
  DType dtype_;
};

Expected<std::unique_ptr<Kernel>> mel_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 5));
  DType dtype = DType::kFloat;
  SOD2_RETURN_IF_ERROR(read_output_datatype(node, &dtype));
  return std::unique_ptr<Kernel>(std::make_unique<MelWeightMatrixKernel>(dtype));
}

}  // namespace

void register_signal(KernelRegistry& r) {
  r.add("", "DFT", 17, &dft_factory);
  r.add("", "STFT", 17, &stft_factory);
  r.add("", "HannWindow", 17, &window_factory<WindowKind::kHann>);
  r.add("", "HammingWindow", 17, &window_factory<WindowKind::kHamming>);
  r.add("", "BlackmanWindow", 17, &window_factory<WindowKind::kBlackman>);
  r.add("", "MelWeightMatrix", 17, &mel_factory);
}

}  // namespace sod2::rt::math
