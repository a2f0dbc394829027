// compile_shape_program(): one register per distinct DAG node, emitted in dependency order. The
// instruction sequence per node mirrors evaluate() step for step (sum terms in term order,
// product factors in order, constant last), so both agree on values and on overflow.
#include <unordered_map>

#include "core/sym/shape_compiler.h"

namespace sod2::sym {

using rt::ShapeInstruction;
using rt::ShapeOp;
using rt::ShapeProgram;

namespace {

class Compiler {
 public:
  explicit Compiler(std::span<const Symbol> inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) input_index_.emplace(inputs[i].node(), i);
  }

  Expected<int32_t> emit(const SymExpr& e) {
    if (auto it = reg_of_.find(e.node()); it != reg_of_.end()) return it->second;
    SOD2_ASSIGN_OR_RETURN(int32_t r, emit_node(e));
    reg_of_.emplace(e.node(), r);
    return r;
  }

  void store(size_t output, int32_t reg) {
    code_.push_back({ShapeOp::kStore, static_cast<int32_t>(output), reg, 0, 0});
  }

  std::vector<ShapeInstruction>& code() { return code_; }
  size_t registers() const { return static_cast<size_t>(next_); }
  bool exhausted() const { return exhausted_; }

 private:
  int32_t fresh() {
    if (next_ == INT32_MAX) exhausted_ = true;
    return exhausted_ ? 0 : next_++;
  }

  int32_t op(ShapeOp o, int32_t a, int32_t b, int64_t imm) {
    const int32_t d = fresh();
    code_.push_back({o, d, a, b, imm});
    return d;
  }

  Expected<int32_t> emit_node(const SymExpr& e) {
    auto ops = e.operands();
    switch (e.kind()) {
      case Kind::kConst: return op(ShapeOp::kLoadImm, 0, 0, e.constant_term());
      case Kind::kSymbol: {
        auto it = input_index_.find(e.node());
        if (it == input_index_.end()) {
          return not_found("shape program: symbol '" + e.symbol_name() + "' is not an input");
        }
        return op(ShapeOp::kLoadInput, static_cast<int32_t>(it->second), 0, 0);
      }
      case Kind::kOverflow:
        return invalid_argument("shape program: an expression overflowed int64 when built");
      case Kind::kSum: {
        int32_t acc = -1;
        for (size_t i = 0; i < ops.size(); ++i) {
          SOD2_ASSIGN_OR_RETURN(int32_t m, emit(ops[i]));
          const int64_t c = e.coefficients()[i];
          if (i == 0) {
            acc = c == 1 ? m : op(ShapeOp::kMulImm, m, 0, c);
          } else {
            acc = c == 1 ? op(ShapeOp::kAdd, acc, m, 0) : op(ShapeOp::kMulAddImm, acc, m, c);
          }
        }
        if (e.constant_term() != 0) acc = op(ShapeOp::kAddImm, acc, 0, e.constant_term());
        return acc;
      }
      case Kind::kProduct: {
        int32_t acc = -1;
        for (size_t i = 0; i < ops.size(); ++i) {
          SOD2_ASSIGN_OR_RETURN(int32_t m, emit(ops[i]));
          const int64_t p = e.coefficients()[i];
          const int32_t f = p == 1 ? m : op(ShapeOp::kPowImm, m, 0, p);
          acc = i == 0 ? f : op(ShapeOp::kMul, acc, f, 0);
        }
        return acc;
      }
      case Kind::kFloorDiv:
      case Kind::kCeilDiv:
      case Kind::kMod: {
        SOD2_ASSIGN_OR_RETURN(int32_t a, emit(ops[0]));
        SOD2_ASSIGN_OR_RETURN(int32_t b, emit(ops[1]));
        const ShapeOp o = e.kind() == Kind::kFloorDiv  ? ShapeOp::kFloorDiv
                          : e.kind() == Kind::kCeilDiv ? ShapeOp::kCeilDiv
                                                       : ShapeOp::kMod;
        return op(o, a, b, 0);
      }
      case Kind::kMin:
      case Kind::kMax: {
        const ShapeOp o = e.kind() == Kind::kMin ? ShapeOp::kMin : ShapeOp::kMax;
        SOD2_ASSIGN_OR_RETURN(int32_t acc, emit(ops[0]));
        for (size_t i = 1; i < ops.size(); ++i) {
          SOD2_ASSIGN_OR_RETURN(int32_t b, emit(ops[i]));
          acc = op(o, acc, b, 0);
        }
        return acc;
      }
    }
    return internal_error("shape program: unknown expression kind");
  }

  std::unordered_map<const detail::Node*, size_t> input_index_;
  std::unordered_map<const detail::Node*, int32_t> reg_of_;
  std::vector<ShapeInstruction> code_;
  int32_t next_ = 0;
  bool exhausted_ = false;
};

}  // namespace

Expected<rt::ShapeProgram> compile_shape_program(std::span<const SymExpr> outputs,
                                                 std::span<const Symbol> inputs) {
  Compiler c(inputs);
  for (size_t i = 0; i < outputs.size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(int32_t r, c.emit(outputs[i]));
    c.store(i, r);
  }
  if (c.exhausted()) return invalid_argument("shape program: more than 2^31 registers");
  // Validation is cheap and keeps one path into a runnable program.
  return ShapeProgram::from_instructions(std::move(c.code()), inputs.size(), outputs.size(),
                                         c.registers());
}

}  // namespace sod2::sym
