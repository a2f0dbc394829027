#include "runtime/exec/session.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>
#include <thread>

#include "runtime/exec/blocked_values.h"
#include "runtime/exec/frame.h"
#include "runtime/exec/node_outputs.h"
#include "runtime/exec/process_info.h"
#include "runtime/kernels/elementwise_program.h"
#include "runtime/program/program_dataflow.h"
#include "runtime/tensor/sequence.h"

namespace sod2::rt {

Session::Session(ProgramDesc program, SessionOptions options)
    : program_(std::move(program)),
      pool_(options.shared_pool ? std::move(options.shared_pool)
                                : std::make_shared<ThreadPool>(options.threads)),
      backend_(std::move(options.backend)),
      arena_(options.shared_arena ? std::move(options.shared_arena)
             : backend_           ? std::make_shared<Arena>(backend_->arena_memory())
                                  : std::make_shared<Arena>()),
      profile_(options.profile) {}

void Session::reset_node_times() {
  const size_t nodes = program_.graphs[0].nodes.size();
  times_.total_ms.assign(nodes, 0.0);
  times_.last_start_ms.assign(nodes, 0.0);
  times_.last_ms.assign(nodes, 0.0);
  times_.last_output_shape.assign(nodes, Shape());
  times_.last_output_bytes.assign(nodes, 0);
  times_.body_total_ms.resize(program_.graphs.size());
  times_.body_calls.resize(program_.graphs.size());
  for (size_t g = 1; g < program_.graphs.size(); ++g) {
    times_.body_total_ms[g].assign(program_.graphs[g].nodes.size(), 0.0);
    times_.body_calls[g].assign(program_.graphs[g].nodes.size(), 0);
  }
  times_.runs = 0;
}

Session::~Session() {
  if (backend_ && attached_) backend_->detach();
}

namespace {

// Each graph's enclosing graph: -1 for the main graph and graphs no node runs, -2 for a graph
// two nodes of different graphs run (then nothing is known of its outer scope).
std::vector<int32_t> enclosing_graphs(const ProgramDesc& p) {
  std::vector<int32_t> enclosing(p.graphs.size(), -1);
  for (size_t g = 0; g < p.graphs.size(); ++g)
    for (const NodeDesc& node : p.graphs[g].nodes)
      for (int32_t sub : node.subgraphs) {
        if (sub <= 0 || static_cast<size_t>(sub) >= p.graphs.size()) continue;
        int32_t& e = enclosing[static_cast<size_t>(sub)];
        e = e == -1 || e == static_cast<int32_t>(g) ? static_cast<int32_t>(g) : -2;
      }
  return enclosing;
}

// The program constant that value `v` of graph `g` is, directly or through outer-scope
// references (a body reading its enclosing graph's weights); -1 when it is none.
int32_t constant_of(const ProgramDesc& p, const std::vector<int32_t>& enclosing, size_t g,
                    int32_t v) {
  // Each hop goes at least one graph up, so a well-formed program needs fewer hops than graphs.
  for (size_t hops = 0; hops <= p.graphs.size(); ++hops) {
    if (g >= p.graphs.size() || v < 0 || static_cast<size_t>(v) >= p.graphs[g].values.size())
      return -1;
    const ValueDesc& d = p.graphs[g].values[static_cast<size_t>(v)];
    if (d.storage == ValueStorage::kConstant)
      return d.constant >= 0 && static_cast<size_t>(d.constant) < p.constants.size() ? d.constant
                                                                                     : -1;
    if (d.storage != ValueStorage::kOuterScope || d.outer_levels < 1) return -1;
    int32_t up = static_cast<int32_t>(g);
    for (int32_t l = 0; l < d.outer_levels && up >= 0; ++l)
      up = static_cast<size_t>(up) < enclosing.size() ? enclosing[static_cast<size_t>(up)] : -1;
    if (up < 0) return -1;
    g = static_cast<size_t>(up);
    v = d.outer_value;
  }
  return -1;
}

// The node's info with, per input slot, whether the value is a program constant.
NodeInfo with_constant_inputs(const ProgramDesc& p, const std::vector<int32_t>& enclosing, size_t g,
                              const NodeDesc& node) {
  NodeInfo info = node.info;
  info.input_constant.assign(node.inputs.size(), false);
  for (size_t i = 0; i < node.inputs.size(); ++i)
    info.input_constant[i] = constant_of(p, enclosing, g, node.inputs[i]) >= 0;
  return info;
}

// Hands kernel `k` of `node` the program constants among its inputs (Kernel::prepare).
Status prepare_kernel(Kernel& k, const ProgramDesc& p, const std::vector<int32_t>& enclosing,
                      size_t g, const NodeDesc& node) {
  std::vector<Tensor> views(node.inputs.size());
  std::vector<const Tensor*> constants(node.inputs.size(), nullptr);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int32_t c = constant_of(p, enclosing, g, node.inputs[i]);
    if (c < 0) continue;
    views[i] = p.constants[static_cast<size_t>(c)].view();
    constants[i] = &views[i];
  }
  return k.prepare(constants);
}

// Marks, for every value of graph `outer` that a graph nested `levels` below node `n` reads
// through an outer-scope reference, node `n` as a reader.
void mark_nested_reads(const ProgramDesc& p, const GraphDesc& inner, int32_t levels, size_t n,
                       std::vector<int64_t>& last_read) {
  for (const ValueDesc& d : inner.values) {
    if (d.storage == ValueStorage::kOuterScope && d.outer_levels == levels && d.outer_value >= 0 &&
        static_cast<size_t>(d.outer_value) < last_read.size()) {
      last_read[static_cast<size_t>(d.outer_value)] =
          std::max<int64_t>(last_read[static_cast<size_t>(d.outer_value)], static_cast<int64_t>(n));
    }
  }
  for (const NodeDesc& node : inner.nodes)
    for (int32_t g : node.subgraphs)
      if (g > 0 && static_cast<size_t>(g) < p.graphs.size())
        mark_nested_reads(p, p.graphs[static_cast<size_t>(g)], levels + 1, n, last_read);
}

// releases[n]: the values the value buffer may hold whose last reader in `graph` is node n.
// Graph outputs are never released here: a body's outputs live until the control-flow op has
// taken them, the main graph's until the next run.
std::vector<std::vector<int32_t>> release_schedule(const ProgramDesc& p, const GraphDesc& graph) {
  const size_t nv = graph.values.size();
  std::vector<int64_t> last_read(nv, -1);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const NodeDesc& node = graph.nodes[n];
    for (int32_t v : node.outputs)
      if (v >= 0 && static_cast<size_t>(v) < nv)
        last_read[static_cast<size_t>(v)] =
            std::max<int64_t>(last_read[static_cast<size_t>(v)], static_cast<int64_t>(n));
    for (int32_t v : node.inputs)
      if (v >= 0 && static_cast<size_t>(v) < nv)
        last_read[static_cast<size_t>(v)] = static_cast<int64_t>(n);
    for (int32_t g : node.subgraphs)
      if (g > 0 && static_cast<size_t>(g) < p.graphs.size())
        mark_nested_reads(p, p.graphs[static_cast<size_t>(g)], 1, n, last_read);
  }
  for (int32_t v : graph.outputs)
    if (v >= 0 && static_cast<size_t>(v) < nv) last_read[static_cast<size_t>(v)] = -1;
  std::vector<std::vector<int32_t>> releases(graph.nodes.size());
  for (size_t v = 0; v < nv; ++v) {
    if (last_read[v] < 0 || graph.values[v].storage != ValueStorage::kHeap) continue;
    releases[static_cast<size_t>(last_read[v])].push_back(static_cast<int32_t>(v));
  }
  return releases;
}

// A sequence or optional input: of the declared kind, its tensors of the declared type.
Status check_non_tensor_input(const InputSignature& sig, const Tensor& t) {
  auto where = [&] { return "input '" + sig.name + "'"; };
  if (sig.type == ValueType::kSequence && !t.sequence)
    return invalid_argument(where() + " must be a sequence");
  if (t.none) return Status::ok_status();
  const DType got = t.sequence ? t.sequence->dtype() : t.dtype;
  if (sig.dtype != DType::kUndefined && got != DType::kUndefined && got != sig.dtype) {
    return invalid_argument(where() + " must hold " + dtype_name(sig.dtype) + ", got " +
                            dtype_name(got));
  }
  if (t.sequence) {
    for (size_t k = 0; k < t.sequence->size(); ++k)
      if (t.sequence->at(k).dtype() != t.sequence->dtype())
        return invalid_argument(where() + " element " + std::to_string(k) + " is " +
                                dtype_name(t.sequence->at(k).dtype()) + " in a sequence of " +
                                dtype_name(t.sequence->dtype()));
  } else if (t.data == nullptr && t.numel() > 0) {
    return invalid_argument(where() + " has no data");
  }
  return Status::ok_status();
}

}  // namespace

Expected<std::unique_ptr<Session>> Session::create(ProgramDesc program,
                                                   const KernelRegistry& registry,
                                                   SessionOptions options) {
  if (program.graphs.empty()) return invalid_model("the program has no graph");
  // The executor indexes these without further checks.
  const size_t plan_outputs = program.plan_program.num_outputs();
  const bool no_plan = plan_outputs == 0 && program.num_arena_tensors == 0;
  if ((!no_plan && plan_outputs != 2 * program.num_arena_tensors + 1) ||
      (!no_plan && program.plan_program.num_inputs() != program.symbols.size())) {
    return invalid_model("the memory plan program has " +
                         std::to_string(program.plan_program.num_inputs()) + " inputs and " +
                         std::to_string(program.plan_program.num_outputs()) + " outputs for " +
                         std::to_string(program.symbols.size()) + " symbols and " +
                         std::to_string(program.num_arena_tensors) + " tensors");
  }
  // The plan versions: one program per version shaped like plan_program, a valid grid, and a
  // version (or -1) per cell.
  const PlanGridDesc& grid = program.plan_grid;
  if (!program.plan_versions.empty() || !program.version_of_cell.empty() || !grid.symbols.empty()) {
    if (no_plan || grid.symbols.empty() || grid.symbols.size() != grid.uppers.size())
      return invalid_model("the plan versions come without a plan or a valid grid");
    constexpr size_t kMaxCells = 4096;
    size_t cells = 1;
    for (size_t k = 0; k < grid.symbols.size(); ++k) {
      const auto& u = grid.uppers[k];
      if (grid.symbols[k] < 0 || static_cast<size_t>(grid.symbols[k]) >= program.symbols.size() ||
          u.empty() || !std::is_sorted(u.begin(), u.end()) || cells * u.size() > kMaxCells) {
        return invalid_model("the plan version grid is malformed at its symbol " +
                             std::to_string(k));
      }
      cells *= u.size();
    }
    if (program.version_of_cell.size() != cells)
      return invalid_model("the plan version grid has " + std::to_string(cells) + " cells but " +
                           std::to_string(program.version_of_cell.size()) + " cell entries");
    for (int32_t v : program.version_of_cell)
      if (v < -1 || v >= static_cast<int32_t>(program.plan_versions.size()))
        return invalid_model("a plan grid cell names version " + std::to_string(v) + " of " +
                             std::to_string(program.plan_versions.size()));
    for (const rt::ShapeProgram& v : program.plan_versions)
      if (v.num_outputs() != plan_outputs || v.num_inputs() != program.symbols.size())
        return invalid_model("a plan version's program does not match the plan's shape");
  }
  SOD2_RETURN_IF_ERROR(plan::check_execution_bounds_shape(program));
  if (program.assumption_program.num_outputs() != 2 * program.assumptions.size() ||
      (!program.assumptions.empty() &&
       program.assumption_program.num_inputs() != program.symbols.size())) {
    return invalid_model("the assumption program does not match the assumptions");
  }
  if (options.backend && options.shared_arena)
    return invalid_argument("a session with a device backend cannot share another's arena");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (options.threads < 0 || options.threads > kMaxThreadsPerCore * cores) {
    return invalid_argument(std::to_string(options.threads) +
                            " threads asked for: a session takes " + "0 (one per core) to " +
                            std::to_string(kMaxThreadsPerCore * cores) + " (" +
                            std::to_string(kMaxThreadsPerCore) + " per core of the " +
                            std::to_string(cores) + " here)");
  }
  const RunLimits& lim = options.limits;
  if (lim.max_bytes < 0 || lim.max_loop_iterations < 0 || lim.max_run_ms < 0)
    return invalid_argument("run limits must not be negative (0 takes the default)");
  // Before a backend merges nodes into groups: the plan was made for the program's own nodes.
  SOD2_ASSIGN_OR_RETURN(ArenaLifetimes lives, check_program_dataflow(program));
  std::unique_ptr<Session> s(new Session(std::move(program), options));
  const ProgramDesc& p = s->program_;
  s->arena_life_ = std::move(lives.life);
  s->arena_used_ = std::move(lives.used);
  s->binding_greedy_ = plan::binding_layout_applies(p);
  s->exec_layout_applies_ = plan::execution_layout_applies(p);
  s->placed_.resize(p.num_arena_tensors);
  const int64_t physical = physical_memory_bytes();
  s->max_bytes_ = lim.max_bytes > 0 ? lim.max_bytes : physical > 0 ? physical / 2 : INT64_MAX;
  s->max_loop_iterations_ =
      lim.max_loop_iterations > 0 ? lim.max_loop_iterations : kDefaultMaxLoopIterations;
  s->max_run_ms_ = lim.max_run_ms;
  s->kernels_.resize(p.graphs.size());
  if (s->backend_) SOD2_RETURN_IF_ERROR(s->create_main_kernels(registry));
  const std::vector<int32_t> enclosing = enclosing_graphs(p);
  for (size_t g = s->backend_ ? 1 : 0; g < p.graphs.size(); ++g) {
    for (const NodeDesc& node : p.graphs[g].nodes) {
      if (runs_subgraphs(node.info)) {
        s->kernels_[g].push_back(nullptr);
        continue;
      }
      SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k,
                            registry.create(with_constant_inputs(p, enclosing, g, node)));
      SOD2_RETURN_IF_ERROR(prepare_kernel(*k, p, enclosing, g, node));
      s->kernels_[g].push_back(std::move(k));
    }
  }
  // With a device backend the main graph's values cross to the device as they are: NCHW.
  s->winograd_ = options.winograd;
  if (!s->backend_ && options.channel_blocked && registry.channel_block() > 0)
    s->hold_blocked_values(registry.channel_block());
  size_t all_values = 0;
  s->releases_after_.reserve(p.graphs.size());
  for (const GraphDesc& g : p.graphs) {
    s->releases_after_.push_back(release_schedule(p, g));
    all_values += g.values.size();
  }
  s->value_offsets_.reserve_ranges(all_values + 2);
  s->main_ = std::make_unique<Frame>(p.graphs[0], nullptr);
  s->body_frames_.resize(p.graphs.size());
  s->body_results_.resize(p.graphs.size());
  s->loop_buffers_.resize(p.graphs.size());
  s->symbol_values_.assign(p.symbols.size(), 0);
  s->symbol_bound_.assign(p.symbols.size(), 0);
  s->plan_values_.assign(p.plan_program.num_outputs(), 0);
  size_t plan_scratch = p.plan_program.scratch_size();
  for (const rt::ShapeProgram& v : p.plan_versions)
    plan_scratch = std::max(plan_scratch, v.scratch_size());
  s->plan_scratch_.assign(plan_scratch, 0);
  s->plan_ = &p.plan_program;
  s->outputs_.resize(p.graphs[0].outputs.size());
  s->reset_node_times();
  return s;
}

void Session::hold_blocked_values(int block) {
  const ProgramDesc& p = program_;
  const GraphDesc& main = p.graphs[0];
  // Main-graph values a body reads through outer-scope references, at any depth (the release
  // schedule's walk: each is marked with the control-flow node whose body reads it).
  std::vector<int64_t> body_reader(main.values.size(), -1);
  for (size_t n = 0; n < main.nodes.size(); ++n)
    for (int32_t g : main.nodes[n].subgraphs)
      if (g > 0 && static_cast<size_t>(g) < p.graphs.size())
        mark_nested_reads(p, p.graphs[static_cast<size_t>(g)], 1, n, body_reader);
  std::vector<char> read_by_bodies(main.values.size(), 0);
  for (size_t v = 0; v < main.values.size(); ++v) read_by_bodies[v] = body_reader[v] >= 0;
  std::vector<BlockedIo> io(main.nodes.size());
  for (size_t n = 0; n < main.nodes.size() && n < kernels_[0].size(); ++n)
    if (kernels_[0][n]) io[n] = kernels_[0][n]->blocked_io(block);
  blocked_values_ = sod2::rt::choose_blocked_values(main, io, read_by_bodies, block);
  bool any = false;
  for (size_t n = 0; n < main.nodes.size() && n < kernels_[0].size(); ++n) {
    const NodeBlocked nb = node_blocked(main.nodes[n], blocked_values_);
    if (!nb.any() || !kernels_[0][n]) continue;
    kernels_[0][n]->use_blocked(block, nb.inputs, nb.output);
    any = true;
  }
  channel_block_ = any ? block : 0;
}

Status Session::create_main_kernels(const KernelRegistry& registry) {
  SOD2_RETURN_IF_ERROR(backend_->attach());
  attached_ = true;
  ProgramDesc& p = program_;
  GraphDesc& main = p.graphs[0];
  const size_t nn = main.nodes.size();
  // The generated groups the backend takes: each replaced by one node where its last node was.
  std::vector<int32_t> group_of(nn, -1);
  std::vector<std::unique_ptr<Kernel>> group_kernels(p.gpu_kernels.size());
  std::vector<Decline> group_why(p.gpu_kernels.size());
  for (size_t gi = 0; gi < p.gpu_kernels.size(); ++gi) {
    const GpuKernelDesc& gk = p.gpu_kernels[gi];
    bool valid = !gk.nodes.empty() && std::is_sorted(gk.nodes.begin(), gk.nodes.end());
    for (int32_t n : gk.nodes)
      valid =
          valid && n >= 0 && static_cast<size_t>(n) < nn && group_of[static_cast<size_t>(n)] < 0;
    valid =
        valid && gk.nodes.back() - gk.nodes.front() + 1 == static_cast<int32_t>(gk.nodes.size());
    if (valid) {
      const NodeDesc& last = main.nodes[static_cast<size_t>(gk.nodes.back())];
      valid = !last.outputs.empty() && last.outputs[0] == gk.output;
    }
    // The nodes it replaces must be plain ops (or fused elementwise groups of them) whose values
    // only the group reads: anything else would vanish with them.
    for (size_t j = 0; valid && j < gk.nodes.size(); ++j) {
      const NodeDesc& n = main.nodes[static_cast<size_t>(gk.nodes[j])];
      valid = (n.info.domain.empty() || is_fused_elementwise(n.info.domain, n.info.op_type)) &&
              n.subgraphs.empty();
      for (size_t o = 0; valid && o < n.outputs.size(); ++o) {
        const int32_t v = n.outputs[o];
        if (v < 0 || (j + 1 == gk.nodes.size() && o == 0)) continue;
        valid = std::find(main.outputs.begin(), main.outputs.end(), v) == main.outputs.end();
        for (size_t m = 0; valid && m < nn; ++m) {
          const bool inside = std::find(gk.nodes.begin(), gk.nodes.end(),
                                        static_cast<int32_t>(m)) != gk.nodes.end();
          const auto& ins = main.nodes[m].inputs;
          valid = inside || std::find(ins.begin(), ins.end(), v) == ins.end();
        }
      }
    }
    if (!valid) {
      return invalid_model("generated group '" + gk.name +
                           "' does not name a run of plain main-graph nodes, read only by each "
                           "other, ending in its output");
    }
    SOD2_ASSIGN_OR_RETURN(group_kernels[gi], backend_->make_group_kernel(p, gi, &group_why[gi]));
    if (!group_kernels[gi]) continue;
    for (int32_t n : gk.nodes) group_of[static_cast<size_t>(n)] = static_cast<int32_t>(gi);
  }
  std::vector<NodeDesc> nodes;
  std::vector<std::unique_ptr<Kernel>>& kernels = kernels_[0];
  for (size_t n = 0; n < nn; ++n) {
    const int32_t gi = group_of[n];
    if (gi >= 0) {
      const GpuKernelDesc& gk = p.gpu_kernels[static_cast<size_t>(gi)];
      if (static_cast<int32_t>(n) != gk.nodes.back()) continue;
      NodeDesc fused;
      fused.info.name = gk.name;
      fused.info.op_type = "GpuElementwise";
      fused.info.domain = "sod2";
      fused.inputs = gk.inputs;
      fused.outputs = {gk.output};
      // The model's nodes it runs (a fused node's own members), so profiles name them.
      for (int32_t m : gk.nodes) {
        const NodeDesc& inner = main.nodes[static_cast<size_t>(m)];
        if (!inner.fused_nodes.empty() && inner.fused_nodes.size() == inner.fused_op_types.size()) {
          fused.fused_nodes.insert(fused.fused_nodes.end(), inner.fused_nodes.begin(),
                                   inner.fused_nodes.end());
          fused.fused_op_types.insert(fused.fused_op_types.end(), inner.fused_op_types.begin(),
                                      inner.fused_op_types.end());
          continue;
        }
        fused.fused_nodes.push_back(inner.info.name);
        fused.fused_op_types.push_back(inner.info.op_type);
      }
      nodes.push_back(std::move(fused));
      kernels.push_back(std::move(group_kernels[static_cast<size_t>(gi)]));
      node_backends_.push_back({true, CpuReason::kNone, ""});
      continue;
    }
    NodeDesc& node = main.nodes[n];
    const std::string& op = node.info.op_type;
    if (runs_subgraphs(node.info)) {
      kernels.push_back(nullptr);
      node_backends_.push_back(
          {false, CpuReason::kControlFlow, op + ": control flow runs on the CPU"});
    } else {
      Decline why;
      SOD2_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> k,
                            backend_->make_kernel(p, node, registry, &why));
      const bool device = k != nullptr;
      if (!k) {
        SOD2_ASSIGN_OR_RETURN(k, registry.create(with_constant_inputs(p, {}, 0, node)));
        SOD2_RETURN_IF_ERROR(prepare_kernel(*k, p, {}, 0, node));
        // A node of a group the backend declined says why the group did.
        for (size_t gj = 0; gj < p.gpu_kernels.size(); ++gj) {
          const auto& gn = p.gpu_kernels[gj].nodes;
          if (group_why[gj].reason != CpuReason::kNone &&
              std::find(gn.begin(), gn.end(), static_cast<int32_t>(n)) != gn.end()) {
            why = {CpuReason::kGroupDeclined,
                   op + ": its group " + p.gpu_kernels[gj].name + ": " + group_why[gj].detail};
          }
        }
      }
      kernels.push_back(std::move(k));
      if (device) why = {};
      node_backends_.push_back({device, why.reason, std::move(why.detail)});
    }
    nodes.push_back(std::move(node));
  }
  main.nodes = std::move(nodes);
  return backend_->prepare(p);
}

Status Session::bind_inputs(std::span<const Tensor> inputs) {
  const ProgramDesc& p = program_;
  if (inputs.size() != p.inputs.size()) {
    return invalid_argument("the model takes " + std::to_string(p.inputs.size()) + " inputs, got " +
                            std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSignature& sig = p.inputs[i];
    if (sig.type != ValueType::kTensor) {
      SOD2_RETURN_IF_ERROR(check_non_tensor_input(sig, inputs[i]));
      continue;
    }
    if (!inputs[i].is_tensor()) {
      return invalid_argument("input '" + sig.name + "' must be a tensor, got " +
                              (inputs[i].none ? "an optional holding no value" : "a sequence"));
    }
    if (sig.dtype != DType::kUndefined && inputs[i].dtype != sig.dtype) {
      return invalid_argument("input '" + sig.name + "' must be " + dtype_name(sig.dtype) +
                              ", got " + dtype_name(inputs[i].dtype));
    }
    if (inputs[i].shape.rank() != sig.rank) {
      return invalid_argument("input '" + sig.name + "' must have rank " +
                              std::to_string(sig.rank) + ", got shape " +
                              inputs[i].shape.to_string());
    }
    if (inputs[i].data == nullptr && inputs[i].numel() > 0) {
      return invalid_argument("input '" + sig.name + "' has no data");
    }
  }
  std::fill(symbol_bound_.begin(), symbol_bound_.end(), 0);
  for (const InputDimDesc& d : p.input_dims) {
    const InputSignature& sig = p.inputs[static_cast<size_t>(d.input)];
    const int64_t v = inputs[static_cast<size_t>(d.input)].shape[d.dim];
    auto where = [&] { return "input '" + sig.name + "' dim " + std::to_string(d.dim); };
    if (d.symbol < 0) {
      if (v != d.fixed) {
        return invalid_argument(where() + " must be " + std::to_string(d.fixed) + ", got " +
                                std::to_string(v));
      }
      continue;
    }
    const size_t s = static_cast<size_t>(d.symbol);
    const SymbolDesc& sym = p.symbols[s];
    if (symbol_bound_[s] && symbol_values_[s] != v) {
      return invalid_argument(where() + " is " + std::to_string(v) + " but '" + sym.name +
                              "' is already " + std::to_string(symbol_values_[s]) +
                              " from another input");
    }
    if (v < sym.lo || v > sym.hi || (sym.multiple > 1 && v % sym.multiple != 0)) {
      return invalid_argument(where() + " ('" + sym.name + "') is " + std::to_string(v) +
                              ", outside the declared range " + std::to_string(sym.lo) + ":" +
                              std::to_string(sym.hi) +
                              (sym.multiple > 1 ? ":" + std::to_string(sym.multiple) : "") +
                              " (compile with a wider --range)");
    }
    symbol_values_[s] = v;
    symbol_bound_[s] = 1;
  }
  for (size_t s = 0; s < p.symbols.size(); ++s) {
    if (symbol_bound_[s]) continue;
    if (!p.symbols[s].execution) {
      return invalid_model("symbol '" + p.symbols[s].name + "' is bound by no input dim");
    }
    // Until the node that produces it runs: any value works for the tensors before it.
    symbol_values_[s] = std::max<int64_t>(p.symbols[s].lo, 1);
  }
  if (!p.assumptions.empty()) {
    std::vector<int64_t> values(p.assumption_program.num_outputs());
    std::vector<int64_t> scratch(p.assumption_program.scratch_size());
    SOD2_RETURN_IF_ERROR(p.assumption_program.run(symbol_values_, values, scratch));
    for (size_t a = 0; a < p.assumptions.size(); ++a) {
      if (values[2 * a] != values[2 * a + 1]) {
        return invalid_argument("these input sizes break the assumption " + p.assumptions[a].text +
                                " that node '" + p.assumptions[a].node + "' needs (" +
                                std::to_string(values[2 * a]) +
                                " != " + std::to_string(values[2 * a + 1]) + ")");
      }
    }
  }
  return Status::ok_status();
}

Status Session::check_run_alive() const {
  if (cancel_ && cancel_->load(std::memory_order_relaxed))
    return cancelled("the run was cancelled");
  if (max_run_ms_ > 0 && std::chrono::steady_clock::now() > deadline_) {
    return resource_exhausted("the run took longer than its limit of " +
                              std::to_string(max_run_ms_) + " ms (RunLimits::max_run_ms)");
  }
  return Status::ok_status();
}

Status Session::run_node(Frame& frame, const NodeDesc& node, size_t node_index) {
  const std::string& op = node.info.op_type;
  const bool main_frame = &frame == main_.get();
  const bool on_device = backend_ && main_frame && node_backends_[node_index].device;
  if (runs_subgraphs(node.info)) {
    // Bodies read outer values the node does not list: wait for everything.
    if (backend_ && backend_->pending()) SOD2_RETURN_IF_ERROR(backend_->sync());
    if (backend_) backend_->on_cpu_kernel();
    if (op == "If") return run_if(frame, node);
    if (op == "Loop") return run_loop(frame, node);
    if (op == "SequenceMap") return run_sequence_map(frame, node);
    return run_scan(frame, node);
  }
  const size_t g = static_cast<size_t>(frame.graph - program_.graphs.data());
  Kernel* kernel = kernels_[g][node_index].get();
  // At most a few inputs: a fixed array keeps the steady state free of allocation.
  constexpr size_t kInline = 16;
  const Tensor* inline_inputs[kInline];
  std::vector<const Tensor*> many;
  const Tensor** ins = inline_inputs;
  if (node.inputs.size() > kInline) {
    many.resize(node.inputs.size());
    ins = many.data();
  }
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const int32_t v = node.inputs[i];
    ins[i] = v < 0 ? nullptr : frame.get(v);
    if (v >= 0 && !ins[i]) {
      return internal_error("input '" + frame.graph->values[static_cast<size_t>(v)].name +
                            "' is read before it is produced");
    }
    // A model whose types lie (a sequence where a tensor is declared) must not reach a kernel
    // that would read the sequence as bytes.
    if (ins[i] && ins[i]->dtype == DType::kString && ins[i]->is_tensor() &&
        !kernel->takes_strings()) {
      return unsupported("node '" + node.info.name + "' (" + op + "): input '" +
                         frame.graph->values[static_cast<size_t>(v)].name +
                         "' is a string tensor, which " + op + " does not take in this runtime");
    }
    if (ins[i] && !ins[i]->is_tensor() && !kernel->takes_non_tensors()) {
      return invalid_argument("node '" + node.info.name + "' (" + op + "): input '" +
                              frame.graph->values[static_cast<size_t>(v)].name + "' is " +
                              (ins[i]->none ? "an optional holding no value" : "a sequence") +
                              ", but " + op + " takes tensors");
    }
  }
  if (backend_ && !on_device) {
    backend_->on_cpu_kernel();
    if (backend_->pending() && cpu_kernel_conflicts(frame, node, ins)) {
      SOD2_RETURN_IF_ERROR(backend_->sync());
    }
  }
  NodeOutputs outs(this, &frame, &node);
  KernelContext ctx(std::span<const Tensor* const>(ins, node.inputs.size()), &outs, pool_.get());
  ctx.set_winograd(winograd_);
  Status st = kernel->run(ctx);
  outs.finish();
  if (st.ok()) outs.move_outputs_written_before_growth();
  if (!st.ok()) return st.with_context("node '" + node.info.name + "' (" + op + ")");
  // Profiling times each node: its device work must finish within it.
  if (on_device && profile_) SOD2_RETURN_IF_ERROR(backend_->sync());
  return Status::ok_status();
}

bool Session::cpu_kernel_conflicts(const Frame& frame, const NodeDesc& node,
                                   const Tensor* const* ins) const {
  // Ops that read only their input's shape touch none of its bytes.
  const bool reads_data =
      !(node.info.domain.empty() && (node.info.op_type == "Shape" || node.info.op_type == "Size"));
  constexpr size_t kInline = 16;
  ByteRange reads[kInline], writes[kInline];
  size_t nr = 0, nw = 0;
  for (size_t i = 0; reads_data && i < node.inputs.size(); ++i) {
    if (!ins[i] || !ins[i]->data) continue;
    if (nr == kInline) return true;  // too many to list: wait
    const auto* p = static_cast<const uint8_t*>(ins[i]->data);
    reads[nr++] = {p, p + ins[i]->bytes()};
  }
  const size_t n = program_.num_arena_tensors;
  for (int32_t v : node.outputs) {
    if (v < 0) continue;
    const ValueDesc& d = frame.graph->values[static_cast<size_t>(v)];
    // Its size binds an execution symbol: the plan, so where it goes, is known only then.
    if (!d.exec_dims.empty()) return true;
    // Only arena bytes are the device's; other outputs go to host buffers it never reads.
    if (d.storage != ValueStorage::kArena) continue;
    if (nw == kInline) return true;
    const size_t k = static_cast<size_t>(d.arena_tensor);
    const uint8_t* p = arena_->data() + plan_values_[n + k];
    writes[nw++] = {p, p + plan_values_[k]};
  }
  return backend_->conflicts(std::span<const ByteRange>(reads, nr),
                             std::span<const ByteRange>(writes, nw));
}

Status Session::run_graph(Frame& frame) {
  const GraphDesc& g = *frame.graph;
  const size_t gi = static_cast<size_t>(frame.graph - program_.graphs.data());
  const bool timed = profile_ && gi == 0;
  const bool body_timed = profile_ && gi != 0;
  const auto& releases = releases_after_[gi];
  using Ms = std::chrono::duration<double, std::milli>;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const auto t0 =
        profile_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    SOD2_RETURN_IF_ERROR(check_run_alive());
    SOD2_RETURN_IF_ERROR(run_node(frame, g.nodes[n], n));
    for (int32_t v : releases[n]) release_value(frame, static_cast<size_t>(v));
    if (body_timed) {
      // A nested body's node counts in its own graph and in every enclosing node's time.
      times_.body_total_ms[gi][n] += Ms(std::chrono::steady_clock::now() - t0).count();
      ++times_.body_calls[gi][n];
    }
    if (timed) {
      const double ms = Ms(std::chrono::steady_clock::now() - t0).count();
      times_.total_ms[n] += ms;
      times_.last_start_ms[n] = Ms(t0 - run_start_).count();
      times_.last_ms[n] = ms;
      int64_t bytes = 0;
      bool first = true;
      for (int32_t v : g.nodes[n].outputs) {
        const Tensor* t = v < 0 ? nullptr : frame.get(v);
        if (!t) continue;
        if (first) times_.last_output_shape[n] = t->shape;
        first = false;
        bytes += static_cast<int64_t>(t->bytes());
      }
      times_.last_output_bytes[n] = bytes;
    }
  }
  return Status::ok_status();
}

void Session::release_value(Frame& frame, size_t v) {
  // A sequence's elements and a string tensor's strings go with the value's last reader, like a
  // value-buffer range.
  if (!frame.heap[v].is_tensor() || frame.heap[v].dtype() == DType::kString)
    frame.heap[v] = HostTensor();
  Frame::Held& h = frame.held[v];
  if (h.offset < 0) return;
  value_offsets_.release(static_cast<size_t>(h.offset), h.bytes);
  h.offset = -1;
  // A value that did not fit the buffer this run: free its heap bytes now, so a first run's
  // peak is what is live, not everything the bodies ever produced.
  if (!frame.heap[v].bytes().empty()) frame.heap[v] = HostTensor();
}

Status Session::prepare_value_buffer() {
  value_offsets_.reset();
  const size_t need = value_offsets_.high_water();
  if (need <= value_buffer_.capacity()) return Status::ok_status();
  // The last run placed some values on the heap because the buffer was too small: size it for
  // that run's high-water mark and drop the heap copies (no view of them outlives a run).
  value_buffer_.trim();
  SOD2_RETURN_IF_ERROR(value_buffer_.reserve(need));
  auto drop_heap = [](Frame* f) {
    if (!f) return;
    for (HostTensor& h : f->heap) h = HostTensor();
  };
  drop_heap(main_.get());
  for (auto& f : body_frames_) drop_heap(f.get());
  return Status::ok_status();
}

Expected<std::span<const Tensor>> Session::run(std::span<const Tensor> inputs,
                                               const std::atomic<bool>* cancel) {
  // The runtime reports errors as Status; what the standard library throws when memory runs out
  // becomes one too, so a host or an agent never dies from a run.
  try {
    cancel_ = cancel;
    auto out = run_checked(inputs);
    cancel_ = nullptr;
    return out;
  } catch (const std::bad_alloc&) {
    cancel_ = nullptr;
    return resource_exhausted(
        "out of memory during the run (lower RunLimits::max_bytes to fail "
        "earlier with the size that was asked for)");
  } catch (const std::length_error& e) {
    cancel_ = nullptr;
    return resource_exhausted(std::string("a size too large for memory during the run: ") +
                              e.what());
  }
}

Expected<std::span<const Tensor>> Session::run_checked(std::span<const Tensor> inputs) {
  if (profile_ || max_run_ms_ > 0) run_start_ = std::chrono::steady_clock::now();
  if (max_run_ms_ > 0) deadline_ = run_start_ + std::chrono::milliseconds(max_run_ms_);
  SOD2_RETURN_IF_ERROR(bind_inputs(inputs));
  // The plan version of this binding's cell (execution symbols are not bucketed).
  plan_version_ = -1;
  if (!program_.version_of_cell.empty())
    plan_version_ = program_.version_of_cell[program_.plan_grid.cell_of(symbol_values_)];
  plan_ = plan_version_ < 0 ? &program_.plan_program
                            : &program_.plan_versions[static_cast<size_t>(plan_version_)];
  if (exec_layout_applies_) choose_execution_layout();
  arena_bytes_ = 0;
  SOD2_RETURN_IF_ERROR(instantiate_plan());
  SOD2_RETURN_IF_ERROR(prepare_value_buffer());
  if (backend_) SOD2_RETURN_IF_ERROR(backend_->begin_run());
  Frame& f = *main_;
  std::fill(f.ready.begin(), f.ready.end(), 0);
  std::fill(f.held.begin(), f.held.end(), Frame::Held{});
  const GraphDesc& g = program_.graphs[0];
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const size_t v = static_cast<size_t>(g.inputs[i]);
    f.tensors[v] = inputs[i];
    f.ready[v] = 1;
  }
  for (size_t v = 0; v < g.values.size(); ++v) {
    const ValueDesc& d = g.values[v];
    if (d.storage != ValueStorage::kConstant) continue;
    f.tensors[v] = program_.constants[static_cast<size_t>(d.constant)].view();
    f.ready[v] = 1;
  }
  Status st = run_graph(f);
  if (backend_) {
    // Also after a failure: work recorded before it must not outlive the bytes it names.
    Status synced = backend_->sync();
    if (st.ok()) st = synced;
  }
  times_.runs += profile_;
  arena_->release_retired();
  SOD2_RETURN_IF_ERROR(st);
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const Tensor* t = f.get(g.outputs[o]);
    if (!t) {
      return internal_error("graph output '" + g.values[static_cast<size_t>(g.outputs[o])].name +
                            "' was never produced");
    }
    outputs_[o] = *t;
  }
  return std::span<const Tensor>(outputs_);
}

}  // namespace sod2::rt
