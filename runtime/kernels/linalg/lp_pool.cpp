// LpPool (opsets 2, 11 and 18: dilations and ceil_mode) and GlobalLpPool on float32:
// y = (sum over the window of |x|^p)^(1/p); padding contributes zeros. The window geometry is the
// pools' and convolutions' (geometry.h).
#include <cmath>
#include <string>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

// The most window taps one run may visit (the loops are scalar).
constexpr int64_t kMaxWork = int64_t{1} << 40;

float lp_root(double sum, int64_t p) {
  if (p == 1) return static_cast<float>(sum);
  if (p == 2) return static_cast<float>(std::sqrt(sum));
  return static_cast<float>(std::pow(sum, 1.0 / static_cast<double>(p)));
}

double lp_term(float v, int64_t p) {
  const double a = std::fabs(static_cast<double>(v));
  if (p == 1) return a;
  if (p == 2) return a * a;
  return std::pow(a, static_cast<double>(p));
}

class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(WindowAttrs w, int64_t p, bool global) : w_(std::move(w)), p_(p), global_(global) {}

  Status run(KernelContext& ctx) override {
    const char* op = global_ ? "GlobalLpPool" : "LpPool";
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument(std::string(op) + ": needs input X");
    if (x->dtype != DType::kFloat) return unsupported_dtype(op, "X", x->dtype);
    const Shape& s = x->shape;
    const int spatial = s.rank() - 2;
    if (spatial < 1 || spatial > 3)
      return unsupported(std::string(op) + ": X must have 1 to 3 spatial dims, got " +
                         s.to_string());
    int64_t in[3], kernel[3];
    for (int i = 0; i < spatial; ++i) {
      in[i] = s[2 + i];
      kernel[i] = global_ ? s[2 + i] : 0;
    }
    WindowAttrs w = w_;
    if (global_) w.kernel_shape.assign(kernel, kernel + spatial);
    if (static_cast<int>(w.kernel_shape.size()) != spatial)
      return invalid_argument(std::string(op) + ": kernel_shape has " +
                              std::to_string(w.kernel_shape.size()) + " dims for X " +
                              s.to_string());
    SOD2_ASSIGN_OR_RETURN(
        Window3 g, resolve_window(w, std::span<const int64_t>(in, static_cast<size_t>(spatial)),
                                  std::span<const int64_t>(w.kernel_shape), op));
    Shape out = s;
    for (int i = 0; i < spatial; ++i) out[2 + i] = g.out[3 - spatial + i];
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    // An empty output: N * C planes of nothing (huge next to an empty spatial dim) are not
    // iterated.
    for (int i = 0; i < out.rank(); ++i)
      if (out[i] == 0) return Status::ok_status();
    // Every output walks its whole window, padding included: a kernel of 2^41 over one padded
    // element would loop for hours. The taps are bounded like Einsum's terms.
    int64_t work = 1;
    for (int64_t f : {s[0], s[1], g.out[0], g.out[1], g.out[2], g.k[0], g.k[1], g.k[2]})
      if (__builtin_mul_overflow(work, f, &work) || work > kMaxWork)
        return resource_exhausted(std::string(op) + ": kernel " + dims_string(w.kernel_shape) +
                                  " over X " + s.to_string() + " needs more than " +
                                  std::to_string(kMaxWork) + " taps");
    const int64_t planes = s[0] * s[1];
    const float* src = x->as<float>();
    float* dst = y->as<float>();
    const int64_t p = p_;
    ctx.pool().parallel_for(planes, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t pl = lo; pl < hi; ++pl) {
        const float* xp = src + pl * g.in_size();
        float* yp = dst + pl * g.out_size();
        for (int64_t oz = 0; oz < g.out[0]; ++oz)
          for (int64_t oy = 0; oy < g.out[1]; ++oy)
            for (int64_t ox = 0; ox < g.out[2]; ++ox) {
              double sum = 0;
              for (int64_t tz = 0; tz < g.k[0]; ++tz) {
                const int64_t iz = oz * g.stride[0] - g.pad_begin[0] + tz * g.dil[0];
                if (iz < 0 || iz >= g.in[0]) continue;
                for (int64_t ty = 0; ty < g.k[1]; ++ty) {
                  const int64_t iy = oy * g.stride[1] - g.pad_begin[1] + ty * g.dil[1];
                  if (iy < 0 || iy >= g.in[1]) continue;
                  for (int64_t tx = 0; tx < g.k[2]; ++tx) {
                    const int64_t ix = ox * g.stride[2] - g.pad_begin[2] + tx * g.dil[2];
                    if (ix < 0 || ix >= g.in[2]) continue;
                    sum += lp_term(xp[(iz * g.in[1] + iy) * g.in[2] + ix], p);
                  }
                }
              }
              yp[(oz * g.out[1] + oy) * g.out[2] + ox] = lp_root(sum, p);
            }
      }
    });
    return Status::ok_status();
  }

 private:
  WindowAttrs w_;
  int64_t p_;
  bool global_;
};

Expected<std::unique_ptr<Kernel>> make_lp(const NodeInfo& node, bool global) {
  const char* op = global ? "GlobalLpPool" : "LpPool";
  WindowAttrs w;
  if (!global) {
    SOD2_ASSIGN_OR_RETURN(w, read_window_attrs(node.attrs, op));
    if (w.kernel_shape.empty()) return invalid_model("LpPool: needs kernel_shape");
    if (node.opset < 18 && (w.ceil_mode || !w.dilations.empty()))
      return invalid_model("LpPool: ceil_mode and dilations exist from opset 18");
  }
  int64_t p = 2;
  if (node.opset >= 2) {
    SOD2_ATTR(p, node.attrs.get_int("p", 2));
  } else {
    float pf = 2.f;
    SOD2_ATTR(pf, node.attrs.get_float("p", 2.f));
    // Converting NaN or a float beyond int64 is undefined: p is range-checked first.
    if (!(pf >= 1.f && pf <= static_cast<float>(int64_t{1} << 30)))
      return invalid_model(std::string(op) + ": p must be in [1, 2^30], got " + std::to_string(pf));
    p = static_cast<int64_t>(pf);
  }
  if (p <= 0)
    return invalid_model(std::string(op) + ": p must be positive, got " + std::to_string(p));
  return std::unique_ptr<Kernel>(new LpPoolKernel(std::move(w), p, global));
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_lp_pool(const NodeInfo& node) {
  return make_lp(node, false);
}

Expected<std::unique_ptr<Kernel>> make_global_lp_pool(const NodeInfo& node) {
  return make_lp(node, true);
}

}  // namespace sod2::rt
