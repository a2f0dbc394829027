// libFuzzer target for sod2:FusedElementwise, the kernel whose program comes from a package's
// attributes: the bytes give the node's attributes (any op names, operand counts and indices,
// parameters, even inconsistent ones) and its inputs' shapes (broadcasting or not). Making the
// kernel either refuses the program with a Status or the kernel runs, at one or two threads; a
// run that succeeds must equal a plain element-by-element evaluation of the same program
// (bitwise, NaN equal to NaN; with a quantized output, QuantizeLinear's value of it). Never a
// crash, a sanitizer report or an unbounded allocation.
//
// Built like the other fuzzers (fused_elementwise_fuzzer with SOD2_FUZZ=ON) and as
// fused_elementwise_fuzz_replay, which ctest runs over seeds/fused_elementwise and the saved
// reproducers.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/kernels/elementwise_program.h"
#include "runtime/kernels/kernel_registry.h"
#include "runtime/kernels/linalg/quantize.h"

namespace {

using namespace sod2::rt;
using sod2::Expected;

class Bytes {
 public:
  Bytes(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  uint8_t next() { return i_ < n_ ? d_[i_++] : 0; }
  float next_float() {
    uint32_t bits = 0;
    for (int k = 0; k < 4; ++k) bits = bits << 8 | next();
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }

 private:
  const uint8_t* d_;
  size_t n_, i_ = 0;
};

class HeapOutputs : public OutputAllocator {
 public:
  Expected<Tensor*> output(size_t index, DType dtype, const Shape& shape) override {
    if (index != 0) return sod2::internal_error("one output");
    if (shape.numel() > (1 << 16)) return sod2::resource_exhausted("too big for the fuzzer");
    out = std::make_unique<HostTensor>(dtype, shape);
    view = out->view();
    return &view;
  }
  Expected<void*> scratch(size_t bytes) override {
    if (bytes > (64u << 20)) return sod2::resource_exhausted("scratch too big for the fuzzer");
    buffer.assign(bytes + 64, 0);
    auto p = reinterpret_cast<uintptr_t>(buffer.data());
    return reinterpret_cast<void*>((p + 63) & ~uintptr_t{63});
  }
  std::unique_ptr<HostTensor> out;
  Tensor view;
  std::vector<uint8_t> buffer;
};

const KernelRegistry& registry() {
  static const KernelRegistry& r = KernelRegistry::standard();
  return r;
}

float fold(EwOp op, float a, float b) {
  switch (op) {
    case EwOp::kMax:
      if (a != a) return a;
      return b > a || b != b ? b : a;
    case EwOp::kMin:
      if (a != a) return a;
      return b < a || b != b ? b : a;
    default: return a + b;
  }
}

// Step `s` at one element, its operands' values given, for the ops the kernel computes with a
// scalar formula or an exactly rounded operation (the ops' own formulas: binary.cpp,
// variadic.cpp, where_clip.cpp); nullopt for the vector-math ones, which the unit tests compare
// with the ops' own kernels.
std::optional<float> reference_step(const EwStep& s, const std::vector<float>& v) {
  const float x = v[0], a = s.alpha, b = s.beta;
  switch (s.op) {
    case EwOp::kAdd: return x + v[1];
    case EwOp::kSub: return x - v[1];
    case EwOp::kMul: return x * v[1];
    case EwOp::kDiv: return x / v[1];
    case EwOp::kClip: {
      const float y = x < a ? a : x;
      return y > b ? b : y;
    }
    case EwOp::kCos: return std::cos(x);
    case EwOp::kSin: return std::sin(x);
    case EwOp::kLog: return std::log(x);
    case EwOp::kIdentity: return x;
    case EwOp::kPow: return std::pow(x, v[1]);
    case EwOp::kPRelu: return x < 0 ? x * v[1] : x;
    case EwOp::kMax:
    case EwOp::kMin:
    case EwOp::kSum: {
      float acc = x;
      for (size_t k = 1; k < v.size(); ++k) acc = fold(s.op, acc, v[k]);
      return acc;
    }
    default: return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Bytes in(data, size);
  // Inputs: 1 to 4, rank 0 to 4, dims 1 to 4 (or 0), aligned right so most broadcast.
  const size_t num_inputs = 1 + in.next() % 4;
  std::vector<HostTensor> inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    const int rank = in.next() % 5;
    Shape shape;
    for (int d = 0; d < rank; ++d) shape.push_back(in.next() % 5);
    HostTensor t(DType::kFloat, shape);
    for (int64_t e = 0; e < t.view().numel(); ++e)
      t.view().as<float>()[e] = static_cast<float>(static_cast<int8_t>(in.next())) / 16.f;
    inputs.push_back(std::move(t));
  }
  // The program's attributes, as a package could hold them.
  const size_t steps = in.next() % 12;
  AttrValue names, arity, args, alpha, beta;
  names.kind = AttrValue::Kind::kStrings;
  arity.kind = args.kind = AttrValue::Kind::kInts;
  alpha.kind = beta.kind = AttrValue::Kind::kFloats;
  for (size_t j = 0; j < steps; ++j) {
    const uint8_t op = in.next();
    names.strings.push_back(op < 250 ? std::string(ew_op_name(static_cast<EwOp>(op % kNumEwOps)))
                                     : "Gelu");
    const int64_t k = static_cast<int8_t>(in.next()) % 4;
    arity.ints.push_back(k);
    for (int64_t a = 0; a < std::max<int64_t>(k, 0); ++a)
      args.ints.push_back(static_cast<int8_t>(in.next()) % 8);
    alpha.floats.push_back(in.next_float());
    beta.floats.push_back(in.next_float());
  }
  if (in.next() % 8 == 0 && !args.ints.empty()) args.ints.pop_back();  // inconsistent counts
  Attrs attrs;
  attrs.set("steps", names);
  attrs.set("arity", arity);
  attrs.set("args", args);
  attrs.set("alpha", alpha);
  attrs.set("beta", beta);
  if (in.next() % 4 == 0) {  // a quantized output, its parameters as hostile as the rest
    AttrValue scale, zero_point, type;
    scale.kind = AttrValue::Kind::kFloat;
    scale.f = in.next_float();
    zero_point.kind = AttrValue::Kind::kInt;
    zero_point.i = static_cast<int16_t>(in.next() << 8 | in.next()) % 300;
    type.kind = AttrValue::Kind::kString;
    const uint8_t t = in.next() % 3;
    type.s = t == 0 ? "uint8" : t == 1 ? "int8" : "int32";
    attrs.set("quantize_scale", scale);
    attrs.set("quantize_zero_point", zero_point);
    attrs.set("quantize_type", type);
  }

  NodeInfo node;
  node.name = "fuzz";
  node.op_type = "FusedElementwise";
  node.domain = "sod2";
  node.opset = 1;
  node.attrs = attrs;
  node.input_dtypes.assign(num_inputs, DType::kFloat);
  node.input_present.assign(num_inputs, true);
  node.output_dtypes = {DType::kFloat};
  node.num_outputs = 1;
  auto kernel = registry().create(node);
  if (!kernel.ok()) return 0;
  auto program = elementwise_program_from(attrs, num_inputs);
  if (!program.ok()) __builtin_trap();  // the kernel took what the decoder refuses

  std::vector<Tensor> views;
  for (const HostTensor& h : inputs) views.push_back(h.view());
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : views) ptrs.push_back(&t);
  HeapOutputs outputs;
  ThreadPool pool(1 + in.next() % 2);
  KernelContext ctx(ptrs, &outputs, &pool);
  if (!(*kernel)->run(ctx).ok()) return 0;

  // The same program element by element, through numpy broadcasting.
  const Shape& out = outputs.view.shape;
  const int r = out.rank();
  std::vector<float> temps(program->steps.size());
  for (int64_t e = 0; e < out.numel(); ++e) {
    int64_t idx[kMaxRank] = {};
    int64_t rem = e;
    for (int d = r - 1; d >= 0; --d) {
      idx[d] = rem % out[d];
      rem /= out[d];
    }
    bool exact = true;
    for (size_t j = 0; j < program->steps.size(); ++j) {
      const EwStep& s = program->steps[j];
      std::vector<float> v;
      for (const EwOperand& o : s.args) {
        if (o.temp) {
          v.push_back(temps[static_cast<size_t>(o.index)]);
          continue;
        }
        const Tensor& t = views[static_cast<size_t>(o.index)];
        int64_t off = 0;
        for (int d = 0; d < t.shape.rank(); ++d) {
          const int od = r - t.shape.rank() + d;
          off = off * t.shape[d] + (t.shape[d] == 1 ? 0 : idx[od]);
        }
        v.push_back(t.as<const float>()[off]);
      }
      const std::optional<float> r = reference_step(s, v);
      exact = exact && r.has_value();
      if (!exact) break;
      temps[j] = *r;
    }
    if (!exact) continue;
    if (program->quantize) {
      const EwQuantize& q = *program->quantize;
      const bool s8 = q.type == DType::kInt8;
      const int want = s8 ? quant::quantize_value<int8_t>(temps.back(), q.scale, q.zero_point)
                          : quant::quantize_value<uint8_t>(temps.back(), q.scale, q.zero_point);
      const int got = s8 ? outputs.view.as<const int8_t>()[e] : outputs.view.as<const uint8_t>()[e];
      if (want != got) __builtin_trap();
      continue;
    }
    const float want = temps.back(), got = outputs.view.as<const float>()[e];
    if (std::isnan(want) && std::isnan(got)) continue;
    if (std::memcmp(&want, &got, 4) != 0) __builtin_trap();
  }
  return 0;
}
