// ConvTranspose on NC[D]HW float32: per image and group, cols = W^T * X with the GEMM library,
// then col2im scatters the columns into the output planes (one plane per parallel item, so no
// two threads write one value), followed by the bias/epilogue while the plane is in cache.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/linalg/common.h"
#include "runtime/kernels/linalg/epilogue.h"
#include "runtime/kernels/linalg/gemm.h"
#include "runtime/kernels/linalg/geometry.h"
#include "runtime/kernels/linalg/linalg_kernels.h"

namespace sod2::rt {
namespace {

struct TransposeAttrs {
  WindowAttrs win;
  int64_t group = 1;
  std::vector<int64_t> output_padding, output_shape;
};

// Adds the rows of `col` ([mg*kvol, Pin]) that belong to output channel `m` into plane `y`.
void col2im_plane(const float* col, int64_t m, const Window3& g, float* y) {
  const int64_t kvol = g.k_size(), Pin = g.in_size();
  for (int64_t kz = 0; kz < g.k[0]; ++kz)
    for (int64_t ky = 0; ky < g.k[1]; ++ky)
      for (int64_t kx = 0; kx < g.k[2]; ++kx) {
        const float* c = col + (m * kvol + (kz * g.k[1] + ky) * g.k[2] + kx) * Pin;
        for (int64_t iz = 0; iz < g.in[0]; ++iz) {
          const int64_t oz = iz * g.stride[0] - g.pad_begin[0] + kz * g.dil[0];
          if (oz < 0 || oz >= g.out[0]) continue;
          for (int64_t iy = 0; iy < g.in[1]; ++iy) {
            const int64_t oy = iy * g.stride[1] - g.pad_begin[1] + ky * g.dil[1];
            if (oy < 0 || oy >= g.out[1]) continue;
            const float* cr = c + (iz * g.in[1] + iy) * g.in[2];
            float* yr = y + (oz * g.out[1] + oy) * g.out[2];
            const int64_t off = kx * g.dil[2] - g.pad_begin[2];
            for (int64_t ix = 0; ix < g.in[2]; ++ix) {
              const int64_t ox = ix * g.stride[2] + off;
              if (ox >= 0 && ox < g.out[2]) yr[ox] += cr[ix];
            }
          }
        }
      }
}

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(TransposeAttrs a) : a_(std::move(a)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return invalid_argument("ConvTranspose: needs inputs X and W");
    if (x->dtype != DType::kFloat) return unsupported_dtype("ConvTranspose", "X", x->dtype);
    if (w->dtype != DType::kFloat) return unsupported_dtype("ConvTranspose", "W", w->dtype);
    if (b && b->dtype != DType::kFloat) return unsupported_dtype("ConvTranspose", "B", b->dtype);
    const int r = x->shape.rank();
    if (r < 3 || r > 5 || w->shape.rank() != r)
      return invalid_argument("ConvTranspose: X " + x->shape.to_string() + " and W " +
                              w->shape.to_string() + " must have the same rank, 3 to 5");
    const int ns = r - 2;
    const int64_t n = x->shape[0], c = x->shape[1], grp = a_.group;
    if (c != w->shape[0] || c % grp != 0)
      return invalid_argument("ConvTranspose: X " + x->shape.to_string() + " and W " +
                              w->shape.to_string() + " do not fit group " + std::to_string(grp));
    // m = W's channels times group, overflow-checked: an empty W may have any dims.
    const int64_t mg = w->shape[1], cg = c / grp;
    int64_t m = 0;
    if (__builtin_mul_overflow(mg, grp, &m))
      return invalid_argument("ConvTranspose: W " + w->shape.to_string() + " times group " +
                              std::to_string(grp) + " output channels overflow");
    if (b && b->numel() != m)
      return invalid_argument("ConvTranspose: B " + b->shape.to_string() + " must have " +
                              std::to_string(m) + " elements");
    auto check = [&](const std::vector<int64_t>& v, size_t want, const char* name) -> Status {
      if (!v.empty() && v.size() != want)
        return invalid_argument(std::string("ConvTranspose: ") + name + " has " +
                                std::to_string(v.size()) + " values, expected " +
                                std::to_string(want));
      return Status::ok_status();
    };
    const WindowAttrs& wa = a_.win;
    SOD2_RETURN_IF_ERROR(check(wa.strides, ns, "strides"));
    SOD2_RETURN_IF_ERROR(check(wa.dilations, ns, "dilations"));
    SOD2_RETURN_IF_ERROR(check(wa.pads, 2 * ns, "pads"));
    SOD2_RETURN_IF_ERROR(check(a_.output_padding, ns, "output_padding"));
    if (!wa.kernel_shape.empty() && !std::equal(wa.kernel_shape.begin(), wa.kernel_shape.end(),
                                                w->shape.dims().begin() + 2, w->shape.dims().end()))
      return invalid_argument("ConvTranspose: kernel_shape " + dims_string(wa.kernel_shape) +
                              " differs from W " + w->shape.to_string());
    if (!a_.output_shape.empty() && a_.output_shape.size() < static_cast<size_t>(ns))
      return invalid_argument("ConvTranspose: output_shape " + dims_string(a_.output_shape) +
                              " has fewer than " + std::to_string(ns) + " values");

    Window3 g;  // in = the op's input (small side), out = its output
    g.spatial = ns;
    Shape out{n, m};
    for (int i = 0; i < ns; ++i) {
      const int j = 3 - ns + i;
      g.in[j] = x->shape[2 + i];
      g.k[j] = w->shape[2 + i];
      g.stride[j] = wa.strides.empty() ? 1 : wa.strides[i];
      g.dil[j] = wa.dilations.empty() ? 1 : wa.dilations[i];
      const int64_t op = a_.output_padding.empty() ? 0 : a_.output_padding[i];
      // Overflow-checked: strides, dilations and output_padding are the model's numbers.
      int64_t full = 0, span = 0;
      if (__builtin_mul_overflow(g.stride[j], g.in[j] - 1, &full) ||
          __builtin_mul_overflow(g.k[j] - 1, g.dil[j], &span) ||
          __builtin_add_overflow(full, span, &full) || __builtin_add_overflow(full, op, &full) ||
          __builtin_add_overflow(full, 1, &full))
        return invalid_argument("ConvTranspose: the output size of X " + x->shape.to_string() +
                                " and W " + w->shape.to_string() + " overflows");
      int64_t o = -1;
      if (!a_.output_shape.empty())
        o = a_.output_shape[a_.output_shape.size() - static_cast<size_t>(ns) + i];
      else if ((wa.auto_pad == AutoPad::kSameUpper || wa.auto_pad == AutoPad::kSameLower) &&
               __builtin_mul_overflow(g.in[j], g.stride[j], &o))
        return invalid_argument("ConvTranspose: the SAME output size of X " + x->shape.to_string() +
                                " overflows");
      if (o >= 0) {
        // Pads follow from the requested size (ONNX: SAME_UPPER puts the odd one at the end).
        // A size beyond the full output pads nothing at the start and leaves the extra
        // positions at the end to the bias alone, as ONNX Runtime does (like output_padding).
        int64_t total = 0;
        if (__builtin_sub_overflow(full, o, &total))
          return invalid_argument("ConvTranspose: output_shape " + dims_string(a_.output_shape) +
                                  " is out of range");
        if (total < 0) {
          g.pad_begin[j] = 0;
          g.pad_end[j] = total;
        } else {
          g.pad_begin[j] = wa.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
          g.pad_end[j] = total - g.pad_begin[j];
        }
      } else if (wa.auto_pad == AutoPad::kNotSet) {
        g.pad_begin[j] = wa.pads.empty() ? 0 : wa.pads[i];
        g.pad_end[j] = wa.pads.empty() ? 0 : wa.pads[i + ns];
        if (__builtin_sub_overflow(full, g.pad_begin[j], &o) ||
            __builtin_sub_overflow(o, g.pad_end[j], &o))
          return invalid_argument("ConvTranspose: pads " + dims_string(wa.pads) +
                                  " are out of range");
      } else {
        o = full;  // VALID
      }
      if (o < 0)
        return invalid_argument("ConvTranspose: pads " + dims_string(wa.pads) +
                                " leave a negative output size for X " + x->shape.to_string());
      g.out[j] = g.in[j] == 0 ? 0 : o;
      out.push_back(g.out[j]);
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (y->numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(EpilogueRun e,
                          resolve_epilogue(Epilogue{}, ctx, "ConvTranspose", y->shape, m,
                                           b ? b->as<float>() : nullptr));
    const int64_t kvol = g.k_size(), Pin = g.in_size(), P = g.out_size();
    // Checked: with no input channels X and W are empty whatever their other dims, so the
    // columns' size is not bounded by any tensor that exists.
    SOD2_RETURN_IF_ERROR(
        checked_tensor_bytes(DType::kFloat, Shape{mg, kvol, Pin}, uint64_t{1} << 62).status());
    SOD2_ASSIGN_OR_RETURN(float* col, scratch_floats(ctx, mg * kvol * Pin));
    const float* X = x->as<float>();
    const float* W = w->as<float>();
    float* Y = y->as<float>();
    for (int64_t img = 0; img < n; ++img)
      for (int64_t gi = 0; gi < grp; ++gi) {
        GemmArgs ga;
        ga.trans_a = true;  // W's group slice is [cg, mg*kvol]
        ga.m = mg * kvol;
        ga.n = Pin;
        ga.k = cg;
        ga.a = W + gi * cg * mg * kvol;
        ga.lda = mg * kvol;
        ga.b = X + (img * c + gi * cg) * Pin;
        ga.ldb = Pin;
        ga.c = col;
        ga.ldc = Pin;
        sgemm(ctx.pool(), ga);
        const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(kvol * Pin, 1));
        ctx.pool().parallel_for(mg, grain, [&](int64_t m0, int64_t m1) {
          for (int64_t mi = m0; mi < m1; ++mi) {
            const int64_t oc = gi * mg + mi;
            float* plane = Y + (img * m + oc) * P;
            std::memset(plane, 0, static_cast<size_t>(P) * sizeof(float));
            col2im_plane(col, mi, g, plane);
            if (!e.empty()) e.apply(plane, nullptr, 1, P, P, oc, true);
          }
        });
      }
    return Status::ok_status();
  }

 private:
  TransposeAttrs a_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_conv_transpose(const NodeInfo& node) {
  gemm_library_init();
  SOD2_RETURN_IF_ERROR(require_float_inputs(node));
  TransposeAttrs a;
  SOD2_ASSIGN_OR_RETURN(a.win, read_window_attrs(node.attrs, "ConvTranspose"));
  SOD2_ATTR(a.group, node.attrs.get_int("group", 1));
  SOD2_ATTR(a.output_padding, node.attrs.get_ints("output_padding"));
  SOD2_ATTR(a.output_shape, node.attrs.get_ints("output_shape"));
  if (a.group <= 0) return invalid_argument("ConvTranspose: group must be positive");
  return std::unique_ptr<Kernel>(new ConvTransposeKernel(std::move(a)));
}

}  // namespace sod2::rt
