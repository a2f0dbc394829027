// ShapeProgram: validation, the allocation-free interpreter, and the text form.
#include "runtime/program/shape_program.h"

#include <algorithm>

#include "runtime/program/int_math.h"

namespace sod2::rt {
namespace {

bool is_binary(ShapeOp op) {
  switch (op) {
    case ShapeOp::kAdd:
    case ShapeOp::kMulAddImm:
    case ShapeOp::kMul:
    case ShapeOp::kFloorDiv:
    case ShapeOp::kCeilDiv:
    case ShapeOp::kMod:
    case ShapeOp::kMin:
    case ShapeOp::kMax: return true;
    default: return false;
  }
}

bool reads_a(ShapeOp op) { return op != ShapeOp::kLoadImm && op != ShapeOp::kLoadInput; }

// Only reached on failure, so building the message may allocate.
[[gnu::noinline, gnu::cold]] Status run_error(size_t index, const ShapeInstruction& ins) {
  const bool division =
      ins.op == ShapeOp::kFloorDiv || ins.op == ShapeOp::kCeilDiv || ins.op == ShapeOp::kMod;
  return invalid_argument(std::string("shape program: ") +
                          (division ? "division by zero or overflow" : "int64 overflow") +
                          " at instruction " + std::to_string(index) + " (" +
                          shape_op_name(ins.op) + ")");
}

}  // namespace

const char* shape_op_name(ShapeOp op) {
  switch (op) {
    case ShapeOp::kLoadImm: return "imm";
    case ShapeOp::kLoadInput: return "input";
    case ShapeOp::kAdd: return "add";
    case ShapeOp::kAddImm: return "add_imm";
    case ShapeOp::kMulImm: return "mul_imm";
    case ShapeOp::kMulAddImm: return "mul_add_imm";
    case ShapeOp::kMul: return "mul";
    case ShapeOp::kPowImm: return "pow_imm";
    case ShapeOp::kFloorDiv: return "floordiv";
    case ShapeOp::kCeilDiv: return "ceildiv";
    case ShapeOp::kMod: return "mod";
    case ShapeOp::kMin: return "min";
    case ShapeOp::kMax: return "max";
    case ShapeOp::kStore: return "store";
  }
  return "?";
}

Expected<ShapeProgram> ShapeProgram::from_instructions(std::vector<ShapeInstruction> code,
                                                       size_t num_inputs, size_t num_outputs,
                                                       size_t num_registers) {
  if (num_registers > static_cast<size_t>(INT32_MAX) ||
      num_inputs > static_cast<size_t>(INT32_MAX) || num_outputs > static_cast<size_t>(INT32_MAX)) {
    return invalid_argument("shape program: sizes exceed int32");
  }
  std::vector<bool> written(num_registers, false), stored(num_outputs, false);
  auto bad = [](size_t i, const std::string& why) {
    return invalid_argument("shape program: instruction " + std::to_string(i) + ": " + why);
  };
  auto readable = [&](int32_t r) {
    return r >= 0 && static_cast<size_t>(r) < num_registers && written[static_cast<size_t>(r)];
  };
  for (size_t i = 0; i < code.size(); ++i) {
    const ShapeInstruction& ins = code[i];
    if (static_cast<uint8_t>(ins.op) > static_cast<uint8_t>(ShapeOp::kStore)) {
      return bad(i, "unknown opcode " + std::to_string(static_cast<int>(ins.op)));
    }
    if (ins.op == ShapeOp::kLoadInput && (ins.a < 0 || static_cast<size_t>(ins.a) >= num_inputs)) {
      return bad(i, "input index out of range");
    }
    if (reads_a(ins.op) && !readable(ins.a)) return bad(i, "reads register a before writing it");
    if (is_binary(ins.op) && !readable(ins.b)) return bad(i, "reads register b before writing it");
    if (ins.op == ShapeOp::kPowImm && ins.imm < 0) return bad(i, "negative exponent");
    if (ins.op == ShapeOp::kStore) {
      if (ins.dst < 0 || static_cast<size_t>(ins.dst) >= num_outputs) {
        return bad(i, "output index out of range");
      }
      stored[static_cast<size_t>(ins.dst)] = true;
    } else {
      if (ins.dst < 0 || static_cast<size_t>(ins.dst) >= num_registers) {
        return bad(i, "register out of range");
      }
      written[static_cast<size_t>(ins.dst)] = true;
    }
  }
  for (size_t o = 0; o < num_outputs; ++o) {
    if (!stored[o])
      return invalid_argument("shape program: output " + std::to_string(o) + " is never stored");
  }
  ShapeProgram p;
  p.code_ = std::move(code);
  p.num_inputs_ = num_inputs;
  p.num_outputs_ = num_outputs;
  p.num_registers_ = num_registers;
  return p;
}

namespace {

// One instruction; false where it overflows or divides by zero.
[[gnu::always_inline]] inline bool execute(const ShapeInstruction& ins, int64_t* r,
                                           const int64_t* in, int64_t* out) {
  switch (ins.op) {
    case ShapeOp::kLoadImm: r[ins.dst] = ins.imm; return true;
    case ShapeOp::kLoadInput: r[ins.dst] = in[ins.a]; return true;
    case ShapeOp::kAdd: return !__builtin_add_overflow(r[ins.a], r[ins.b], &r[ins.dst]);
    case ShapeOp::kAddImm: return !__builtin_add_overflow(r[ins.a], ins.imm, &r[ins.dst]);
    case ShapeOp::kMulImm: return !__builtin_mul_overflow(r[ins.a], ins.imm, &r[ins.dst]);
    case ShapeOp::kMulAddImm: {
      int64_t t = 0;
      return !__builtin_mul_overflow(r[ins.b], ins.imm, &t) &&
             !__builtin_add_overflow(r[ins.a], t, &r[ins.dst]);
    }
    case ShapeOp::kMul: return !__builtin_mul_overflow(r[ins.a], r[ins.b], &r[ins.dst]);
    case ShapeOp::kPowImm: return int_math::pow_checked(r[ins.a], ins.imm, &r[ins.dst]);
    case ShapeOp::kFloorDiv: return int_math::floordiv_checked(r[ins.a], r[ins.b], &r[ins.dst]);
    case ShapeOp::kCeilDiv: return int_math::ceildiv_checked(r[ins.a], r[ins.b], &r[ins.dst]);
    case ShapeOp::kMod: return int_math::mod_checked(r[ins.a], r[ins.b], &r[ins.dst]);
    case ShapeOp::kMin: r[ins.dst] = std::min(r[ins.a], r[ins.b]); return true;
    case ShapeOp::kMax: r[ins.dst] = std::max(r[ins.a], r[ins.b]); return true;
    case ShapeOp::kStore: out[ins.dst] = r[ins.a]; return true;
  }
  return true;
}

}  // namespace

Status ShapeProgram::check_spans(std::span<const int64_t> inputs, std::span<int64_t> outputs,
                                 std::span<int64_t> scratch) const {
  if (inputs.size() != num_inputs_ || outputs.size() != num_outputs_ ||
      scratch.size() < num_registers_) {
    return invalid_argument("shape program: expected " + std::to_string(num_inputs_) + " inputs, " +
                            std::to_string(num_outputs_) + " outputs and " +
                            std::to_string(num_registers_) + " scratch registers, got " +
                            std::to_string(inputs.size()) + ", " + std::to_string(outputs.size()) +
                            " and " + std::to_string(scratch.size()));
  }
  return {};
}

Status ShapeProgram::run(std::span<const int64_t> inputs, std::span<int64_t> outputs,
                         std::span<int64_t> scratch) const {
  SOD2_RETURN_IF_ERROR(check_spans(inputs, outputs, scratch));
  // Indices were validated by from_instructions(), so the loop does no range checks.
  for (size_t i = 0; i < code_.size(); ++i)
    if (!execute(code_[i], scratch.data(), inputs.data(), outputs.data())) [[unlikely]]
      return run_error(i, code_[i]);
  return {};
}

Status ShapeProgram::run_slice(std::span<const uint32_t> slice, std::span<const int64_t> inputs,
                               std::span<int64_t> outputs, std::span<int64_t> scratch) const {
  SOD2_RETURN_IF_ERROR(check_spans(inputs, outputs, scratch));
  for (const uint32_t i : slice) {
    if (i >= code_.size()) return invalid_argument("shape program: a slice past its instructions");
    if (!execute(code_[i], scratch.data(), inputs.data(), outputs.data())) [[unlikely]]
      return run_error(i, code_[i]);
  }
  return {};
}

std::vector<uint32_t> ShapeProgram::slice_for_input(size_t input) const {
  // Forward: which registers hold a value reached by the input, and which outputs it reaches
  // through their last store (a register is rewritten as it is reused).
  std::vector<char> reached(num_registers_, 0), output_reached(num_outputs_, 0);
  std::vector<int64_t> last_store(num_outputs_, -1);
  for (size_t i = 0; i < code_.size(); ++i) {
    const ShapeInstruction& ins = code_[i];
    const bool from_input = ins.op == ShapeOp::kLoadInput && static_cast<size_t>(ins.a) == input;
    const bool hit = from_input || (reads_a(ins.op) && reached[static_cast<size_t>(ins.a)]) ||
                     (is_binary(ins.op) && reached[static_cast<size_t>(ins.b)]);
    if (ins.op == ShapeOp::kStore) {
      output_reached[static_cast<size_t>(ins.dst)] = hit ? 1 : 0;
      last_store[static_cast<size_t>(ins.dst)] = static_cast<int64_t>(i);
    } else {
      reached[static_cast<size_t>(ins.dst)] = hit ? 1 : 0;
    }
  }
  // Backward: those last stores and every instruction whose result they read, at the place it
  // is read from.
  std::vector<char> wanted(num_registers_, 0), keep(code_.size(), 0);
  for (size_t i = code_.size(); i-- > 0;) {
    const ShapeInstruction& ins = code_[i];
    const size_t dst = static_cast<size_t>(ins.dst);
    if (ins.op == ShapeOp::kStore) {
      if (!output_reached[dst] || last_store[dst] != static_cast<int64_t>(i)) continue;
    } else {
      if (!wanted[dst]) continue;
      wanted[dst] = 0;
    }
    keep[i] = 1;
    if (reads_a(ins.op)) wanted[static_cast<size_t>(ins.a)] = 1;
    if (is_binary(ins.op)) wanted[static_cast<size_t>(ins.b)] = 1;
  }
  std::vector<uint32_t> slice;
  for (size_t i = 0; i < code_.size(); ++i)
    if (keep[i]) slice.push_back(static_cast<uint32_t>(i));
  return slice;
}

std::string ShapeProgram::to_string() const {
  std::string s = "inputs " + std::to_string(num_inputs_) + ", outputs " +
                  std::to_string(num_outputs_) + ", registers " + std::to_string(num_registers_) +
                  "\n";
  auto reg = [](int32_t r) { return "r" + std::to_string(r); };
  for (const ShapeInstruction& ins : code_) {
    const std::string name = shape_op_name(ins.op);
    switch (ins.op) {
      case ShapeOp::kLoadImm: s += reg(ins.dst) + " = " + std::to_string(ins.imm); break;
      case ShapeOp::kLoadInput: s += reg(ins.dst) + " = in" + std::to_string(ins.a); break;
      case ShapeOp::kAddImm:
      case ShapeOp::kMulImm:
      case ShapeOp::kPowImm:
        s += reg(ins.dst) + " = " + name + " " + reg(ins.a) + ", " + std::to_string(ins.imm);
        break;
      case ShapeOp::kMulAddImm:
        s += reg(ins.dst) + " = " + name + " " + reg(ins.a) + ", " + reg(ins.b) + ", " +
             std::to_string(ins.imm);
        break;
      case ShapeOp::kStore: s += "out" + std::to_string(ins.dst) + " = " + reg(ins.a); break;
      default: s += reg(ins.dst) + " = " + name + " " + reg(ins.a) + ", " + reg(ins.b); break;
    }
    s += '\n';
  }
  return s;
}

}  // namespace sod2::rt
