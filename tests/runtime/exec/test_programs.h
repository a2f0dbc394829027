// Hand-built programs and test kernels for the session's tests: the session is checked apart
// from the real kernel families.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/sym/shape_compiler.h"
#include "runtime/program/program.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::rt::testing {

// y = x * 2 (float), same shape.
class DoubleKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
    for (int64_t i = 0; i < x->numel(); ++i) y->as<float>()[i] = x->as<float>()[i] * 2;
    return Status::ok_status();
  }
};

// y = the first `count` elements of x, where count = number of positive elements (an EDO op
// whose output size is known only once it has looked at the data).
class PositivesKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const float* src = x->as<float>();  // read before the output exists, like real EDO kernels
    int64_t count = 0;
    for (int64_t i = 0; i < x->numel(); ++i) count += src[i] > 0;
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, Shape{count}));
    int64_t k = 0;
    for (int64_t i = 0; i < x->numel(); ++i)
      if (src[i] > 0) y->as<float>()[k++] = src[i];
    return Status::ok_status();
  }
};

// y = x + 1 (float or int64), same shape.
class IncKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
    if (x->dtype == DType::kInt64) {
      for (int64_t i = 0; i < x->numel(); ++i) y->as<int64_t>()[i] = x->as<int64_t>()[i] + 1;
    } else {
      for (int64_t i = 0; i < x->numel(); ++i) y->as<float>()[i] = x->as<float>()[i] + 1;
    }
    return Status::ok_status();
  }
};

// Declares one output and never writes it (an optional output its kernel leaves out).
class SilentKernel : public Kernel {
 public:
  Status run(KernelContext&) override { return Status::ok_status(); }
};

// y = a float tensor of the shape input 0's int64 values say, its first and last element set:
// what a kernel whose output shape comes from data (Resize's sizes, Range's limits) does.
class ShapedKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* dims = ctx.input(0);
    Shape shape;
    for (int64_t i = 0; i < dims->numel() && i < kMaxRank; ++i)
      shape.push_back(dims->as<int64_t>()[i]);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, DType::kFloat, shape));
    if (y->numel() > 0) {
      y->as<float>()[0] = 1.f;
      y->as<float>()[y->numel() - 1] = 1.f;
    }
    return Status::ok_status();
  }
};

// y = x * 2, after filling a scratch block of 4 * numel(x) + Extra bytes (every byte written, so
// that a block handed out past the end of the scratch buffer is a heap overflow ASan reports).
template <size_t Extra>
class ScratchKernel : public Kernel {
 public:
  Status run(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const size_t bytes = static_cast<size_t>(x->numel()) * sizeof(float) + Extra;
    SOD2_ASSIGN_OR_RETURN(void* scratch, ctx.scratch(bytes));
    if (reinterpret_cast<uintptr_t>(scratch) % 64 != 0)
      return internal_error("scratch is not 64-byte aligned");
    std::memset(scratch, 0xab, bytes);
    SOD2_ASSIGN_OR_RETURN(Tensor * y, ctx.output(0, x->dtype, x->shape));
    for (int64_t i = 0; i < x->numel(); ++i) y->as<float>()[i] = x->as<float>()[i] * 2;
    return Status::ok_status();
  }
};

template <typename K>
Expected<std::unique_ptr<Kernel>> make(const NodeInfo&) {
  return std::unique_ptr<Kernel>(new K());
}

inline KernelRegistry test_registry() {
  KernelRegistry r;
  r.add("", "Double", 1, &make<DoubleKernel>);
  r.add("", "Positives", 1, &make<PositivesKernel>);
  r.add("", "Inc", 1, &make<IncKernel>);
  r.add("", "Silent", 1, &make<SilentKernel>);
  r.add("", "Shaped", 1, &make<ShapedKernel>);
  r.add("", "ScratchSmall", 1, &make<ScratchKernel<0>>);
  r.add("", "ScratchLarge", 1, &make<ScratchKernel<60>>);
  return r;
}

inline ValueDesc value(const std::string& name, ValueStorage storage, int32_t arena_tensor = -1) {
  ValueDesc v;
  v.name = name;
  v.dtype = DType::kFloat;
  v.storage = storage;
  v.arena_tensor = arena_tensor;
  return v;
}

inline NodeDesc node(const std::string& op, std::vector<int32_t> in, std::vector<int32_t> out) {
  NodeDesc n;
  n.info.name = op + "_" + std::to_string(out.empty() ? 0 : out[0]);
  n.info.op_type = op;
  n.info.opset = 17;
  n.info.num_outputs = out.size();
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  return n;
}

// x[n] -> Double a -> Double y: a at offset 0 (4n rounded to 64), y above it.
inline ProgramDesc chain_program() {
  ProgramDesc p;
  p.symbols.push_back({"n", false, 1, 100, 1});
  p.inputs.push_back({"x", DType::kFloat, 1});
  p.input_dims.push_back({0, 0, -1, 0});
  GraphDesc g;
  g.values = {value("x", ValueStorage::kGraphInput), value("a", ValueStorage::kArena, 0),
              value("y", ValueStorage::kArena, 1)};
  g.inputs = {0};
  g.outputs = {2};
  g.nodes = {node("Double", {0}, {1}), node("Double", {1}, {2})};
  p.graphs.push_back(std::move(g));
  const sym::SymExpr n(sym::symbol("n"));
  const sym::SymExpr size = 64 * sym::floordiv(4 * n + 63, sym::SymExpr(64));
  std::vector<sym::SymExpr> outs{size, size, sym::SymExpr(0), size, 2 * size};
  p.plan_program = *sym::compile_shape_program(outs, std::vector<sym::Symbol>{sym::symbol("n")});
  p.num_arena_tensors = 2;
  return p;
}

// A Loop body (i, cond, v) -> (cond, v + 1): the condition passes through unchanged.
inline GraphDesc inc_loop_body() {
  GraphDesc body;
  body.name = "body";
  body.values = {value("i", ValueStorage::kGraphInput), value("cin", ValueStorage::kGraphInput),
                 value("v", ValueStorage::kGraphInput), value("v2", ValueStorage::kHeap)};
  body.values[0].dtype = DType::kInt64;
  body.values[1].dtype = DType::kBool;
  body.inputs = {0, 1, 2};
  body.outputs = {1, 3};
  body.nodes = {node("Inc", {2}, {3})};
  return body;
}

// x[n] -> Double a -> Positives p[k] -> Double y[k], with a and y graph outputs and k an
// execution symbol; all three in the arena, placed by `offsets(a_bytes, p_bytes)` (the sizes as
// expressions of n and k, 64-byte aligned), whose last element is the arena size.
template <typename Offsets>
ProgramDesc positives_program(Offsets offsets) {
  ProgramDesc p;
  p.symbols.push_back({"n", false, 1, 1000, 1});
  p.symbols.push_back({"k", true, 0, 1000, 1});
  p.inputs.push_back({"x", DType::kFloat, 1});
  p.input_dims.push_back({0, 0, -1, 0});
  GraphDesc g;
  g.values = {value("x", ValueStorage::kGraphInput), value("a", ValueStorage::kArena, 0),
              value("p", ValueStorage::kArena, 1), value("y", ValueStorage::kArena, 2)};
  g.values[2].exec_dims.push_back({0, 1});
  g.inputs = {0};
  g.outputs = {1, 3};
  g.nodes = {node("Double", {0}, {1}), node("Positives", {1}, {2}), node("Double", {2}, {3})};
  p.graphs.push_back(std::move(g));
  const sym::SymExpr n(sym::symbol("n")), k(sym::symbol("k"));
  auto al = [](const sym::SymExpr& bytes) {
    return 64 * sym::floordiv(bytes + 63, sym::SymExpr(64));
  };
  const sym::SymExpr a = al(4 * n), pk = al(4 * k);
  std::vector<sym::SymExpr> outs{a, pk, pk};
  for (const sym::SymExpr& o : offsets(a, pk)) outs.push_back(o);
  p.plan_program = *sym::compile_shape_program(
      outs, std::vector<sym::Symbol>{sym::symbol("n"), sym::symbol("k")});
  p.num_arena_tensors = 3;
  return p;
}

}  // namespace sod2::rt::testing
