// Pad in constant, reflect and edge modes; negative pads crop. Each output row (one index over
// all dims but the last) maps to an input row or is all padding; inside a row the part that lies
// within the input is one memcpy and only the pads are written element by element.
#include <algorithm>
#include <cstring>
#include <span>
#include <string>

#include "runtime/kernels/data/common.h"
#include "runtime/kernels/data/factories.h"

namespace sod2::rt {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };  // wrap: opset 19

// The input index an output index reads along one axis, or -1 for the constant.
inline int64_t source_index(int64_t o, int64_t begin, int64_t n, PadMode mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((i % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
  }
  return -1;
}

struct PadSpec {
  PadMode mode = PadMode::kConstant;
  int count = 0;  // 2 * rank
  int64_t pads[2 * kMaxRank] = {};
};

// The padded dims of `in` (validated).
Expected<Shape> padded_shape(const Shape& in, const PadSpec& spec, size_t elem) {
  const int rank = in.rank();
  if (spec.count != 2 * rank) {
    return invalid_argument("Pad: " + std::to_string(spec.count) + " pads for an input of rank " +
                            std::to_string(rank));
  }
  if (rank == 0) return invalid_argument("Pad: input must have rank >= 1");
  int64_t dims[kMaxRank];
  const int64_t* begin = spec.pads;
  const int64_t* end = spec.pads + rank;
  for (int i = 0; i < rank; ++i) {
    // An output index minus its begin pad must fit int64 (a begin near INT64_MIN, offset by an
    // end near INT64_MAX, kept the size in range but overflowed that subtraction).
    constexpr int64_t kMaxPad = INT64_MAX / 4;
    if (begin[i] < -kMaxPad || end[i] < -kMaxPad || begin[i] > kMaxPad || end[i] > kMaxPad)
      return invalid_argument("Pad: pads " + std::to_string(begin[i]) + ", " +
                              std::to_string(end[i]) + " of axis " + std::to_string(i) +
                              " are too large");
    if (__builtin_add_overflow(in[i], begin[i], &dims[i]) ||
        __builtin_add_overflow(dims[i], end[i], &dims[i]) || dims[i] < 0) {
      return invalid_argument("Pad: pads make axis " + std::to_string(i) + " of size " +
                              std::to_string(in[i]) + " invalid");
    }
    if (spec.mode != PadMode::kConstant && in[i] == 0 && dims[i] > 0) {
      return invalid_argument("Pad: cannot " +
                              std::string(spec.mode == PadMode::kEdge   ? "edge"
                                          : spec.mode == PadMode::kWrap ? "wrap"
                                                                        : "reflect") +
                              "-pad the empty axis " + std::to_string(i));
    }
  }
  return checked_shape(dims, rank, elem, "Pad");
}

// Writes the padded `in` (at src) into out_shape (at dst), a row of the last dim at a time.
void pad_rows(ThreadPool& pool, const uint8_t* src, const Shape& in, const PadSpec& spec,
              const uint8_t* value, size_t elem, const Shape& out_shape, uint8_t* dst) {
  const int rank = in.rank();
  const int64_t* begin = spec.pads;
  const std::span<const int64_t> dims = out_shape.dims();
  int64_t in_strides[kMaxRank];
  row_major_strides(in, in_strides);
  const int last = rank - 1;
  const int64_t row_len = dims[last], in_len = in[last], b_last = begin[last];
  // The part of each output row that lies inside the input row.
  const int64_t mid_lo = std::clamp<int64_t>(b_last, 0, row_len);
  const int64_t mid_hi = std::clamp<int64_t>(b_last + in_len, mid_lo, row_len);
  const int64_t rows = out_shape.numel() / row_len;
  const PadMode mode = spec.mode;
  const size_t row_bytes = static_cast<size_t>(row_len) * elem;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>((64u << 10) / row_bytes));

  pool.parallel_for(rows, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t row = lo; row < hi; ++row) {
      uint8_t* out_row = dst + static_cast<size_t>(row) * row_bytes;
      int64_t offset = 0;  // of the input row, in elements
      bool padding_row = false;
      int64_t r = row;
      for (int i = last - 1; i >= 0; --i) {
        const int64_t o = r % dims[i];
        r /= dims[i];
        const int64_t s = source_index(o, begin[i], in[i], mode);
        if (s < 0) {
          padding_row = true;
          break;
        }
        offset += s * in_strides[i];
      }
      if (padding_row) {
        fill_elements(out_row, value, elem, row_len);
        continue;
      }
      const uint8_t* in_row = src + static_cast<size_t>(offset) * elem;
      for (int64_t o = 0; o < mid_lo; ++o) {
        const int64_t s = source_index(o, b_last, in_len, mode);
        std::memcpy(out_row + static_cast<size_t>(o) * elem,
                    s < 0 ? value : in_row + static_cast<size_t>(s) * elem, elem);
      }
      if (mid_hi > mid_lo) {
        std::memcpy(out_row + static_cast<size_t>(mid_lo) * elem,
                    in_row + static_cast<size_t>(mid_lo - b_last) * elem,
                    static_cast<size_t>(mid_hi - mid_lo) * elem);
      }
      for (int64_t o = mid_hi; o < row_len; ++o) {
        const int64_t s = source_index(o, b_last, in_len, mode);
        std::memcpy(out_row + static_cast<size_t>(o) * elem,
                    s < 0 ? value : in_row + static_cast<size_t>(s) * elem, elem);
      }
    }
  });
}

Status pad(KernelContext& ctx, const Tensor& data, const PadSpec& spec, const uint8_t* value) {
  SOD2_RETURN_IF_ERROR(require_fixed_size(data.dtype, "Pad"));
  const size_t elem = dtype_size(data.dtype);
  SOD2_ASSIGN_OR_RETURN(Shape out_shape, padded_shape(data.shape, spec, elem));
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data.dtype, out_shape));
  if (out_shape.numel() == 0) return Status::ok_status();
  pad_rows(ctx.pool(), static_cast<const uint8_t*>(data.data), data.shape, spec, value, elem,
           out_shape, static_cast<uint8_t*>(out->data));
  return Status::ok_status();
}

// Constant padding of H and W only, on [N, C, H, W] held blocked (kernel.h): each block of `width`
// lanes is an [H, W * width] plane whose rows get width times the pads of W, a narrow last block
// too.
bool pads_blocked(const PadSpec& spec) {
  if (spec.mode != PadMode::kConstant || spec.count != 8) return false;
  for (const int i : {0, 1, 4, 5})
    if (spec.pads[i] != 0) return false;
  for (const int i : {2, 3, 6, 7})
    if (spec.pads[i] < 0) return false;
  return true;
}

Status pad_blocked(KernelContext& ctx, const Tensor& data, const PadSpec& spec,
                   const uint8_t* value, int block) {
  if (data.dtype != DType::kFloat || data.shape.rank() != 4 || !pads_blocked(spec))
    return internal_error("Pad: " + data.shape.to_string() + " with these pads cannot be held in " +
                          "channel blocks of " + std::to_string(block));
  SOD2_ASSIGN_OR_RETURN(Shape out_shape, padded_shape(data.shape, spec, sizeof(float)));
  SOD2_ASSIGN_OR_RETURN(Tensor * out, ctx.output(0, data.dtype, out_shape));
  if (out_shape.numel() == 0) return Status::ok_status();
  const Shape& in = data.shape;
  const int64_t c = in[1], in_plane = in[2] * in[3], out_plane = out_shape[2] * out_shape[3];
  const auto* src = static_cast<const uint8_t*>(data.data);
  auto* dst = static_cast<uint8_t*>(out->data);
  for (int64_t img = 0; img < in[0]; ++img)
    for (int64_t c0 = 0; c0 < c; c0 += block) {
      const int64_t w = held_block_width(block, c, c0);
      PadSpec rows;
      rows.mode = PadMode::kConstant;
      rows.count = 4;
      const int64_t pads[4] = {spec.pads[2], spec.pads[3] * w, spec.pads[6], spec.pads[7] * w};
      std::copy(pads, pads + 4, rows.pads);
      pad_rows(ctx.pool(), src + sizeof(float) * static_cast<size_t>((img * c + c0) * in_plane),
               Shape{in[2], in[3] * w}, rows, value, sizeof(float),
               Shape{out_shape[2], out_shape[3] * w},
               dst + sizeof(float) * static_cast<size_t>((img * c + c0) * out_plane));
    }
  return Status::ok_status();
}

Expected<PadMode> read_mode(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(std::string mode, node.attrs.get_string("mode", "constant"));
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap" && node.opset >= 19) return PadMode::kWrap;
  return unsupported("Pad: mode '" + mode + "'");
}

// Pad-18's optional axes input: the pads (2 per listed axis) go to those axes, the others get 0.
Status spread_over_axes(const Tensor& axes_t, const Tensor& data, PadSpec* spec) {
  int64_t axes[kMaxRank];
  SOD2_ASSIGN_OR_RETURN(int k, read_int_list(axes_t, axes, kMaxRank, "Pad", "axes"));
  const int rank = data.shape.rank();
  if (spec->count != 2 * k)
    return invalid_argument("Pad: " + std::to_string(spec->count) + " pads for " +
                            std::to_string(k) + " axes");
  int64_t full[2 * kMaxRank] = {};
  bool seen[kMaxRank] = {};
  for (int j = 0; j < k; ++j) {
    const int64_t a = axes[j] < 0 ? axes[j] + rank : axes[j];
    if (a < 0 || a >= rank || seen[a])
      return invalid_argument("Pad: axes value " + std::to_string(axes[j]) +
                              " is out of range or repeated for rank " + std::to_string(rank));
    seen[a] = true;
    full[a] = spec->pads[j];
    full[a + rank] = spec->pads[j + k];
  }
  spec->count = 2 * rank;
  std::copy(full, full + 2 * rank, spec->pads);
  return Status::ok_status();
}

// Pad-1 and Pad-2: pads and the constant are attributes.
class PadAttrKernel final : public Kernel {
 public:
  PadAttrKernel(const PadSpec& spec, float value) : spec_(spec), value_(value) {}
  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return invalid_argument("Pad: missing input");
    alignas(8) uint8_t value[8] = {};
    if (spec_.mode == PadMode::kConstant)
      SOD2_RETURN_IF_ERROR(store_scalar(data->dtype, value_, value));
    return pad(ctx, *data, spec_, value);
  }

 private:
  PadSpec spec_;
  float value_;
};

// Pad-11+: pads (input 1) and constant_value (optional input 2).
class PadInputKernel final : public Kernel {
 public:
  explicit PadInputKernel(PadMode mode) : mode_(mode) {}

  // Constant pads of H and W only, given as a constant without axes: X and Y held alike.
  Status prepare(std::span<const Tensor* const> constants) override {
    constant_pads_.count = 0;
    if (constants.size() < 2 || !constants[1] || constants.size() > 3) return Status::ok_status();
    constant_pads_.mode = mode_;
    Expected<int> n =
        read_int_list(*constants[1], constant_pads_.pads, 2 * kMaxRank, "Pad", "pads");
    constant_pads_.count = n.ok() ? *n : 0;
    return Status::ok_status();
  }
  BlockedIo blocked_io(int block) const override {
    return pads_blocked(constant_pads_) ? tied_blocked_io(block) : BlockedIo{};
  }
  void use_blocked(int block, uint64_t inputs, bool output) override {
    block_ = tied_block_used(block, inputs, output);
  }

  Status run(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    const Tensor* pads = ctx.input(1);
    if (!data || !pads) return invalid_argument("Pad: data and pads are required");
    PadSpec spec;
    spec.mode = mode_;
    SOD2_ASSIGN_OR_RETURN(spec.count, read_int_list(*pads, spec.pads, 2 * kMaxRank, "Pad", "pads"));
    if (const Tensor* axes = ctx.input(3))
      SOD2_RETURN_IF_ERROR(spread_over_axes(*axes, *data, &spec));
    alignas(8) uint8_t value[8] = {};
    const Tensor* constant = ctx.input(2);
    if (constant && constant->numel() > 0 && mode_ == PadMode::kConstant) {
      if (constant->dtype != data->dtype || constant->numel() != 1) {
        return invalid_argument("Pad: constant_value must be one value of the data's type");
      }
      if (dtype_size(data->dtype) <= 8) std::memcpy(value, constant->data, dtype_size(data->dtype));
    }
    if (block_ > 0) return pad_blocked(ctx, *data, spec, value, block_);
    return pad(ctx, *data, spec, value);
  }

 private:
  PadMode mode_;
  PadSpec constant_pads_;  // count 0 unless the pads are a constant
  int block_ = 0;          // channels per block of X and Y where they are held blocked
};

Expected<std::unique_ptr<Kernel>> make_pad_attr(const NodeInfo& node, const char* pads_name) {
  SOD2_ASSIGN_OR_RETURN(PadMode mode, read_mode(node));
  SOD2_ASSIGN_OR_RETURN(std::vector<int64_t> pads, node.attrs.get_ints(pads_name));
  SOD2_ASSIGN_OR_RETURN(float value, node.attrs.get_float("value", 0.0f));
  if (pads.size() > static_cast<size_t>(2 * kMaxRank) || pads.size() % 2 != 0) {
    return invalid_model(std::string("Pad: attribute '") + pads_name + "' has a bad length");
  }
  PadSpec spec;
  spec.mode = mode;
  spec.count = static_cast<int>(pads.size());
  std::copy(pads.begin(), pads.end(), spec.pads);
  return make_kernel<PadAttrKernel>(spec, value);
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_pad_v1(const NodeInfo& node) {
  return make_pad_attr(node, "paddings");
}

Expected<std::unique_ptr<Kernel>> make_pad_v2(const NodeInfo& node) {
  return make_pad_attr(node, "pads");
}

Expected<std::unique_ptr<Kernel>> make_pad_v11(const NodeInfo& node) {
  SOD2_ASSIGN_OR_RETURN(PadMode mode, read_mode(node));
  return make_kernel<PadInputKernel>(mode);
}

}  // namespace sod2::rt
