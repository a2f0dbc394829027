#include "runtime/package/manifest_reader.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <set>

#include "runtime/package/format.h"
#include "runtime/package/sod2_package.pb.h"
#include "runtime/tensor/narrow_float.h"

namespace sod2::rt {
namespace package_detail {

Expected<DType> read_dtype(uint32_t raw, bool allow_unsized, const std::string& what) {
  if (raw > 255 || !is_known_dtype(static_cast<uint8_t>(raw))) {
    return parse_error(what + ": unknown dtype " + std::to_string(raw));
  }
  const DType t = static_cast<DType>(raw);
  if (!allow_unsized && dtype_size(t) == 0) {
    return parse_error(what + ": dtype " + dtype_name(t) + " has no fixed size");
  }
  return t;
}

Expected<Tensor> read_tensor(const pkg::TensorRef& t, std::span<const uint8_t> blob,
                             bool allow_inline, const std::string& what) {
  // Narrower storage (float16, int8 codes) is widened by the program's constants reader only;
  // anywhere else its bytes would be read as the wrong type.
  if (t.stored_dtype() != 0) {
    return parse_error(what + ": stored at another width (dtype " +
                       std::to_string(t.stored_dtype()) + "), which only program constants may be");
  }
  SOD2_ASSIGN_OR_RETURN(const DType dtype, read_dtype(t.dtype(), false, what));
  if (!Shape::fits(static_cast<size_t>(t.dims_size()))) {
    return parse_error(what + ": rank " + std::to_string(t.dims_size()) + " is above the maximum " +
                       std::to_string(kMaxRank));
  }
  uint64_t bytes = dtype_size(dtype);
  for (int i = 0; i < t.dims_size(); ++i) {
    const int64_t d = t.dims(i);
    if (d < 0) return parse_error(what + ": dim " + std::to_string(i) + " is negative");
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) {
      return parse_error(what + ": dims overflow a 64-bit byte size");
    }
  }
  if (bytes > static_cast<uint64_t>(INT64_MAX)) {
    return parse_error(what + ": dims overflow a 64-bit byte size");
  }
  if (t.length() != bytes) {
    return parse_error(what + ": stores " + std::to_string(t.length()) + " bytes but " +
                       dtype_name(dtype) + " with these dims needs " + std::to_string(bytes));
  }
  Tensor out;
  out.dtype = dtype;
  out.shape = Shape(std::span<const int64_t>(t.dims().data(), static_cast<size_t>(t.dims_size())));
  if (t.is_inline()) {
    if (!allow_inline) return parse_error(what + ": must be stored in the weight blob, not inline");
    if (t.inline_data().size() != bytes) {
      return parse_error(what + ": inline data is " + std::to_string(t.inline_data().size()) +
                         " bytes, expected " + std::to_string(bytes));
    }
    out.data = const_cast<char*>(t.inline_data().data());
    return out;
  }
  if (t.offset() % kPackageAlignment != 0) {
    return parse_error(what + ": blob offset " + std::to_string(t.offset()) + " is not " +
                       std::to_string(kPackageAlignment) + "-byte aligned");
  }
  if (t.offset() > blob.size() || bytes > blob.size() - t.offset()) {
    return parse_error(what + ": bytes [" + std::to_string(t.offset()) + ", +" +
                       std::to_string(bytes) + ") lie outside the weight blob (" +
                       std::to_string(blob.size()) + " bytes)");
  }
  out.data = const_cast<uint8_t*>(blob.data() + t.offset());
  return out;
}

}  // namespace package_detail

namespace {

using package_detail::read_dtype;

std::string n(uint64_t v) { return std::to_string(v); }

// Checked before from_instructions(), which sizes bitmaps by these counts and whose result the
// session sizes buffers by: a compiled program writes every register and output at least once,
// so neither count can exceed the instructions that write it.
Expected<rt::ShapeProgram> read_shape_program(const pkg::ShapeProgram& sp, size_t num_symbols,
                                              uint64_t expected_outputs, const std::string& what) {
  uint64_t stores = 0;
  std::vector<rt::ShapeInstruction> code;
  code.reserve(static_cast<size_t>(sp.code_size()));
  for (int i = 0; i < sp.code_size(); ++i) {
    const pkg::Instruction& in = sp.code(i);
    if (in.op() > static_cast<uint32_t>(rt::ShapeOp::kStore)) {
      return parse_error(what + ": instruction " + std::to_string(i) + " has unknown opcode " +
                         n(in.op()));
    }
    const auto op = static_cast<rt::ShapeOp>(in.op());
    stores += op == rt::ShapeOp::kStore;
    code.push_back({op, in.dst(), in.a(), in.b(), in.imm()});
  }
  const uint64_t writes = code.size() - stores;
  if (sp.num_registers() > writes) {
    return parse_error(what + ": " + n(sp.num_registers()) + " registers but only " + n(writes) +
                       " instructions write one");
  }
  if (sp.num_outputs() != expected_outputs) {
    return parse_error(what + ": " + n(sp.num_outputs()) + " outputs, expected " +
                       n(expected_outputs));
  }
  if (sp.num_outputs() > stores) {
    return parse_error(what + ": " + n(sp.num_outputs()) + " outputs but only " + n(stores) +
                       " store instructions");
  }
  // An empty program (no code, no outputs) may declare no inputs: the session never runs it.
  const bool empty = code.empty() && sp.num_outputs() == 0;
  if (sp.num_inputs() != num_symbols && !(empty && sp.num_inputs() == 0)) {
    return parse_error(what + ": " + n(sp.num_inputs()) + " inputs, but the package has " +
                       n(num_symbols) + " symbols");
  }
  auto p = rt::ShapeProgram::from_instructions(std::move(code), sp.num_inputs(), sp.num_outputs(),
                                               sp.num_registers());
  if (!p.ok()) return parse_error(what + ": " + p.status().message());
  return std::move(*p);
}

Status read_symbols(const pkg::Manifest& m, ProgramDesc* p) {
  for (int i = 0; i < m.symbols_size(); ++i) {
    const pkg::Symbol& s = m.symbols(i);
    const std::string what = "symbol " + std::to_string(i) + " ('" + s.name() + "')";
    if (s.lo() < 0 || s.lo() > s.hi() || s.multiple() < 1) {
      return parse_error(what + ": bad range " + std::to_string(s.lo()) + ":" +
                         std::to_string(s.hi()) + ":" + std::to_string(s.multiple()) +
                         " (needs 0 <= lo <= hi and multiple >= 1)");
    }
    p->symbols.push_back({s.name(), s.execution(), s.lo(), s.hi(), s.multiple()});
  }
  return Status::ok_status();
}

Status read_inputs(const pkg::Manifest& m, ProgramDesc* p) {
  for (int i = 0; i < m.inputs_size(); ++i) {
    const pkg::InputSignature& s = m.inputs(i);
    const std::string what = "input " + std::to_string(i) + " ('" + s.name() + "')";
    SOD2_ASSIGN_OR_RETURN(const DType dtype, read_dtype(s.dtype(), true, what));
    if (s.rank() < 0 || s.rank() > kMaxRank) {
      return parse_error(what + ": rank " + std::to_string(s.rank()) + " is outside 0.." +
                         std::to_string(kMaxRank));
    }
    if (s.type() > kMaxValueType)
      return parse_error(what + ": unknown value type " + std::to_string(s.type()));
    const auto type = static_cast<ValueType>(s.type());
    if (type != ValueType::kTensor && s.rank() != 0)
      return parse_error(what + ": a " + value_type_name(type) + " input has no rank");
    p->inputs.push_back({s.name(), dtype, s.rank(), type});
  }
  for (int i = 0; i < m.input_dims_size(); ++i) {
    const pkg::InputDim& d = m.input_dims(i);
    const std::string what = "input dim " + std::to_string(i);
    if (d.input() < 0 || d.input() >= m.inputs_size()) {
      return parse_error(what + ": input " + std::to_string(d.input()) + " out of range (" +
                         std::to_string(m.inputs_size()) + " inputs)");
    }
    if (d.dim() < 0 || d.dim() >= m.inputs(d.input()).rank()) {
      return parse_error(what + ": dim " + std::to_string(d.dim()) + " out of range for rank " +
                         std::to_string(m.inputs(d.input()).rank()));
    }
    if (d.symbol() < -1 || d.symbol() >= m.symbols_size() || (d.symbol() == -1 && d.fixed() < 0)) {
      return parse_error(what + ": needs a symbol in 0.." + std::to_string(m.symbols_size() - 1) +
                         " or a fixed size >= 0 (symbol " + std::to_string(d.symbol()) +
                         ", fixed " + std::to_string(d.fixed()) + ")");
    }
    InputDimDesc out;
    out.input = d.input();
    out.dim = d.dim();
    out.fixed = d.symbol() < 0 ? d.fixed() : -1;
    out.symbol = d.symbol();
    p->input_dims.push_back(out);
  }
  return Status::ok_status();
}

// A float32 constant stored narrower (float16, or int8 codes with a scale per slice of its first
// dim): checked as a tensor of the stored type with the same dims, then widened into memory the
// program owns.
Expected<ConstantTensor> read_narrow_constant(const pkg::TensorRef& ref,
                                              std::span<const uint8_t> blob,
                                              const std::string& what) {
  const bool half = ref.stored_dtype() == static_cast<uint32_t>(DType::kFloat16);
  const bool codes = ref.stored_dtype() == static_cast<uint32_t>(DType::kInt8);
  if (ref.dtype() != static_cast<uint32_t>(DType::kFloat) || !(half || codes)) {
    return parse_error(what + ": stored as dtype " + std::to_string(ref.stored_dtype()) +
                       " for dtype " + std::to_string(ref.dtype()) +
                       " (only float32 constants may be stored, as float16 or int8)");
  }
  if (half && ref.scales_size() != 0)
    return parse_error(what + ": float16 storage takes no scales");
  pkg::TensorRef stored = ref;
  stored.set_dtype(ref.stored_dtype());
  stored.set_stored_dtype(0);
  stored.clear_scales();
  SOD2_ASSIGN_OR_RETURN(const Tensor narrow,
                        package_detail::read_tensor(stored, blob, false, what));
  const int64_t n = narrow.shape.numel();
  HostTensor wide(DType::kFloat, narrow.shape);
  float* dst = wide.data<float>();
  if (half) {
    // read_tensor checked the offset 64-byte aligned: 16-bit loads are aligned.
    widen_to_float(DType::kFloat16, static_cast<const uint16_t*>(narrow.data), dst, n);
    return ConstantTensor(std::move(wide));
  }
  if (narrow.shape.rank() == 0 || ref.scales_size() != narrow.shape[0]) {
    return parse_error(what + ": int8 storage needs one scale per slice of the first dim (" +
                       std::to_string(narrow.shape.rank() == 0 ? 0 : narrow.shape[0]) + "), got " +
                       std::to_string(ref.scales_size()));
  }
  for (int k = 0; k < ref.scales_size(); ++k) {
    if (!(ref.scales(k) >= 0.f) || !std::isfinite(ref.scales(k)))
      return parse_error(what + ": scale " + std::to_string(k) + " is not a finite value >= 0");
  }
  const int64_t slice = narrow.shape[0] == 0 ? 0 : n / narrow.shape[0];
  const auto* stored_codes = static_cast<const int8_t*>(narrow.data);
  for (int64_t i = 0; i < n; ++i) {
    const int8_t code = stored_codes[i];
    dst[i] = static_cast<float>(code) * ref.scales(static_cast<int>(i / slice));
  }
  return ConstantTensor(std::move(wide));
}

Status read_constants(const pkg::Manifest& m, std::span<const uint8_t> blob, ProgramDesc* p) {
  p->constants.reserve(static_cast<size_t>(m.constants_size()));
  for (int i = 0; i < m.constants_size(); ++i) {
    const std::string what = "constant " + std::to_string(i);
    if (m.constants(i).stored_dtype() != 0) {
      SOD2_ASSIGN_OR_RETURN(ConstantTensor c, read_narrow_constant(m.constants(i), blob, what));
      p->constants.push_back(std::move(c));
      continue;
    }
    SOD2_ASSIGN_OR_RETURN(const Tensor t,
                          package_detail::read_tensor(m.constants(i), blob, false, what));
    p->constants.push_back(ConstantTensor::borrowed(t));
  }
  return Status::ok_status();
}

// The grid's shape is checked here; Session::create checks it against the plan again, since a
// program built in memory never passes through this reader.
Status read_plan_versions(const pkg::Manifest& m, ProgramDesc* p) {
  constexpr uint64_t kMaxCells = 4096;
  uint64_t cells = m.plan_grid().symbols_size() > 0 ? 1 : 0;
  for (int k = 0; k < m.plan_grid().symbols_size(); ++k) {
    const pkg::PlanGridSymbol& g = m.plan_grid().symbols(k);
    const std::string what = "plan grid symbol " + std::to_string(k);
    if (g.symbol() < 0 || g.symbol() >= m.symbols_size())
      return parse_error(what + ": symbol " + std::to_string(g.symbol()) + " out of range");
    if (g.upper_size() == 0 || cells * static_cast<uint64_t>(g.upper_size()) > kMaxCells)
      return parse_error(what + ": " + std::to_string(g.upper_size()) +
                         " buckets (the grid may have 1.." + n(kMaxCells) + " cells)");
    std::vector<int64_t> uppers(g.upper().begin(), g.upper().end());
    if (!std::is_sorted(uppers.begin(), uppers.end()))
      return parse_error(what + ": bucket bounds are not ascending");
    cells *= static_cast<uint64_t>(g.upper_size());
    p->plan_grid.symbols.push_back(g.symbol());
    p->plan_grid.uppers.push_back(std::move(uppers));
  }
  if (static_cast<uint64_t>(m.version_of_cell_size()) != cells)
    return parse_error("the plan grid has " + n(cells) + " cells but " +
                       std::to_string(m.version_of_cell_size()) + " cell entries");
  for (int c = 0; c < m.version_of_cell_size(); ++c) {
    const int32_t v = m.version_of_cell(c);
    if (v < -1 || v >= m.plan_versions_size())
      return parse_error("plan grid cell " + std::to_string(c) + " names version " +
                         std::to_string(v) + " of " + std::to_string(m.plan_versions_size()));
    p->version_of_cell.push_back(v);
  }
  if (m.plan_versions_size() > 0 && (cells == 0 || p->num_arena_tensors == 0))
    return parse_error("plan versions without a grid or a plan");
  for (int i = 0; i < m.plan_versions_size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(rt::ShapeProgram prog,
                          read_shape_program(m.plan_versions(i), p->symbols.size(),
                                             2 * static_cast<uint64_t>(p->num_arena_tensors) + 1,
                                             "plan version " + std::to_string(i)));
    p->plan_versions.push_back(std::move(prog));
  }
  return Status::ok_status();
}

}  // namespace

namespace {

// The generated shaders (FORMAT.md §GPU kernels), checked so a session can index by them: a run
// of main-graph nodes, values that exist, a rank and input count the push constants hold, and
// bytes that look like SPIR-V (the driver validates the rest when the pipeline is made).
Status read_gpu_kernels(const pkg::Manifest& m, ProgramDesc* p) {
  if (m.gpu_kernels_size() == 0) return Status::ok_status();
  if (p->graphs.empty()) return parse_error("GPU kernels come without a main graph");
  const GraphDesc& g = p->graphs[0];
  constexpr size_t kMaxShaderBytes = size_t{4} << 20;
  std::set<std::string> names;
  for (int i = 0; i < m.gpu_kernels_size(); ++i) {
    const pkg::GpuKernel& k = m.gpu_kernels(i);
    const std::string what = "GPU kernel " + std::to_string(i);
    GpuKernelDesc d;
    d.name = k.name();
    if (d.name.empty() || d.name.size() > 256) return parse_error(what + " has no usable name");
    if (!names.insert(d.name).second) return parse_error(what + " repeats the name " + d.name);
    if (k.nodes_size() == 0) return parse_error(what + " replaces no node");
    for (int j = 0; j < k.nodes_size(); ++j) {
      const int32_t node = k.nodes(j);
      if (node < 0 || static_cast<size_t>(node) >= g.nodes.size() ||
          (j > 0 && node != k.nodes(j - 1) + 1)) {
        return parse_error(what + " names node " + std::to_string(node) +
                           ", not the next of a run of the main graph's " +
                           std::to_string(g.nodes.size()) + " nodes");
      }
      d.nodes.push_back(node);
    }
    if (k.inputs_size() > kMaxGpuKernelInputs || k.rank() < 0 || k.rank() > kMaxGpuRank ||
        gpu_group_push_words(static_cast<uint32_t>(k.inputs_size()),
                             static_cast<uint32_t>(k.rank())) > 32) {
      return parse_error(what + " has " + std::to_string(k.inputs_size()) + " inputs at rank " +
                         std::to_string(k.rank()) + ", more than its push constants hold");
    }
    auto value_ok = [&](int32_t v) { return v >= 0 && static_cast<size_t>(v) < g.values.size(); };
    for (int32_t v : k.inputs()) {
      if (!value_ok(v))
        return parse_error(what + " reads value " + std::to_string(v) + ", which does not exist");
      d.inputs.push_back(v);
    }
    if (!value_ok(k.output())) return parse_error(what + " writes a value that does not exist");
    d.output = k.output();
    d.rank = k.rank();
    const std::string& spirv = k.spirv();
    if (spirv.size() < 20 || spirv.size() % 4 != 0 || spirv.size() > kMaxShaderBytes)
      return parse_error(what + " holds " + std::to_string(spirv.size()) +
                         " bytes, not a SPIR-V module");
    d.spirv.resize(spirv.size() / 4);
    std::memcpy(d.spirv.data(), spirv.data(), spirv.size());
    if (d.spirv[0] != 0x07230203u) return parse_error(what + " is not SPIR-V (bad magic number)");
    if (k.source().size() > kMaxShaderBytes) return parse_error(what + "'s source is too long");
    d.source = k.source();
    p->gpu_kernels.push_back(std::move(d));
  }
  return Status::ok_status();
}

}  // namespace

Expected<ProgramDesc> program_from_manifest(const pkg::Manifest& m, std::span<const uint8_t> blob,
                                            std::vector<ConstantTensor>* constants) {
  ProgramDesc p;
  SOD2_RETURN_IF_ERROR(read_symbols(m, &p));
  SOD2_RETURN_IF_ERROR(read_inputs(m, &p));
  if (m.has_family()) return parse_error("a family package's variant is itself a family");
  if (constants) {
    if (m.constants_size() != 0) {
      return parse_error("a family variant lists " + std::to_string(m.constants_size()) +
                         " constants of its own besides the family weights");
    }
    p.constants = std::move(*constants);
  } else {
    SOD2_RETURN_IF_ERROR(read_constants(m, blob, &p));
  }
  // Before the graphs: values' arena indices are checked against the plan's tensor count.
  const uint64_t arena = m.num_arena_tensors();
  if (arena > static_cast<uint64_t>(INT32_MAX)) {
    return parse_error("num_arena_tensors " + n(arena) + " is out of range");
  }
  p.num_arena_tensors = static_cast<size_t>(arena);
  const bool no_plan = arena == 0 && m.plan_program().num_outputs() == 0;
  SOD2_ASSIGN_OR_RETURN(p.plan_program,
                        read_shape_program(m.plan_program(), p.symbols.size(),
                                           no_plan ? 0 : 2 * arena + 1, "plan program"));
  for (int i = 0; i < m.assumptions_size(); ++i) {
    p.assumptions.push_back({m.assumptions(i).text(), m.assumptions(i).node()});
  }
  SOD2_ASSIGN_OR_RETURN(
      p.assumption_program,
      read_shape_program(m.assumption_program(), p.symbols.size(),
                         2 * static_cast<uint64_t>(m.assumptions_size()), "assumption program"));
  SOD2_RETURN_IF_ERROR(read_plan_versions(m, &p));
  // Optional: a package without them lays every binding out with its plan versions.
  const bool no_bounds = m.execution_bounds().num_outputs() == 0;
  SOD2_ASSIGN_OR_RETURN(p.execution_bounds,
                        read_shape_program(m.execution_bounds(), p.symbols.size(),
                                           no_bounds ? 0 : p.symbols.size(), "execution bounds"));
  if (m.arena_known_steps_size() != 0) {
    if (static_cast<uint64_t>(m.arena_known_steps_size()) != arena) {
      return parse_error("arena_known_steps has " + n(m.arena_known_steps_size()) +
                         " entries for " + n(arena) + " arena tensors");
    }
    for (int i = 0; i < m.arena_known_steps_size(); ++i) {
      if (m.arena_known_steps(i) < 0)
        return parse_error("arena_known_steps[" + std::to_string(i) + "] is negative");
      p.arena_known_steps.push_back(m.arena_known_steps(i));
    }
  }
  SOD2_RETURN_IF_ERROR(package_detail::read_graphs(m, blob, &p));
  // Optional: without it a profile shows times but no GOP/s.
  const uint64_t main_steps = p.graphs.empty() ? 0 : p.graphs[0].nodes.size();
  SOD2_ASSIGN_OR_RETURN(
      p.step_work,
      read_shape_program(m.step_work(), p.symbols.size(),
                         m.step_work().num_outputs() == 0 ? 0 : main_steps, "step work"));
  SOD2_RETURN_IF_ERROR(read_gpu_kernels(m, &p));
  return p;
}

}  // namespace sod2::rt
