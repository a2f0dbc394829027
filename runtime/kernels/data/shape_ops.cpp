// Ops that make tensors from shapes or attributes: Shape, Size, ConstantOfShape, Range, Constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

// Shape and Size read only the shape: any element type, strings included, and a value held in
// channel blocks (kernel.h), whose shape is its NCHW shape still, so that a feature map whose
// size a graph reads (an upsample to its size, anchors per feature map) stays blocked.
BlockedIo reads_only_shape(int block) {
  BlockedIo io;
  if (block > 0) io.inputs = io.narrow_inputs = uint64_t{1};
  return io;
}

class ShapeKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  BlockedIo blocked_io(int block) const override { return reads_only_shape(block); }
  ShapeKernel(int64_t start, int64_t end) : start_(start), end_(end) {}

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Shape: missing input");
    const int64_t rank = data->shape.rank();
    // Shape-15 clamps start and end to [0, rank] after wrapping negatives once.
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_), end = clamp(end_);
    const int64_t n = std::max<int64_t>(end - start, 0);
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kInt64, Shape{n}));
    for (int64_t i = 0; i < n; ++i)
      out->as<int64_t>()[i] = data->shape[static_cast<int>(start + i)];
    return Status::ok_status();
  }

 private:
  int64_t start_, end_;
};

class SizeKernel final : public Kernel {
 public:
  bool takes_strings() const override { return true; }
  BlockedIo blocked_io(int block) const override { return reads_only_shape(block); }
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Size: missing input");
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, DType::kInt64, Shape{}));
    *out->as<int64_t>() = data->numel();
    return Status::ok_status();
  }
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  ConstantOfShapeKernel(DType dtype, const uint8_t* value) : dtype_(dtype) {
    std::memcpy(value_, value, dtype_size(dtype));
  }

  Status run(KernelContext& ctx) override {
    const Tensor* shape = ctx.input(0);
    if (!shape) return invalid_argument("ConstantOfShape: missing input");
    int64_t dims[kMaxRank];
    SOD2_ASSIGN_OR_RETURN(int n, read_int_list(*shape, dims, kMaxRank, "ConstantOfShape", "shape"));
    const size_t elem = dtype_size(dtype_);
    SOD2_ASSIGN_OR_RETURN(Shape out_shape, checked_shape(dims, n, elem, "ConstantOfShape"));
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, dtype_, out_shape));
    const int64_t count = out_shape.numel();
    const int64_t grain = std::max<int64_t>(1, (64 << 10) / static_cast<int64_t>(elem));
    ctx.pool().parallel_for(count, grain, [&](int64_t b, int64_t e) {
      fill_elements(static_cast<uint8_t*>(out->data) + static_cast<size_t>(b) * elem, value_, elem,
                    e - b);
    });
    return Status::ok_status();
  }

 private:
  DType dtype_;
  alignas(8) uint8_t value_[8] = {};
};

template <typename T>
Status fill_range(KernelContext& ctx, const Tensor& start_t, const Tensor& limit_t,
                  const Tensor& delta_t, DType dtype) {
  for (const Tensor* t : {&start_t, &limit_t, &delta_t}) {
    if (t->dtype != dtype) return invalid_argument("Range: start, limit and delta differ in type");
    if (t->numel() != 1) return invalid_argument("Range: start, limit and delta must be scalars");
  }
  const T start = *start_t.as<const T>(), limit = *limit_t.as<const T>(),
          delta = *delta_t.as<const T>();
  if (delta == T(0)) return invalid_argument("Range: delta is 0");
  int64_t n = 0;
  if constexpr (std::is_integral_v<T>) {
    const __int128 diff = static_cast<__int128>(limit) - start;
    __int128 q = diff / delta;
    if (q * delta != diff && ((diff > 0) == (delta > 0))) ++q;  // ceil for a positive quotient
    n = q > 0 ? static_cast<int64_t>(q) : 0;
  } else {
    const double count = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                                   static_cast<double>(delta));
    if (!(count < 9.0e18)) return invalid_argument("Range: too many elements");
    n = count > 0 ? static_cast<int64_t>(count) : 0;
  }
  const int64_t dims[1] = {n};
  SOD2_ASSIGN_OR_RETURN(Shape shape, checked_shape(dims, 1, sizeof(T), "Range"));
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, dtype, shape));
  T* dst = out->as<T>();
  // Accumulates like the op's function body (and ORT), not start + i * delta.
  T value = start;
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = value;
    value = static_cast<T>(value + delta);
  }
  return Status::ok_status();
}

class RangeKernel final : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* start = ctx.input(0);
    const Tensor* limit = ctx.input(1);
    const Tensor* delta = ctx.input(2);
    if (!start || !limit || !delta)
      return invalid_argument("Range: start, limit and delta are required");
    switch (start->dtype) {
      case DType::kFloat: return fill_range<float>(ctx, *start, *limit, *delta, start->dtype);
      case DType::kDouble: return fill_range<double>(ctx, *start, *limit, *delta, start->dtype);
      case DType::kInt16: return fill_range<int16_t>(ctx, *start, *limit, *delta, start->dtype);
      case DType::kInt32: return fill_range<int32_t>(ctx, *start, *limit, *delta, start->dtype);
      case DType::kInt64: return fill_range<int64_t>(ctx, *start, *limit, *delta, start->dtype);
      default: return unsupported(std::string("Range: type ") + dtype_name(start->dtype));
    }
  }
};

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(HostTensor value) : value_(std::move(value)) {}
  Status run(KernelContext& ctx) override {
    SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, value_.dtype(), value_.shape()));
    if (!value_.bytes().empty())
      std::memcpy(out->data, value_.bytes().data(), value_.bytes().size());
    return Status::ok_status();
  }

 private:
  HostTensor value_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_shape_v1(const NodeInfo& node) {
  return make_kernel<ShapeKernel>(0, kMaxRank);
}

Expected<std::unique_ptr<Kernel>> make_shape_v15(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(int64_t start, node.attrs.get_int("start", 0));
  SOD2_ASSIGN_OR_RETURN(int64_t end, node.attrs.get_int("end", kMaxRank));
  return make_kernel<ShapeKernel>(start, end);
}

Expected<std::unique_ptr<Kernel>> make_size(const NodeInfo& node) {
  return make_kernel<SizeKernel>();
}

Expected<std::unique_ptr<Kernel>> make_constant_of_shape(const NodeInfo& node) {
  alignas(8) uint8_t zero[8] = {};
  if (!node.attrs.has("value")) return make_kernel<ConstantOfShapeKernel>(DType::kFloat, zero);
  SOD2_ASSIGN_OR_RETURN(const HostTensor* value, node.attrs.get_tensor("value"));
  const size_t elem = dtype_size(value->dtype());
  if (elem == 0 || elem > 8) {
    return unsupported(std::string("ConstantOfShape: value of type ") + dtype_name(value->dtype()));
  }
  if (value->shape().numel() != 1 || value->bytes().size() != elem) {
    return invalid_model("ConstantOfShape: value must hold one element, got shape " +
                         value->shape().to_string());
  }
  return make_kernel<ConstantOfShapeKernel>(value->dtype(), value->bytes().data());
}

Expected<std::unique_ptr<Kernel>> make_range(const NodeInfo& node) {
  return make_kernel<RangeKernel>();
}

Expected<std::unique_ptr<Kernel>> make_constant(const NodeInfo& node) {
  const Attrs& a = node.attrs;
  int given = 0;
  for (const char* name : {"value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings", "sparse_value"}) {
    given += a.has(name) ? 1 : 0;
  }
  if (given != 1) return invalid_model("Constant: exactly one value attribute must be set");
  if (a.has("value")) {
    SOD2_ASSIGN_OR_RETURN(const HostTensor* t, a.get_tensor("value"));
    if (dtype_size(t->dtype()) == 0) {
      return unsupported(std::string("Constant: value of type ") + dtype_name(t->dtype()));
    }
    if (t->bytes().size() != static_cast<size_t>(t->shape().numel()) * dtype_size(t->dtype())) {
      return invalid_model("Constant: value's bytes do not match its shape");
    }
    return make_kernel<ConstantKernel>(*t);
  }
  if (a.has("value_float")) {
    SOD2_ASSIGN_OR_RETURN(float f, a.get_float("value_float", 0));
    HostTensor t(DType::kFloat, Shape{});
    *t.data<float>() = f;
    return make_kernel<ConstantKernel>(std::move(t));
  }
  if (a.has("value_floats")) {
    SOD2_ASSIGN_OR_RETURN(std::vector<float> v, a.get_floats("value_floats"));
    HostTensor t(DType::kFloat, Shape{static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<float>());
    return make_kernel<ConstantKernel>(std::move(t));
  }
  if (a.has("value_int")) {
    SOD2_ASSIGN_OR_RETURN(int64_t i, a.get_int("value_int", 0));
    HostTensor t(DType::kInt64, Shape{});
    *t.data<int64_t>() = i;
    return make_kernel<ConstantKernel>(std::move(t));
  }
  if (a.has("value_ints")) {
    SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> v, a.get_ints("value_ints"));
    HostTensor t(DType::kInt64, Shape{static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return make_kernel<ConstantKernel>(std::move(t));
  }
  return unsupported("Constant: string and sparse values");
}

}  // namespace sod2::rt
