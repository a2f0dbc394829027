// What the runtime executes (DESIGN §6): the graphs with their kernels' node descriptions, the
// constants, how input dims bind symbols, and the compiled memory plan. A package stores exactly
// this; `core/package` builds it from an optimised model, in memory or on the way to a file.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/program/shape_program.h"
#include "runtime/tensor/tensor.h"

namespace sod2::rt {

enum class ValueStorage : uint8_t {
  kGraphInput,  // the caller's tensor (main graph) or the body input the control-flow op passes
  kConstant,    // ProgramDesc::constants[constant]
  kArena,       // the memory plan's tensor `arena_tensor` (main graph only)
  kHeap,        // allocated when produced: control-flow bodies, values the plan cannot size
  kOuterScope,  // a value of the enclosing graph (`outer_value`), read by a body
};

// What a value is: ONNX's tensor, sequence (seq(tensor)) or optional types. Sequences and
// optionals are never in the arena (kHeap); at run time they are Tensors with `sequence` or
// `none` set (tensor.h).
enum class ValueType : uint8_t {
  kTensor = 0,
  kSequence = 1,
  kOptional = 2,
};
inline constexpr uint8_t kMaxValueType = 2;
inline const char* value_type_name(ValueType t) {
  switch (t) {
    case ValueType::kTensor: return "tensor";
    case ValueType::kSequence: return "sequence";
    case ValueType::kOptional: return "optional";
  }
  return "tensor";
}

struct ExecDim {
  int32_t dim = 0;     // of the value's shape
  int32_t symbol = 0;  // index into ProgramDesc::symbols: bound when the value is produced
};

struct ValueDesc {
  std::string name;
  DType dtype = DType::kUndefined;  // kUndefined: whatever the kernel produces (of elements)
  ValueType type = ValueType::kTensor;
  ValueStorage storage = ValueStorage::kHeap;
  int32_t constant = -1;
  int32_t arena_tensor = -1;
  int32_t outer_value = -1;  // for kOuterScope: the value's id in the graph `outer_levels` up
  int32_t outer_levels = 1;
  std::vector<ExecDim> exec_dims;
  // RDP's symbolic dims as text ("[batch,seq+1,128]"; "" when unknown): for tools that show a
  // package (the studio). The runtime never reads it.
  std::string dims;
};

struct NodeDesc {
  NodeInfo info;
  std::vector<int32_t> inputs;     // value ids; -1 for an omitted optional input
  std::vector<int32_t> outputs;    // value ids; -1 for an omitted optional output
  std::vector<int32_t> subgraphs;  // ProgramDesc::graphs indices (If: then, else; Loop/Scan: body)
  // A fused kernel's graph nodes and op types in graph order: the anchor first for a float
  // group, the DequantizeLinears first for a QDQ group (for profiles and tools; the session never
  // reads them). Empty for a plain node.
  std::vector<std::string> fused_nodes;
  std::vector<std::string> fused_op_types;
};

// The ops the session runs itself, through their subgraphs, rather than by a kernel.
inline bool runs_subgraphs(const NodeInfo& n) {
  return n.domain.empty() && (n.op_type == "If" || n.op_type == "Loop" || n.op_type == "Scan" ||
                              n.op_type == "SequenceMap");
}

struct GraphDesc {
  std::string name;
  std::vector<ValueDesc> values;
  std::vector<NodeDesc> nodes;  // in execution order
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

struct SymbolDesc {
  std::string name;
  bool execution = false;
  int64_t lo = 0, hi = 0, multiple = 1;
};

// How a dim of a main-graph input binds: a fixed size, or a symbol.
struct InputDimDesc {
  int32_t input = 0;  // position among the main graph's inputs
  int32_t dim = 0;
  int64_t fixed = -1;   // >= 0: the dim must equal this
  int32_t symbol = -1;  // else: binds ProgramDesc::symbols[symbol]
};

struct InputSignature {
  std::string name;
  DType dtype = DType::kUndefined;  // of a sequence's or optional's tensors for those types
  int32_t rank = 0;                 // tensors only
  ValueType type = ValueType::kTensor;
};

// The cells of the plan versions: a value v of symbol k falls in the first bucket b with
// v <= uppers[k][b] (the last bucket if none); cells number the buckets with the first symbol
// most significant.
struct PlanGridDesc {
  std::vector<int32_t> symbols;              // indices into ProgramDesc::symbols
  std::vector<std::vector<int64_t>> uppers;  // per symbol, ascending, at least one
  size_t num_cells() const {
    size_t n = symbols.empty() ? 0 : 1;
    for (const auto& u : uppers) n *= u.size();
    return n;
  }
  // The cell of these symbol values (indexed like ProgramDesc::symbols).
  size_t cell_of(const std::vector<int64_t>& symbol_values) const {
    size_t cell = 0;
    for (size_t k = 0; k < symbols.size(); ++k) {
      const std::vector<int64_t>& u = uppers[k];
      const int64_t v = symbol_values[static_cast<size_t>(symbols[k])];
      size_t b = 0;
      while (b + 1 < u.size() && v > u[b]) ++b;
      cell = cell * u.size() + b;
    }
    return cell;
  }
};

// An equality RDP assumed (DESIGN §4): outputs 2k and 2k+1 of `assumption_program` must agree.
struct AssumptionDesc {
  std::string text;  // "seq == past+1"
  std::string node;  // the node that needs it
};

// A constant's bytes: owned (a program built in memory) or a read-only view of bytes that
// ProgramDesc::constant_storage keeps alive (a mapped package), so loading a package copies no
// weights. Converts implicitly from HostTensor so builders keep pushing HostTensors.
class ConstantTensor {
 public:
  ConstantTensor() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): builders push HostTensors.
  ConstantTensor(HostTensor owned) : owned_(std::move(owned)) {}
  static ConstantTensor borrowed(const Tensor& view) {
    ConstantTensor c;
    c.borrowed_ = view;
    c.is_borrowed_ = true;
    return c;
  }
  // Kernels only read constants (a mapped package is read-only memory).
  Tensor view() const { return is_borrowed_ ? borrowed_ : owned_.view(); }
  bool is_borrowed() const { return is_borrowed_; }

 private:
  HostTensor owned_;
  Tensor borrowed_;
  bool is_borrowed_ = false;
};

// A fused elementwise group the compiler generated a compute shader for (DESIGN §5). The CPU
// backend runs the group's nodes one by one; a device backend may run the whole group as one
// dispatch of this shader, which reads `inputs` (bindings 0..n-1, broadcast to the output's
// shape) and writes `output` (binding n). Dims reach it as push constants at run time.
struct GpuKernelDesc {
  std::string name;             // "ew3": unique in the program
  std::vector<int32_t> nodes;   // main-graph node indices, ascending
  std::vector<int32_t> inputs;  // main-graph value ids, float32
  int32_t output = -1;          // main-graph value id, float32, planned in the arena
  int32_t rank = 0;             // of the output, as RDP derived it (<= kMaxGpuRank)
  std::vector<uint32_t> spirv;  // SPIR-V words
  std::string source;           // the GLSL it was compiled from (for tools)
};
inline constexpr int kMaxGpuRank = 6;
inline constexpr int kMaxGpuKernelInputs = 4;
inline constexpr uint32_t kGpuGroupLocalSize = 256;  // invocations per workgroup
// Push-constant words of a group shader with `inputs` inputs and output rank `rank`: n, the
// output's and each input's first element, the dims, each input's strides. At most 32 (the
// 128 bytes every Vulkan device offers).
constexpr uint32_t gpu_group_push_words(uint32_t inputs, uint32_t rank) {
  return 2 + inputs + rank + inputs * rank;
}

struct ProgramDesc {
  std::vector<SymbolDesc> symbols;  // the plan program's inputs, in order
  std::vector<InputSignature> inputs;
  std::vector<InputDimDesc> input_dims;
  std::vector<ConstantTensor> constants;
  // Owns the bytes of borrowed constants (the package mapping); shared by copies of the program.
  std::shared_ptr<const void> constant_storage;
  std::vector<GraphDesc> graphs;  // [0] is the main graph

  // Sizes, then offsets, of `num_arena_tensors` tensors, then the arena size.
  rt::ShapeProgram plan_program;
  size_t num_arena_tensors = 0;

  // Size-bucketed versions of the plan (DESIGN §5): the same tensors laid out for one cell of a
  // grid over the input symbols, each valid at every binding (choosing one is about memory,
  // never correctness). Empty: plan_program serves every binding.
  PlanGridDesc plan_grid;
  std::vector<int32_t> version_of_cell;  // per cell: -1 for plan_program, else plan_versions[i]
  std::vector<rt::ShapeProgram> plan_versions;  // outputs laid out like plan_program's

  // Each execution symbol's bound at a binding (DESIGN §5: NonZero <= numel(its input)), as an
  // expression of the other symbols: one output per symbol, over the same inputs (an input
  // symbol's output is its upper end). Without outputs, a symbol's bound is its constant `hi`.
  // runtime/program/execution_bounds.h evaluates it.
  rt::ShapeProgram execution_bounds;
  // Per arena tensor, the main-graph step (node index) from which its size is known: 0 unless it
  // involves an execution symbol, then the step of the node that binds the last of them. Empty:
  // no arena tensor waits for one. A layout made at a binding keeps every offset a function of
  // sizes known when its tensor is written (binding_layout.h).
  std::vector<int32_t> arena_known_steps;

  // The operations each main-graph node does (core/ops/op_work.h: a multiply-add counts 2), as
  // an expression of the symbols: one output per node of graphs[0], in execution order; -1
  // where the compiler could not count it. Empty: not counted (an older package). Profiles
  // divide it by time for each step's GOP/s.
  rt::ShapeProgram step_work;

  // Over the same symbols; only assumptions without execution symbols.
  rt::ShapeProgram assumption_program;
  std::vector<AssumptionDesc> assumptions;

  std::vector<GpuKernelDesc> gpu_kernels;
};

}  // namespace sod2::rt
