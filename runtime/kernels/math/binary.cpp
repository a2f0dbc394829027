// Binary elementwise ops with numpy broadcasting: arithmetic, Pow, Mod, BitShift, comparisons,
// logic and PRelu. Before opset 7 the arithmetic, comparison and logic ops used ONNX's legacy
// broadcast (B aligned to A at `axis`, only with broadcast=1); those opsets get a factory that
// maps B's shape onto numpy rules. float16/bfloat16 inputs of the ops defined on float are
// computed in float and rounded back (half_float.h).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>

#include "runtime/kernels/math/elementwise.h"
#include "runtime/kernels/math/half_float.h"
#include "runtime/kernels/math/vec_kernels.h"

namespace sod2::rt::math {
namespace {

// Integer arithmetic in a wide unsigned type wraps around instead of overflowing (UB).
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < 4), uint32_t, std::make_unsigned_t<T>>;

template <class T>
T wrap_add(T a, T b) {
  if constexpr (kIsInt<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrap_sub(T a, T b) {
  if constexpr (kIsInt<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (kIsInt<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}

// Integer division truncates toward zero like C; division by zero gives 0 rather than a trap,
// and MIN / -1 wraps.
template <class T>
T int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrap_sub<T>(0, a);
  }
  return static_cast<T>(a / b);
}

struct AddOp {
  static constexpr const char* kName = "Add";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T a, T b) const {
    return wrap_add(a, b);
  }
};
struct SubOp {
  static constexpr const char* kName = "Sub";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T a, T b) const {
    return wrap_sub(a, b);
  }
};
struct MulOp {
  static constexpr const char* kName = "Mul";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T a, T b) const {
    return wrap_mul(a, b);
  }
};
struct DivOp {
  static constexpr const char* kName = "Div";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  template <class T>
  T apply(T a, T b) const {
    if constexpr (kIsInt<T>) {
      return int_div(a, b);
    } else {
      return a / b;
    }
  }
};

// fmod=1: the remainder has the dividend's sign (C fmod / %); fmod=0: the divisor's (Python).
struct ModOp {
  static constexpr const char* kName = "Mod";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsNumeric<T>;
  bool fmod = false;
  template <class T>
  T apply(T a, T b) const {
    if constexpr (kIsFloat<T>) {
      T r = std::fmod(a, b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    } else {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;  // MIN % -1 traps on x86
      }
      T r = static_cast<T>(a % b);
      if constexpr (std::is_signed_v<T>) {
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      }
      return r;
    }
  }
};

struct BitShiftOp {
  static constexpr const char* kName = "BitShift";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsInt<T>&& std::is_unsigned_v<T>;
  bool left = true;
  template <class T>
  T apply(T a, T b) const {
    // Shifting by the width or more is UB in C++; ONNX (numpy) gives 0.
    if (b >= static_cast<T>(sizeof(T) * 8)) return 0;
    return static_cast<T>(left ? static_cast<WrapType<T>>(a) << b : a >> b);
  }
};

#define SOD2_COMPARE_OP(NAME, STR, EXPR, BOOL_OK)                 \
  struct NAME {                                                   \
    static constexpr const char* kName = STR;                     \
    static constexpr bool kBoolOut = true;                        \
    template <class T>                                            \
    static constexpr bool kSupports = kIsNumeric<T> || (BOOL_OK); \
    template <class T>                                            \
    bool apply(T a, T b) const {                                  \
      return EXPR;                                                \
    }                                                             \
  };
SOD2_COMPARE_OP(EqualOp, "Equal", a == b, true)
SOD2_COMPARE_OP(GreaterOp, "Greater", a > b, false)
SOD2_COMPARE_OP(GreaterOrEqualOp, "GreaterOrEqual", a >= b, false)
SOD2_COMPARE_OP(LessOp, "Less", a < b, false)
SOD2_COMPARE_OP(LessOrEqualOp, "LessOrEqual", a <= b, false)
#undef SOD2_COMPARE_OP

#define SOD2_LOGIC_OP(NAME, STR, EXPR)                         \
  struct NAME {                                                \
    static constexpr const char* kName = STR;                  \
    static constexpr bool kBoolOut = true;                     \
    template <class T>                                         \
    static constexpr bool kSupports = std::is_same_v<T, bool>; \
    template <class T>                                         \
    bool apply(T a, T b) const {                               \
      return EXPR;                                             \
    }                                                          \
  };
SOD2_LOGIC_OP(AndOp, "And", a&& b)
SOD2_LOGIC_OP(OrOp, "Or", a || b)
SOD2_LOGIC_OP(XorOp, "Xor", a != b)
#undef SOD2_LOGIC_OP

struct PReluOp {
  static constexpr const char* kName = "PRelu";
  static constexpr bool kBoolOut = false;
  template <class T>
  static constexpr bool kSupports = kIsSignedNumeric<T>;
  template <class T>
  T apply(T x, T slope) const {
    return x < 0 ? wrap_mul(x, slope) : x;
  }
};

// Opsets 1-6: B broadcasts onto A only with broadcast=1, aligned at `axis` (or at the end).
struct LegacyBroadcast {
  bool enabled = false;
  bool broadcast = false;
  bool has_axis = false;
  int64_t axis = 0;
};

Status legacy_b_shape(const char* op, const LegacyBroadcast& lb, const Shape& a, const Shape& b,
                      Shape* out) {
  *out = b;
  if (!lb.broadcast) {
    if (!(a == b)) {
      return invalid_argument(std::string(op) + ": shapes " + a.to_string() + " and " +
                              b.to_string() + " differ and the node does not set broadcast=1");
    }
    return Status::ok_status();
  }
  if (!lb.has_axis) return Status::ok_status();
  int axis = 0;
  SOD2_RETURN_IF_ERROR(normalize_axis(op, lb.axis, a.rank(), &axis));
  if (axis + b.rank() > a.rank()) {
    return invalid_argument(std::string(op) + ": shape " + b.to_string() + " does not fit into " +
                            a.to_string() + " at axis " + std::to_string(axis));
  }
  // B covers dims [axis, axis + rank(B)) of A: pad it with trailing ones.
  for (int i = axis + b.rank(); i < a.rank(); ++i) out->push_back(1);
  return Status::ok_status();
}

// The vectorised float loop of an op (vec_kernels.h), where it has one.
template <class Op>
inline constexpr int kFastF32 = -1;
template <>
inline constexpr int kFastF32<AddOp> = static_cast<int>(BinaryF32::kAdd);
template <>
inline constexpr int kFastF32<SubOp> = static_cast<int>(BinaryF32::kSub);
template <>
inline constexpr int kFastF32<MulOp> = static_cast<int>(BinaryF32::kMul);
template <>
inline constexpr int kFastF32<DivOp> = static_cast<int>(BinaryF32::kDiv);

// out = a op b over a two-input plan with the vectorised float loops. Each parallel chunk of the
// output is cut into runs of whole rows of the innermost dim that lie in one block of the next
// dim (so one call covers e.g. every row of [s, s] scores against a [1, s] mask row, or every
// [d] row against a bias), with partial rows at the chunk's ends.
void run_binary_f32(ThreadPool& pool, const BroadcastPlan& p, BinaryF32 op, const float* a,
                    const float* b, float* out) {
  const int last = p.rank - 1;
  const int64_t n = p.dims[last];
  const int64_t sa = p.strides[0][last], sb = p.strides[1][last];
  const int64_t m = last > 0 ? p.dims[last - 1] : 1;
  const int64_t ra = last > 0 ? p.strides[0][last - 1] : 0;
  const int64_t rb = last > 0 ? p.strides[1][last - 1] : 0;
  pool.parallel_for(p.numel, kVecGrain, [&](int64_t begin, int64_t end) {
    int64_t pos = begin;
    while (pos < end) {
      const int64_t row = pos / n, col = pos % n;
      const int64_t i = row % m;
      int64_t rest = row / m, oa = i * ra + col * sa, ob = i * rb + col * sb;
      for (int d = last - 2; d >= 0; --d) {
        const int64_t c = rest % p.dims[d];
        rest /= p.dims[d];
        oa += c * p.strides[0][d];
        ob += c * p.strides[1][d];
      }
      if (col != 0 || end - pos < n) {
        const int64_t count = std::min(n - col, end - pos);
        binary_rows_f32(op, out + pos, a + oa, 0, sa, b + ob, 0, sb, 1, count);
        pos += count;
      } else {
        const int64_t rows = std::min(m - i, (end - pos) / n);
        binary_rows_f32(op, out + pos, a + oa, ra, sa, b + ob, rb, sb, rows, n);
        pos += rows * n;
      }
    }
  });
}

// Whether `Op` runs on element type T: its own types, and float16/bfloat16 through float.
template <class Op, class T>
inline constexpr bool kBinarySupports = [] {
  if constexpr (kIsNarrowFloat<T>) {
    return Op::template kSupports<float>;
  } else {
    return Op::template kSupports<T>;
  }
}();

template <class Op>
class BinaryKernel final : public Kernel {
 public:
  // `constants`: a bit per input slot that is a program constant. `blockable`: the node may keep
  // channel-blocked values (a float arithmetic op with numpy broadcasting).
  BinaryKernel(Op op, LegacyBroadcast legacy, bool output_is_a_shape, uint32_t constants,
               bool blockable)
      : op_(op),
        legacy_(legacy),
        output_is_a_shape_(output_is_a_shape),
        constants_(constants),
        blockable_(blockable) {}

  // A constant of rank above 4 would give a value that is not [N, C, H, W].
  Status prepare(std::span<const Tensor* const> constants) override {
    for (const Tensor* t : constants)
      if (t && t->shape.rank() > 4) blockable_ = false;
    return Status::ok_status();
  }

  // Either operand may arrive channel-blocked and the output may be written so, as long as a
  // blocked operand fixes its channels: a squeeze-excitation scale or an unfused residual Add
  // then sits between blocked convolutions. One whose reader wants NCHW converts on the way
  // (element by element: correct, not fast). Constant operands (a per-channel scale or shift)
  // are read NCHW.
  BlockedIo blocked_io(int block) const override {
    BlockedIo io;
    const uint32_t computed = ~constants_ & 3u;
    if (!blockable_ || block <= 0 || computed == 0) return io;
    io.inputs = io.narrow_inputs = computed;
    io.follows = computed;
    io.output = io.narrow_output = true;
    return io;
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    blocked_inputs_ = static_cast<uint32_t>(inputs & 3);
    output_blocked_ = output;
    block_ = blocked_inputs_ != 0 || output ? block : 0;
  }

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalid_argument(std::string(Op::kName) + ": needs two inputs");
    if (a->dtype != b->dtype) {
      return invalid_argument(std::string(Op::kName) + ": inputs have different types " +
                              dtype_name(a->dtype) + " and " + dtype_name(b->dtype));
    }
    if (block_ > 0) return run_blocked(ctx, *a, *b);
    return run_plain(ctx, a, b);
  }

 private:
  Status run_plain(KernelContext& ctx, const Tensor* a, const Tensor* b) {
    Shape b_shape = b->shape;
    if (legacy_.enabled)
      SOD2_RETURN_IF_ERROR(legacy_b_shape(Op::kName, legacy_, a->shape, b->shape, &b_shape));
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(broadcast_shapes(Op::kName, a->shape, b_shape, &out_shape));
    if (output_is_a_shape_ && !(out_shape == a->shape)) {
      return invalid_argument(std::string(Op::kName) + ": shape " + b->shape.to_string() +
                              " does not broadcast to " + a->shape.to_string());
    }
    const Shape* in_shapes[2] = {&a->shape, &b_shape};
    return visit_dtype_narrow(Op::kName, a->dtype, [&]<class T>(Tag<T>) -> Status {
      if constexpr (kIsNarrowFloat<T> && kBinarySupports<Op, T>) {
        using TO = std::conditional_t<Op::kBoolOut, bool, T>;
        const DType out_dtype = Op::kBoolOut ? DType::kBool : a->dtype;
        SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, out_dtype, out_shape));
        if (out_shape.numel() == 0) return Status::ok_status();
        const BroadcastPlan plan = plan_broadcast(out_shape, in_shapes, 2);
        const Op op = op_;
        run_binary(ctx.pool(), plan, a->as<const T>(), b->as<const T>(), out->as<TO>(),
                   [op](T x, T y) -> TO {
                     const auto r = op.template apply<float>(to_float(x), to_float(y));
                     if constexpr (Op::kBoolOut) {
                       return r;
                     } else {
                       return narrow_from<T>(r);
                     }
                   });
        return Status::ok_status();
      } else if constexpr (Op::template kSupports<T>) {
        using TO = std::conditional_t<Op::kBoolOut, bool, T>;
        const DType out_dtype = Op::kBoolOut ? DType::kBool : a->dtype;
        SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, out_dtype, out_shape));
        if (out_shape.numel() == 0) return Status::ok_status();
        const BroadcastPlan plan = plan_broadcast(out_shape, in_shapes, 2);
        if constexpr (std::is_same_v<T, float> && kFastF32<Op> >= 0) {
          run_binary_f32(ctx.pool(), plan, static_cast<BinaryF32>(kFastF32<Op>),
                         a->as<const float>(), b->as<const float>(), out->as<float>());
          return Status::ok_status();
        }
        const Op op = op_;
        run_binary(ctx.pool(), plan, a->as<const T>(), b->as<const T>(), out->as<TO>(),
                   [op](T x, T y) { return static_cast<TO>(op.template apply<T>(x, y)); });
        return Status::ok_status();
      } else {
        return unsupported_dtype(Op::kName, a->dtype);
      }
    });
  }

  Status run_blocked(KernelContext& ctx, const Tensor& a, const Tensor& b) {
    if constexpr (kFastF32<Op> >= 0) {
      Shape out_shape;
      SOD2_RETURN_IF_ERROR(broadcast_shapes(Op::kName, a.shape, b.shape, &out_shape));
      const Tensor* in[2] = {&a, &b};
      bool blocked_right = a.dtype == DType::kFloat && b.dtype == DType::kFloat;
      for (int k = 0; k < 2; ++k)
        if ((blocked_inputs_ >> k) & 1)
          blocked_right = blocked_right && in[k]->shape.rank() == 4 &&
                          in[k]->shape[1] == out_shape[out_shape.rank() - 3];
      if (!blocked_right)
        return internal_error(std::string(Op::kName) + ": inputs " + a.shape.to_string() + " and " +
                              b.shape.to_string() + " cannot be held in channel blocks of " +
                              std::to_string(block_));
      if (out_shape.rank() != 4) {
        // A plain operand of higher rank: NCHW copies of the blocked ones, then the plain walk.
        if (output_blocked_)
          return internal_error(std::string(Op::kName) + ": output " + out_shape.to_string() +
                                " cannot be held in channel blocks");
        Tensor plain[2] = {a, b};
        for (int k = 0; k < 2; ++k) {
          if (!((blocked_inputs_ >> k) & 1)) continue;
          SOD2_ASSIGN_OR_RETURN(void* copy, ctx.scratch(in[k]->bytes()));
          unblock_copy(*in[k], static_cast<float*>(copy));
          plain[k].data = copy;
        }
        return run_plain(ctx, &plain[0], &plain[1]);
      }
      SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kFloat, out_shape));
      if (out_shape.numel() == 0) return Status::ok_status();
      const Shape* in_shapes[2] = {&a.shape, &b.shape};
      // Whole blocks walk all images at once; a narrow last block (kernel.h) makes each image's
      // whole blocks and its narrow one parts of their own.
      const int64_t images = out_shape[0], channels = out_shape[1];
      const int64_t plane = out_shape[2] * out_shape[3], whole = channels / block_ * block_;
      auto run_part = [&](const BlockedPart& part) {
        int64_t off[2];
        const BroadcastPlan plan = plan_broadcast_blocked(out_shape, in_shapes, 2, blocked_inputs_,
                                                          output_blocked_, block_, part, off);
        run_binary_f32(ctx.pool(), plan, static_cast<BinaryF32>(kFastF32<Op>),
                       a.as<const float>() + off[0], b.as<const float>() + off[1],
                       out->as<float>() + (part.image * channels + part.first) * plane);
      };
      if (whole == channels) {
        run_part(BlockedPart{0, images, 0, channels});
        return Status::ok_status();
      }
      for (int64_t img = 0; img < images; ++img) {
        if (whole > 0) run_part(BlockedPart{img, 1, 0, whole});
        run_part(BlockedPart{img, 1, whole, channels - whole});
      }
      return Status::ok_status();
    } else {
      return internal_error(std::string(Op::kName) + " cannot hold channel-blocked values");
    }
  }

  // A blocked [N, C, H, W] float tensor's values in NCHW order.
  void unblock_copy(const Tensor& t, float* out) const {
    const int64_t n = t.shape[0], c = t.shape[1], plane = t.shape[2] * t.shape[3];
    const float* x = t.as<const float>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t p = 0; p < plane; ++p)
          out[(i * c + ch) * plane + p] =
              x[(i * c + ch / block_ * block_) * plane +
                p * held_block_width(block_, c, ch / block_ * block_) + ch % block_];
  }

  Op op_;
  LegacyBroadcast legacy_;
  bool output_is_a_shape_;
  uint32_t constants_;
  bool blockable_;
  int block_ = 0;  // channels per block where an operand or the output is held blocked
  uint32_t blocked_inputs_ = 0;
  bool output_blocked_ = false;
};

// Checks a known input dtype at load time so an unsupported model fails early.
template <class Op>
Status check_dtype(DType t) {
  if (t == DType::kUndefined) return Status::ok_status();
  return visit_dtype_narrow(Op::kName, t, [&]<class T>(Tag<T>) -> Status {
    if constexpr (kBinarySupports<Op, T>) {
      return Status::ok_status();
    } else {
      return unsupported_dtype(Op::kName, t);
    }
  });
}

template <class Op>
Expected<std::unique_ptr<Kernel>> make_binary(const NodeInfo& node, Op op, bool legacy) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  SOD2_RETURN_IF_ERROR(check_dtype<Op>(node.input_dtypes[0]));
  LegacyBroadcast lb;
  if (legacy) {
    lb.enabled = true;
    SOD2_ASSIGN_OR_RETURN(int64_t broadcast, node.attrs.get_int("broadcast", 0));
    lb.broadcast = broadcast != 0;
    lb.has_axis = node.attrs.has("axis");
    SOD2_ASSIGN_OR_RETURN(lb.axis, node.attrs.get_int("axis", 0));
  }
  const bool output_is_a_shape = std::is_same_v<Op, PReluOp>;
  uint32_t constants = 0;
  for (size_t i = 0; i < 2 && i < node.input_constant.size(); ++i)
    if (node.input_constant[i]) constants |= 1u << i;
  const bool blockable = kFastF32<Op> >= 0 && !legacy && node.input_dtypes[0] == DType::kFloat;
  return std::unique_ptr<Kernel>(
      std::make_unique<BinaryKernel<Op>>(op, lb, output_is_a_shape, constants, blockable));
}

template <class Op, bool kLegacy>
Expected<std::unique_ptr<Kernel>> binary_factory(const NodeInfo& node) {
  return make_binary(node, Op{}, kLegacy);
}

Expected<std::unique_ptr<Kernel>> mod_factory(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t fmod, node.attrs.get_int("fmod", 0));
  ModOp op;
  op.fmod = fmod != 0;
  return make_binary(node, op, false);
}

Expected<std::unique_ptr<Kernel>> bitshift_factory(const NodeInfo& node) {
  std::string dir;
  SOD2_RETURN_IF_ERROR(get_string_attr(node, "direction", "", &dir));
  if (dir != "LEFT" && dir != "RIGHT")
    return invalid_model("BitShift: direction should be LEFT or RIGHT, not '" + dir + "'");
  BitShiftOp op;
  op.left = dir == "LEFT";
  return make_binary(node, op, false);
}

// ---- Pow: the exponent may have another type than the base (opset 12+): any numeric type.
// float16/bfloat16 bases and exponents are computed in float.

// float for float16/bfloat16, the value itself otherwise.
template <class T>
auto widen(T v) {
  if constexpr (kIsNarrowFloat<T>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <class TB, class TE>
TB pow_value(TB base, TE e) {
  if constexpr (kIsNarrowFloat<TB>) {
    return narrow_from<TB>(std::pow(to_float(base), static_cast<float>(widen(e))));
  } else if constexpr (kIsNarrowFloat<TE>) {
    return pow_value<TB, float>(base, to_float(e));
  } else if constexpr (kIsFloat<TB>) {
    return std::pow(base, static_cast<TB>(e));
  } else if constexpr (kIsFloat<TE>) {
    // Integer base, float exponent: computed in double, truncated like a cast.
    const double r = std::pow(static_cast<double>(base), static_cast<double>(e));
    return std::isfinite(r) ? static_cast<TB>(r) : TB{0};
  } else {
    if constexpr (std::is_signed_v<TE>) {
      if (e < 0) {
        // |base| > 1 gives a fraction that truncates to 0.
        if (base == 1) return 1;
        if constexpr (std::is_signed_v<TB>) {
          if (base == -1) return (e % 2 == 0) ? 1 : -1;
        }
        return 0;
      }
    }
    TB result = 1;
    auto exp = static_cast<std::make_unsigned_t<TE>>(e);
    while (exp) {
      if (exp & 1) result = wrap_mul(result, base);
      base = wrap_mul(base, base);
      exp >>= 1;
    }
    return result;
  }
}

template <class T>
inline constexpr bool kPowBaseType =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, int64_t> || kIsNarrowFloat<T>;
template <class T>
inline constexpr bool kPowExponentType = kIsNumeric<T> || kIsNarrowFloat<T>;

class PowKernel final : public Kernel {
 public:
  explicit PowKernel(LegacyBroadcast legacy) : legacy_(legacy) {}

  Status run(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalid_argument("Pow: needs two inputs");
    Shape b_shape = b->shape;
    if (legacy_.enabled)
      SOD2_RETURN_IF_ERROR(legacy_b_shape("Pow", legacy_, a->shape, b->shape, &b_shape));
    Shape out_shape;
    SOD2_RETURN_IF_ERROR(broadcast_shapes("Pow", a->shape, b_shape, &out_shape));
    const Shape* in_shapes[2] = {&a->shape, &b_shape};
    return visit_dtype_narrow("Pow", a->dtype, [&]<class TB>(Tag<TB>) -> Status {
      if constexpr (kPowBaseType<TB>) {
        return visit_dtype_narrow("Pow (exponent)", b->dtype, [&]<class TE>(Tag<TE>) -> Status {
          if constexpr (kPowExponentType<TE>) {
            SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, a->dtype, out_shape));
            if (out_shape.numel() == 0) return Status::ok_status();
            return compute<TB, TE>(ctx, *a, *b, in_shapes, out);
          } else {
            return unsupported_dtype("Pow (exponent)", b->dtype);
          }
        });
      } else {
        return unsupported_dtype("Pow", a->dtype);
      }
    });
  }

 private:
  template <class TB, class TE>
  Status compute(KernelContext& ctx, const Tensor& a, const Tensor& b, const Shape* const* shapes,
                 Tensor* out) {
    const TB* x = a.as<const TB>();
    TB* y = out->as<TB>();
    // A scalar exponent of 2, 0.5 or 1 (common in normalisation layers) avoids pow() per element.
    if constexpr (kIsFloat<TB>) {
      if (b.numel() == 1 && out->shape == a.shape) {
        const double e = static_cast<double>(widen(*b.as<const TE>()));
        const int64_t n = a.numel();
        if (e == 2) {
          run_unary(ctx.pool(), n, x, y, [](TB v) { return v * v; });
          return Status::ok_status();
        }
        if (e == 1) {
          run_unary(ctx.pool(), n, x, y, [](TB v) { return v; });
          return Status::ok_status();
        }
        if (e == 0.5) {
          run_unary(ctx.pool(), n, x, y, [](TB v) { return std::sqrt(v); });
          return Status::ok_status();
        }
      }
    }
    const BroadcastPlan plan = plan_broadcast(out->shape, shapes, 2);
    run_binary(
        ctx.pool(), plan, x, b.as<const TE>(), y,
        [](TB v, TE e) { return pow_value<TB, TE>(v, e); }, kTranscendentalGrain);
    return Status::ok_status();
  }

  LegacyBroadcast legacy_;
};

template <bool kLegacy>
Expected<std::unique_ptr<Kernel>> pow_factory(const NodeInfo& node) {
  SOD2_RETURN_IF_ERROR(require_inputs(node, 2));
  LegacyBroadcast lb;
  if (kLegacy) {
    lb.enabled = true;
    SOD2_ASSIGN_OR_RETURN(int64_t broadcast, node.attrs.get_int("broadcast", 0));
    lb.broadcast = broadcast != 0;
    lb.has_axis = node.attrs.has("axis");
    SOD2_ASSIGN_OR_RETURN(lb.axis, node.attrs.get_int("axis", 0));
  }
  return std::unique_ptr<Kernel>(std::make_unique<PowKernel>(lb));
}

template <class Op>
void add_with_legacy(KernelRegistry& r, const char* name) {
  r.add("", name, 1, &binary_factory<Op, true>);
  r.add("", name, 7, &binary_factory<Op, false>);
}

}  // namespace

void register_binary(KernelRegistry& r) {
  add_with_legacy<AddOp>(r, "Add");
  add_with_legacy<SubOp>(r, "Sub");
  add_with_legacy<MulOp>(r, "Mul");
  add_with_legacy<DivOp>(r, "Div");
  add_with_legacy<EqualOp>(r, "Equal");
  add_with_legacy<GreaterOp>(r, "Greater");
  add_with_legacy<LessOp>(r, "Less");
  add_with_legacy<AndOp>(r, "And");
  add_with_legacy<OrOp>(r, "Or");
  add_with_legacy<XorOp>(r, "Xor");
  r.add("", "GreaterOrEqual", 12, &binary_factory<GreaterOrEqualOp, false>);
  r.add("", "LessOrEqual", 12, &binary_factory<LessOrEqualOp, false>);
  r.add("", "Pow", 1, &pow_factory<true>);
  r.add("", "Pow", 7, &pow_factory<false>);
  r.add("", "Mod", 10, &mod_factory);
  r.add("", "BitShift", 11, &bitshift_factory);
  // PRelu-1 and -6 (Caffe style): a 1-D slope of X's channel count runs along axis 1 ([C]
  // against [N, C, ...]); other slopes, and every slope from opset 7, broadcast onto X
  // unidirectionally.
  r.add("", "PRelu", 1, [](const NodeInfo& node) -> Expected<std::unique_ptr<Kernel>> {
    // Views a [C] slope as [C, 1, ...] and runs the opset-7 kernel on it.
    class ChannelSlope final : public Kernel, public OutputAllocator {
     public:
      explicit ChannelSlope(std::unique_ptr<Kernel> inner) : inner_(std::move(inner)) {}
      Status run(KernelContext& ctx) override {
        const Tensor* x = ctx.input(0);
        const Tensor* slope = ctx.input(1);
        if (!x || !slope || slope->shape.rank() != 1 || x->shape.rank() < 3 ||
            slope->shape[0] == 1 || slope->shape[0] != x->shape[1])
          return inner_->run(ctx);
        Tensor s = *slope;
        s.shape.set_rank(x->shape.rank() - 1);  // the new trailing dims are 1
        const Tensor* inputs[2] = {x, &s};
        outer_ = &ctx;
        KernelContext inner_ctx(inputs, this, &ctx.pool());
        return inner_->run(inner_ctx);
      }
      Expected<Tensor*> output(size_t i, DType t, const Shape& shape) override {
        return outer_->output(i, t, shape);
      }
      Expected<void*> scratch(size_t bytes) override { return outer_->scratch(bytes); }

     private:
      std::unique_ptr<Kernel> inner_;
      KernelContext* outer_ = nullptr;
    };
    SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> inner, make_binary(node, PReluOp{}, false));
    return std::unique_ptr<Kernel>(new ChannelSlope(std::move(inner)));
  });
  r.add("", "PRelu", 7, &binary_factory<PReluOp, false>);
}

}  // namespace sod2::rt::math
