// Dropout. In inference (the usual case) the output is the input and the optional mask is all
// ones (true). Training mode zeroes each element with probability `ratio` and scales the rest by
// 1 / (1 - ratio):
//   - opset 12 on: when the optional training_mode input is true; ratio is the optional input 1
//     (default 0.5), the random seed the optional `seed` attribute.
//   - opset 1 to 11: never. Opsets 1 to 6 define training by is_test = 0, its default, but this is
//     an inference runtime and exporters of that era often left is_test unset on models meant
//     for inference: reading the default literally would make their outputs random.
// The mask is bool from opset 10, of the input's type before.
//
// The random numbers follow numpy's legacy generator (MT19937 seeded like np.random.seed, then
// uniform doubles from 53 random bits), which ONNX's reference implementation uses: a seeded
// node gives the same mask as the reference, and the same mask every run. Without a seed each
// run draws a fresh one.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "runtime/kernels/math/math_common.h"
#include "runtime/kernels/math/numpy_random.h"

namespace sod2::rt::math {
namespace {

struct DropoutConfig {
  bool mask_is_bool = true;  // opset 10 on; the input's type before
  bool ratio_input = false;  // opset 12 on: ratio and training_mode are inputs
  float ratio_attr = 0.5f;
  bool has_seed = false;
  int64_t seed = 0;
};

class DropoutKernel final : public Kernel {
 public:
  DropoutKernel(DropoutConfig cfg, bool mask_output)
      : cfg_(cfg), mask_output_(mask_output), fresh_seeds_(this) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalid_argument("Dropout: input is missing");
    bool training = false;
    double ratio = cfg_.ratio_attr;
    if (cfg_.ratio_input) {
      SOD2_RETURN_IF_ERROR(read_training_mode(ctx.input(2), &training));
      // The ratio only matters in training mode (it may be any float type otherwise).
      if (training) SOD2_RETURN_IF_ERROR(read_ratio(ctx.input(1), &ratio));
    }
    if (training && !(ratio >= 0 && ratio < 1)) {
      return invalid_argument("Dropout: ratio must be in [0, 1) in training mode, got " +
                              std::to_string(ratio));
    }
    if (!training || ratio == 0) return copy_through(ctx, *x);
    return visit_dtype("Dropout", x->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsFloat<T>) {
        return drop<T>(ctx, *x, ratio);
      } else {
        return unsupported(std::string("Dropout: training mode on ") + dtype_name(x->dtype) +
                           " is not supported (float or double)");
      }
    });
  }

 private:
  static Status read_training_mode(const Tensor* t, bool* out) {
    *out = false;
    if (!t) return Status::ok_status();
    if (t->dtype != DType::kBool || t->numel() != 1) {
      return invalid_argument("Dropout: training_mode should be one bool, not " +
                              std::string(dtype_name(t->dtype)) + " " + t->shape.to_string());
    }
    *out = *t->as<const uint8_t>() != 0;
    return Status::ok_status();
  }

  static Status read_ratio(const Tensor* t, double* out) {
    if (!t) return Status::ok_status();  // default 0.5 (from the config)
    if (t->numel() != 1) {
      return invalid_argument("Dropout: ratio should hold one value, not " + t->shape.to_string());
    }
    if (t->dtype == DType::kFloat) {
      *out = *t->as<const float>();
    } else if (t->dtype == DType::kDouble) {
      *out = *t->as<const double>();
    } else {
      return unsupported(std::string("Dropout: ratio of type ") + dtype_name(t->dtype) +
                         " is not supported (float or double)");
    }
    return Status::ok_status();
  }

  // Inference (or ratio 0): y = x, mask all ones.
  Status copy_through(KernelContext& ctx, const Tensor& x) {
    if (dtype_size(x.dtype) == 0) {
      return unsupported(std::string("Dropout: element type ") + dtype_name(x.dtype) +
                         " is not supported");
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x.dtype, x.shape));
    if (x.bytes() > 0 && y->data != x.data) std::memcpy(y->data, x.data, x.bytes());
    if (!mask_output_) return Status::ok_status();
    const DType mask_type = cfg_.mask_is_bool ? DType::kBool : x.dtype;
    SOD2_ASSIGN_OR_RETURN(Tensor * mask, ctx.output(1, mask_type, x.shape));
    const int64_t n = x.numel();
    switch (mask_type) {
      case DType::kFloat16:
        std::fill_n(mask->as<uint16_t>(), n, uint16_t{0x3C00});  // 1.0 in IEEE half
        return Status::ok_status();
      case DType::kBFloat16:
        std::fill_n(mask->as<uint16_t>(), n, uint16_t{0x3F80});  // 1.0 in bfloat16
        return Status::ok_status();
      default:
        return visit_dtype("Dropout", mask_type, [&]<class T>(Tag<T>) -> Status {
          std::fill_n(mask->as<T>(), n, T(1));
          return Status::ok_status();
        });
    }
  }

  template <class T>
  Status drop(KernelContext& ctx, const Tensor& x, double ratio) {
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x.dtype, x.shape));
    Tensor* mask = nullptr;
    if (mask_output_) {
      SOD2_ASSIGN_OR_RETURN(mask,
                            ctx.output(1, cfg_.mask_is_bool ? DType::kBool : x.dtype, x.shape));
    }
    // The seed: the attribute's low 32 bits (numpy's range), or a fresh one per run.
    NumpyRandom gen(cfg_.has_seed ? static_cast<uint32_t>(static_cast<uint64_t>(cfg_.seed))
                                  : fresh_seeds_.next());
    // Like the reference: keep where u >= ratio, y = keep * x * scale in T.
    const T scale = static_cast<T>(T(1) / (T(1) - static_cast<T>(ratio)));
    const T* in = x.as<const T>();
    T* out = y->as<T>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = gen.uniform() >= ratio;
      out[i] = static_cast<T>(keep ? 1 : 0) * in[i] * scale;
      if (mask) {
        if (cfg_.mask_is_bool) {
          mask->as<uint8_t>()[i] = keep ? 1 : 0;
        } else {
          mask->as<T>()[i] = keep ? T(1) : T(0);
        }
      }
    }
    return Status::ok_status();
  }

  DropoutConfig cfg_;
  bool mask_output_;
  FreshSeeds fresh_seeds_;
};

Expected<std::unique_ptr<Kernel>> dropout_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 1));
  if (node.num_outputs > 2)
    return invalid_model("Dropout: " + std::to_string(node.num_outputs) + " outputs, at most 2");
  DropoutConfig cfg;
  cfg.mask_is_bool = node.opset >= 10;
  cfg.ratio_input = node.opset >= 12;
  if (!cfg.ratio_input) {
    SOD2_ASSIGN_OR_RETURN(cfg.ratio_attr, node.attrs.get_float("ratio", 0.5f));
  }
  if (node.attrs.has("seed")) {
    SOD2_ASSIGN_OR_RETURN(cfg.seed, node.attrs.get_int("seed", 0));
    cfg.has_seed = true;
  }
  return std::unique_ptr<Kernel>(std::make_unique<DropoutKernel>(cfg, node.num_outputs > 1));
}

}  // namespace

void register_dropout(KernelRegistry& r) { r.add("", "Dropout", 1, &dropout_factory); }

}  // namespace sod2::rt::math
