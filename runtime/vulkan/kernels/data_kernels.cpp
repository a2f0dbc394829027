// Float32 Transpose, Slice, Concat, Gather and the reshape family on Vulkan. All but Gather are
// one strided copy (shaders/transpose.comp) of a view the kernel derives exactly as the CPU
// kernel does (runtime/kernels/data); Gather has its own shader reading the node's indices.
//
// Every int the shapes depend on (perm, Slice's starts/ends/axes/steps, Reshape's shape,
// Squeeze/Unsqueeze axes, Gather's indices) is int32/int64, which no shader writes: the host
// reads them in run() without waiting for the device.
#include "runtime/vulkan/kernels/data_kernels.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <span>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/data_geometry.h"
#include "runtime/vulkan/kernels/vulkan_kernels_internal.h"

namespace sod2::rt::vk {
namespace {

const std::vector<uint32_t> kCopySpirv =
#include "shaders/strided_copy.comp.spv.inc"
    ;
const std::vector<uint32_t> kGatherSpirv =
#include "shaders/gather.comp.spv.inc"
    ;

constexpr int64_t kLocal = 256;  // both shaders' local_size_x
constexpr int kCopyRank = 8;     // transpose.comp's dims
static_assert(kMaxRank <= kCopyRank, "a tensor's view must fit the copy shader");

// Mirrors transpose.comp's push constants.
struct CopyPush {
  uint32_t rank, total, src_off, dst_off;
  uint32_t dims[kCopyRank], src_stride[kCopyRank], dst_stride[kCopyRank];
};
static_assert(sizeof(CopyPush) <= 128, "push constants are at most 128 bytes");

// Mirrors gather.comp's push constants.
struct GatherPush {
  uint32_t total, inner, n, axis_dim;
  uint32_t src_off, idx_off, idx_stride, dst_off;
};

// What one copy dispatch moves: dims outermost first, strides in elements (negative walks back).
struct CopyView {
  int rank = 0;
  int64_t dims[kMaxRank] = {}, src[kMaxRank] = {}, dst[kMaxRank] = {};
  void push(int64_t d, int64_t s, int64_t t) {
    dims[rank] = d;
    src[rank] = s;
    dst[rank] = t;
    ++rank;
  }
};

// The dispatch grid of `total` invocations, flattened over x and y.
void grid(int64_t total, uint32_t* gx, uint32_t* gy) {
  const int64_t groups = (total + kLocal - 1) / kLocal;
  const int64_t x = std::min(groups, kMaxGroups);
  *gx = static_cast<uint32_t>(x);
  *gy = static_cast<uint32_t>(x == 0 ? 0 : (groups + x - 1) / x);
}

void row_major(const Shape& s, int64_t* strides) {
  int64_t st = 1;
  for (int i = s.rank() - 1; i >= 0; --i) {
    strides[i] = st;
    st *= s[i];
  }
}

// Pipelines and the copy every data kernel records.
class VkDataKernel : public BuiltinKernelBase {
 protected:
  VkDataKernel(std::shared_ptr<VulkanBackend> backend, std::unique_ptr<Kernel> cpu,
               const ComputePipeline* pipe, std::string op)
      : BuiltinKernelBase(std::move(backend), std::move(cpu)), pipe_(pipe), op_(std::move(op)) {}

  // Records the copy of view `v` from `src` (element `src_at` of its tensor) to `dst` (element
  // `dst_at`). The caller has checked both bindings cover every element the view reaches, so
  // all offsets fit the shader's 32 bits.
  Status copy(const BufferRef& src, int64_t src_at, const BufferRef& dst, int64_t dst_at,
              const CopyView& v) {
    // Size-1 dims move nothing, and a dim contiguous with the one inside it in both tensors
    // merges into it: fewer divisions per element in the shader.
    CopyView m;
    int64_t total = 1;
    for (int i = 0; i < v.rank; ++i) {
      total *= v.dims[i];
      if (v.dims[i] == 1) continue;
      if (m.rank > 0) {
        const int k = m.rank - 1;
        if (m.src[k] == v.src[i] * v.dims[i] && m.dst[k] == v.dst[i] * v.dims[i]) {
          m.dims[k] *= v.dims[i];
          m.src[k] = v.src[i];
          m.dst[k] = v.dst[i];
          continue;
        }
      }
      m.push(v.dims[i], v.src[i], v.dst[i]);
    }
    if (total == 0) return Status::ok_status();
    CopyPush p{};
    p.rank = static_cast<uint32_t>(m.rank);
    p.total = static_cast<uint32_t>(total);
    p.src_off = src.word + static_cast<uint32_t>(src_at);
    p.dst_off = dst.word + static_cast<uint32_t>(dst_at);
    for (int i = 0; i < m.rank; ++i) {
      const int k = m.rank - 1 - i;  // the shader wants the innermost dim first
      p.dims[i] = static_cast<uint32_t>(m.dims[k]);
      p.src_stride[i] = static_cast<uint32_t>(m.src[k]);  // two's complement when negative
      p.dst_stride[i] = static_cast<uint32_t>(m.dst[k]);
    }
    uint32_t gx = 0, gy = 0;
    grid(total, &gx, &gy);
    return backend_->dispatch(*pipe_, {src, dst}, &p, gx, gy);
  }

  // Copies `x`, viewed as `v` from element `x_at`, into a fresh output of shape `out` (row-major
  // order of the view). `same_index`: the view is the identity, so an output on the input's own
  // bytes needs no snapshot.
  Status copy_view(KernelContext& ctx, const Tensor& x, int64_t x_at, const CopyView& v,
                   const Shape& out, bool same_index) {
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (out.numel() == 0) return Status::ok_status();
    if (same_index && x.data == y->data) return Status::ok_status();  // already in place
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    SOD2_ASSIGN_OR_RETURN(BufferRef xb, read_input(*backend_, x, *y, same_index));
    if (!binding_covers(yb, out.numel()) || !binding_covers(xb, x.numel()))
      return run_on_cpu(ctx, op_.c_str());
    return copy(xb, x_at, yb, 0, v);
  }

  // Whether input 0 is what the shader takes; the CPU kernel answers anything else (its errors
  // for a missing input, or the data as it is).
  const Tensor* float_data(KernelContext& ctx) const {
    const Tensor* x = ctx.input(0);
    return x && x->dtype == DType::kFloat ? x : nullptr;
  }

  const ComputePipeline* pipe_;
  std::string op_;
};

class VkTransposeKernel final : public VkDataKernel {
 public:
  VkTransposeKernel(std::shared_ptr<VulkanBackend> b, std::unique_ptr<Kernel> cpu,
                    const ComputePipeline* pipe, std::vector<int64_t> perm)
      : VkDataKernel(std::move(b), std::move(cpu), pipe, "Transpose"), perm_(std::move(perm)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = float_data(ctx);
    if (!x) return run_on_cpu(ctx, "Transpose");
    const Shape& in = x->shape;
    const int rank = in.rank();
    int perm[kMaxRank];
    SOD2_RETURN_IF_ERROR(resolve_transpose_perm(perm_, rank, perm));
    int64_t strides[kMaxRank];
    row_major(in, strides);
    Shape out;
    for (int i = 0; i < rank; ++i) out.push_back(in[perm[i]]);
    int64_t out_strides[kMaxRank];
    row_major(out, out_strides);
    CopyView v;
    for (int i = 0; i < rank; ++i) v.push(in[perm[i]], strides[perm[i]], out_strides[i]);
    return copy_view(ctx, *x, 0, v, out, false);
  }

 private:
  std::vector<int64_t> perm_;
};

class VkSliceKernel final : public VkDataKernel {
 public:
  // `attrs` set for Slice-1 (attributes); Slice-10 reads inputs 1..4.
  VkSliceKernel(std::shared_ptr<VulkanBackend> b, std::unique_ptr<Kernel> cpu,
                const ComputePipeline* pipe, std::optional<SliceParams> attrs)
      : VkDataKernel(std::move(b), std::move(cpu), pipe, "Slice"), attrs_(attrs) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = float_data(ctx);
    if (!x) return run_on_cpu(ctx, "Slice");
    SliceParams p;
    if (attrs_) {
      p = *attrs_;
    } else {
      SOD2_ASSIGN_OR_RETURN(p, read_slice_inputs(ctx));
    }
    const Shape& in = x->shape;
    SOD2_ASSIGN_OR_RETURN(SliceGeometry g, resolve_slice(in, p));
    int64_t strides[kMaxRank], out_strides[kMaxRank];
    row_major(in, strides);
    row_major(g.out, out_strides);
    CopyView v;
    int64_t at = 0;
    if (g.out.numel() > 0) {
      for (int i = 0; i < in.rank(); ++i) {
        at += g.first[i] * strides[i];
        // One element: the step is irrelevant (and may be huge).
        v.push(g.out[i], g.out[i] > 1 ? g.step[i] * strides[i] : 0, out_strides[i]);
      }
    }
    return copy_view(ctx, *x, at, v, g.out, false);
  }

 private:
  std::optional<SliceParams> attrs_;
};

class VkConcatKernel final : public VkDataKernel {
 public:
  VkConcatKernel(std::shared_ptr<VulkanBackend> b, std::unique_ptr<Kernel> cpu,
                 const ComputePipeline* pipe, int64_t axis)
      : VkDataKernel(std::move(b), std::move(cpu), pipe, "Concat"), axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const size_t n = ctx.num_inputs();
    for (size_t k = 0; k < n; ++k) {
      const Tensor* t = ctx.input(k);
      if (!t || t->dtype != DType::kFloat) return run_on_cpu(ctx, "Concat");
    }
    if (n == 0) return run_on_cpu(ctx, "Concat");
    int axis = 0;
    SOD2_ASSIGN_OR_RETURN(Shape out, concat_output_shape(ctx, axis_, &axis));
    const int rank = out.rank();
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    if (out.numel() == 0) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    if (!binding_covers(yb, out.numel())) return run_on_cpu(ctx, "Concat");
    // Every input's bytes are bound (or snapshot) before the first copy writes the output, which
    // may lie over inputs the plan no longer needs.
    refs_.assign(n, BufferRef{});
    for (size_t k = 0; k < n; ++k) {
      const Tensor& t = *ctx.input(k);
      if (t.numel() == 0) continue;  // an empty input may have no memory at all
      SOD2_ASSIGN_OR_RETURN(refs_[k], read_input(*backend_, t, *y));
      if (!binding_covers(refs_[k], t.numel())) return run_on_cpu(ctx, "Concat");
    }
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= out[i];
    for (int i = axis + 1; i < rank; ++i) inner *= out[i];
    int64_t at = 0;  // along the axis
    for (size_t k = 0; k < n; ++k) {
      const int64_t block = ctx.input(k)->shape[axis] * inner;
      if (block == 0) continue;
      CopyView v;
      v.push(outer, block, out[axis] * inner);
      v.push(block, 1, 1);
      SOD2_RETURN_IF_ERROR(copy(refs_[k], 0, yb, at * inner, v));
      at += ctx.input(k)->shape[axis];
    }
    return Status::ok_status();
  }

 private:
  int64_t axis_;
  std::vector<BufferRef> refs_;  // reused run after run
};

class VkGatherKernel final : public VkDataKernel {
 public:
  VkGatherKernel(std::shared_ptr<VulkanBackend> b, std::unique_ptr<Kernel> cpu,
                 const ComputePipeline* pipe, int64_t axis)
      : VkDataKernel(std::move(b), std::move(cpu), pipe, "Gather"), axis_(axis) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = float_data(ctx);
    const Tensor* indices = ctx.input(1);
    if (!x || !indices) return run_on_cpu(ctx, "Gather");
    SOD2_RETURN_IF_ERROR(require_index_type(indices->dtype, "Gather", "indices"));
    const Shape& ds = x->shape;
    int axis = 0;
    SOD2_ASSIGN_OR_RETURN(Shape out, gather_output_shape(ds, indices->shape, axis_, 4, &axis));
    const int64_t axis_dim = ds[axis];
    const int64_t n = indices->numel();
    for (int64_t j = 0; j < n; ++j) {
      const int64_t v = load_index(*indices, j);
      if (v < -axis_dim || v >= axis_dim) return index_out_of_range("Gather", v, axis, axis_dim);
    }
    // The shader takes an int64 index by its low word, exact only below 2^31.
    if (axis_dim > std::numeric_limits<int32_t>::max()) return run_on_cpu(ctx, "Gather");
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, out));
    const int64_t total = out.numel();
    if (total == 0) return Status::ok_status();
    int64_t inner = 1;
    for (int i = axis + 1; i < ds.rank(); ++i) inner *= ds[i];
    const uint32_t idx_stride = indices->dtype == DType::kInt64 ? 2 : 1;
    SOD2_ASSIGN_OR_RETURN(BufferRef yb, backend_->write_buffer(*y));
    SOD2_ASSIGN_OR_RETURN(BufferRef xb, read_input(*backend_, *x, *y));
    SOD2_ASSIGN_OR_RETURN(BufferRef ib, read_input(*backend_, *indices, *y));
    if (!binding_covers(yb, total) || !binding_covers(xb, x->numel()) ||
        !binding_covers(ib, n * idx_stride))
      return run_on_cpu(ctx, "Gather");
    GatherPush p{};
    p.total = static_cast<uint32_t>(total);
    p.inner = static_cast<uint32_t>(inner);
    p.n = static_cast<uint32_t>(n);
    p.axis_dim = static_cast<uint32_t>(axis_dim);
    p.src_off = xb.word;
    p.idx_off = ib.word;
    p.idx_stride = idx_stride;
    p.dst_off = yb.word;
    uint32_t gx = 0, gy = 0;
    grid(total, &gx, &gy);
    return backend_->dispatch(*pipe_, {xb, ib, yb}, &p, gx, gy);
  }

 private:
  int64_t axis_;
};

// Catches the shape a CPU kernel asks for and stops it there: the kernel has validated
// everything by then and writes nothing.
class ShapeProbe final : public OutputAllocator {
 public:
  Expected<Tensor*> output(size_t, DType, const Shape& shape) override {
    shape_ = shape;
    asked_ = true;
    return internal_error("shape probe");
  }
  Expected<void*> scratch(size_t) override { return internal_error("shape probe"); }
  bool asked() const { return asked_; }
  const Shape& shape() const { return shape_; }

 private:
  Shape shape_;
  bool asked_ = false;
};

// Reshape, Flatten, Squeeze and Unsqueeze copy their input unchanged. The new shape is the CPU
// kernel's own, taken by running it against a ShapeProbe: its rules (Reshape's 0 and -1,
// allowzero, axes from attributes or inputs per opset) and errors stay in one place.
class VkReshapeKernel final : public VkDataKernel {
 public:
  VkReshapeKernel(std::shared_ptr<VulkanBackend> b, std::unique_ptr<Kernel> cpu,
                  const ComputePipeline* pipe, std::string op)
      : VkDataKernel(std::move(b), std::move(cpu), pipe, std::move(op)) {}

  Status run(KernelContext& ctx) override {
    const Tensor* x = float_data(ctx);
    if (!x) return run_on_cpu(ctx, op_.c_str());
    std::array<const Tensor*, 2> in{};
    const size_t n = std::min(ctx.num_inputs(), in.size());
    for (size_t i = 0; i < n; ++i) in[i] = ctx.input(i);
    ShapeProbe probe;
    KernelContext dry(std::span<const Tensor* const>(in.data(), n), &probe, &ctx.pool());
    const Status s = cpu_->run(dry);
    if (!probe.asked()) {
      if (!s.ok()) return s;
      return internal_error(op_ + ": the CPU kernel gave no output shape");
    }
    if (probe.shape().numel() != x->numel())
      return internal_error(op_ + ": the CPU kernel's shape does not hold the input");
    CopyView v;
    v.push(x->numel(), 1, 1);
    return copy_view(ctx, *x, 0, v, probe.shape(), true);
  }
};

enum class DataOp { kNone, kTranspose, kSlice, kConcat, kGather, kReshape };

DataOp data_op(const std::string& domain, const std::string& op) {
  if (!domain.empty()) return DataOp::kNone;
  if (op == "Transpose") return DataOp::kTranspose;
  if (op == "Slice") return DataOp::kSlice;
  if (op == "Concat") return DataOp::kConcat;
  if (op == "Gather") return DataOp::kGather;
  if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze")
    return DataOp::kReshape;
  return DataOp::kNone;
}

}  // namespace

bool data_shader_op(const std::string& domain, const std::string& op_type) {
  return data_op(domain, op_type) != DataOp::kNone;
}

Expected<std::unique_ptr<Kernel>> make_data_kernel(VulkanBackend& backend, const NodeInfo& node,
                                                   std::unique_ptr<Kernel>& cpu, std::string* why) {
  const std::string& op = node.op_type;
  const DataOp kind = data_op(node.domain, node.op_type);
  if (kind == DataOp::kNone) {
    *why = op + ": no hand-written shader";
    return std::unique_ptr<Kernel>();
  }
  // Types unknown when the model loads would need a check per run; such nodes stay on the CPU.
  bool float_data = !node.input_dtypes.empty() && node.input_dtypes[0] == DType::kFloat &&
                    !node.output_dtypes.empty() && node.output_dtypes[0] == DType::kFloat;
  if (kind == DataOp::kConcat) {
    for (DType t : node.input_dtypes) float_data = float_data && t == DType::kFloat;
  }
  if (!float_data) {
    *why = op + ": only float32 data is on Vulkan";
    return std::unique_ptr<Kernel>();
  }
  if (kind == DataOp::kReshape && !cpu) {
    *why = op + ": its shape comes from the CPU kernel, which is missing";
    return std::unique_ptr<Kernel>();
  }
  std::shared_ptr<VulkanBackend> shared = backend.weak_from_this().lock();
  if (!shared) return internal_error(op + ": the Vulkan backend is not shared-owned");
  const ComputePipeline* pipe = nullptr;
  if (kind == DataOp::kGather) {
    SOD2_ASSIGN_OR_RETURN(pipe,
                          shared->pipeline("sod2.gather", kGatherSpirv, 3, sizeof(GatherPush)));
  } else {
    SOD2_ASSIGN_OR_RETURN(pipe,
                          shared->pipeline("sod2.data_copy", kCopySpirv, 2, sizeof(CopyPush)));
  }
  // Attributes are read as the CPU factories read them; `cpu` exists, so they were valid there.
  std::unique_ptr<Kernel> k;
  switch (kind) {
    case DataOp::kTranspose: {
      SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> perm, node.attrs.get_ints("perm"));
      k.reset(new VkTransposeKernel(std::move(shared), std::move(cpu), pipe, std::move(perm)));
      break;
    }
    case DataOp::kSlice: {
      std::optional<SliceParams> attrs;
      if (node.opset < 10) {
        SOD2_ASSIGN_OR_RETURN(attrs, read_slice_attrs(node.attrs));
      }
      k.reset(new VkSliceKernel(std::move(shared), std::move(cpu), pipe, attrs));
      break;
    }
    case DataOp::kConcat: {
      SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 1));
      k.reset(new VkConcatKernel(std::move(shared), std::move(cpu), pipe, axis));
      break;
    }
    case DataOp::kGather: {
      SOD2_ASSIGN_OR_RETURN(int64_t axis, node.attrs.get_int("axis", 0));
      k.reset(new VkGatherKernel(std::move(shared), std::move(cpu), pipe, axis));
      break;
    }
    case DataOp::kReshape:
      k.reset(new VkReshapeKernel(std::move(shared), std::move(cpu), pipe, op));
      break;
    case DataOp::kNone: break;
  }
  return k;
}

}  // namespace sod2::rt::vk
