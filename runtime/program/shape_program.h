// A shape program: many expressions compiled to one flat instruction list over an int64 register
// file, so the runtime turns bound input dims into every dim of a plan in microseconds, without
// walking expression trees, allocating, or linking the symbolic library (core/sym compiles
// expressions into one: sym::compile_shape_program).
//
// Instructions are plain structs (opcode + int32 operands + int64 immediate) so a package writer
// can serialise them verbatim; from_instructions() validates such a list before it may run.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status/status.h"

namespace sod2::rt {

// r[x] is scratch register x, in[x] input x, out[x] output x. Values are stable: a serialised
// program depends on them.
enum class ShapeOp : uint8_t {
  kLoadImm = 0,    // r[dst] = imm
  kLoadInput = 1,  // r[dst] = in[a]
  kAdd = 2,        // r[dst] = r[a] + r[b]
  kAddImm = 3,     // r[dst] = r[a] + imm
  kMulImm = 4,     // r[dst] = r[a] * imm
  kMulAddImm = 5,  // r[dst] = r[a] + r[b] * imm
  kMul = 6,        // r[dst] = r[a] * r[b]
  kPowImm = 7,     // r[dst] = r[a] ^ imm, imm >= 0
  kFloorDiv = 8,   // r[dst] = floordiv(r[a], r[b])
  kCeilDiv = 9,    // r[dst] = ceildiv(r[a], r[b])
  kMod = 10,       // r[dst] = mod(r[a], r[b])
  kMin = 11,       // r[dst] = min(r[a], r[b])
  kMax = 12,       // r[dst] = max(r[a], r[b])
  kStore = 13,     // out[dst] = r[a]
};

const char* shape_op_name(ShapeOp op);

struct ShapeInstruction {
  ShapeOp op;
  int32_t dst;
  int32_t a;
  int32_t b;
  int64_t imm;

  friend bool operator==(const ShapeInstruction&, const ShapeInstruction&) = default;
};

class ShapeProgram {
 public:
  ShapeProgram() = default;  // no inputs, no outputs

  // Rebuilds a program from serialised parts. Rejects any instruction that reads a register
  // before writing it, indexes out of range, or leaves an output unwritten, so run() needs no
  // per-instruction checks.
  static Expected<ShapeProgram> from_instructions(std::vector<ShapeInstruction> code,
                                                  size_t num_inputs, size_t num_outputs,
                                                  size_t num_registers);

  // Evaluates with Python division semantics and checked int64 arithmetic; performs no heap
  // allocation unless it returns an error. outputs.size() must equal num_outputs() and
  // scratch.size() be at least scratch_size().
  Status run(std::span<const int64_t> inputs, std::span<int64_t> outputs,
             std::span<int64_t> scratch) const;

  // The instructions (ascending indices) that store every output input `input` reaches, with
  // every instruction whose result they read. After a run(), when that input alone changes,
  // run_slice() over them leaves `outputs` as run() would: the outputs it does not store do not
  // depend on the input. (An execution symbol bound mid-run moves a few tensors' sizes, not the
  // whole plan.)
  std::vector<uint32_t> slice_for_input(size_t input) const;
  Status run_slice(std::span<const uint32_t> slice, std::span<const int64_t> inputs,
                   std::span<int64_t> outputs, std::span<int64_t> scratch) const;

  size_t scratch_size() const { return num_registers_; }
  size_t num_inputs() const { return num_inputs_; }
  size_t num_outputs() const { return num_outputs_; }
  std::span<const ShapeInstruction> instructions() const { return code_; }

  // One instruction per line (`r3 = mul r1, r2`), for goldens and the studio.
  std::string to_string() const;

 private:
  Status check_spans(std::span<const int64_t> inputs, std::span<int64_t> outputs,
                     std::span<int64_t> scratch) const;

  std::vector<ShapeInstruction> code_;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
  size_t num_registers_ = 0;
};

}  // namespace sod2::rt
