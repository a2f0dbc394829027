// BitwiseAnd, BitwiseOr, BitwiseXor (numpy broadcasting) and BitwiseNot, opset 18, on the integer
// types.
#include <memory>
#include <string>

#include "runtime/kernels/math/broadcast.h"
#include "runtime/kernels/math/math_common.h"

namespace sod2::rt::math {
namespace {

enum class Bitwise { kAnd, kOr, kXor, kNot };

const char* bitwise_name(Bitwise op) {
  switch (op) {
    case Bitwise::kAnd: return "BitwiseAnd";
    case Bitwise::kOr: return "BitwiseOr";
    case Bitwise::kXor: return "BitwiseXor";
    case Bitwise::kNot: return "BitwiseNot";
  }
  return "Bitwise";
}

template <class T>
T apply(Bitwise op, T a, T b) {
  switch (op) {
    case Bitwise::kAnd: return static_cast<T>(a & b);
    case Bitwise::kOr: return static_cast<T>(a | b);
    case Bitwise::kXor: return static_cast<T>(a ^ b);
    case Bitwise::kNot: return static_cast<T>(~a);
  }
  return a;
}

class BitwiseKernel final : public Kernel {
 public:
  explicit BitwiseKernel(Bitwise op) : op_(op) {}

  Status run(KernelContext& ctx) override {
    const char* name = bitwise_name(op_);
    const Tensor* a = ctx.input(0);
    const Tensor* b = op_ == Bitwise::kNot ? a : ctx.input(1);
    if (!a || !b) return invalid_argument(std::string(name) + ": missing input");
    if (a->dtype != b->dtype)
      return invalid_argument(std::string(name) + ": inputs of types " + dtype_name(a->dtype) +
                              " and " + dtype_name(b->dtype) + " differ");
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(broadcast_shapes(name, a->shape, b->shape, &out_shape));
    return visit_dtype(name, a->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (!kIsInt<T>) {
        return unsupported_dtype(name, a->dtype);
      } else {
        SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, a->dtype, out_shape));
        if (y->numel() == 0) return Status::ok_status();
        const Shape* ins[2] = {&a->shape, &b->shape};
        const BroadcastPlan p = plan_broadcast(out_shape, ins, 2);
        const T* pa = a->as<T>();
        const T* pb = b->as<T>();
        T* out = y->as<T>();
        const Bitwise op = op_;
        ctx.pool().parallel_for(p.numel, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
          for_each_row(p, lo, hi, [&](int64_t o, const int64_t* off, int64_t n) {
            const int64_t sa = p.inner_stride(0), sb = p.inner_stride(1);
            for (int64_t i = 0; i < n; ++i)
              out[o + i] = apply(op, pa[off[0] + i * sa], pb[off[1] + i * sb]);
          });
        });
        return Status::ok_status();
      }
    });
  }

 private:
  Bitwise op_;
};

template <Bitwise op>
Expected<std::unique_ptr<Kernel>> bitwise_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, op == Bitwise::kNot ? 1 : 2));
  return std::unique_ptr<Kernel>(std::make_unique<BitwiseKernel>(op));
}

}  // namespace

void register_bitwise(KernelRegistry& r) {
  r.add("", "BitwiseAnd", 18, bitwise_factory<Bitwise::kAnd>);
  r.add("", "BitwiseOr", 18, bitwise_factory<Bitwise::kOr>);
  r.add("", "BitwiseXor", 18, bitwise_factory<Bitwise::kXor>);
  r.add("", "BitwiseNot", 18, bitwise_factory<Bitwise::kNot>);
}

}  // namespace sod2::rt::math
