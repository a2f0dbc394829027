#include "core/package/program_builder.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/ops/constant_nodes.h"
#include "core/opt/model_work.h"
#include "core/sym/shape_compiler.h"
#include "core/sym/transform.h"

namespace sod2::package {
namespace {}  // namespace

rt::DType to_rt_dtype(DataType t) {
  return rt::is_known_dtype(static_cast<uint8_t>(t)) ? t : rt::DType::kUndefined;
}

namespace {

rt::DType to_rt(DataType t) { return to_rt_dtype(t); }

rt::ValueType to_rt(TypeCategory c) {
  switch (c) {
    case TypeCategory::kSequence: return rt::ValueType::kSequence;
    case TypeCategory::kOptional: return rt::ValueType::kOptional;
    default: return rt::ValueType::kTensor;
  }
}

}  // namespace

Expected<rt::HostTensor> to_host_tensor(const Tensor& t, const std::string& what) {
  const rt::DType dtype = to_rt(t.dtype());
  if (dtype == rt::DType::kString) {
    if (!rt::Shape::fits(t.dims().size()))
      return unsupported(what + ": rank " + std::to_string(t.dims().size()) + " is above " +
                         std::to_string(rt::kMaxRank));
    rt::HostTensor h(dtype, rt::Shape(std::span<const int64_t>(t.dims())));
    if (h.strings().size() != t.strings().size())
      return invalid_model(what + ": holds " + std::to_string(t.strings().size()) +
                           " strings, expected " + std::to_string(h.strings().size()));
    h.strings() = t.strings();
    return h;
  }
  if (dtype == rt::DType::kUndefined || rt::dtype_size(dtype) == 0) {
    return unsupported(what + ": tensors of type " + std::string(data_type_name(t.dtype())) +
                       " are not supported by the runtime");
  }
  if (!rt::Shape::fits(t.dims().size())) {
    return unsupported(what + ": rank " + std::to_string(t.dims().size()) + " is above " +
                       std::to_string(rt::kMaxRank));
  }
  rt::HostTensor h(dtype, rt::Shape(std::span<const int64_t>(t.dims())));
  if (h.bytes().size() != t.bytes().size()) {
    return invalid_model(what + ": holds " + std::to_string(t.bytes().size()) +
                         " bytes, expected " + std::to_string(h.bytes().size()));
  }
  if (!t.bytes().empty()) std::memcpy(h.bytes().data(), t.bytes().data(), t.bytes().size());
  return h;
}

namespace {

// The value a Constant node holds (value, value_float(s), value_int(s)).
Expected<rt::HostTensor> constant_value(const Node& node) {
  const std::string what = "Constant '" + node.name + "'";
  for (const Attribute& a : node.attributes) {
    if (a.name == "value") return to_host_tensor(a.t, what);
    if (a.name == "value_float") {
      rt::HostTensor h(rt::DType::kFloat, rt::Shape{});
      *h.data<float>() = a.f;
      return h;
    }
    if (a.name == "value_int") {
      rt::HostTensor h(rt::DType::kInt64, rt::Shape{});
      *h.data<int64_t>() = a.i;
      return h;
    }
    if (a.name == "value_floats") {
      rt::HostTensor h(rt::DType::kFloat, rt::Shape{static_cast<int64_t>(a.floats.size())});
      if (!a.floats.empty()) std::memcpy(h.data<float>(), a.floats.data(), a.floats.size() * 4);
      return h;
    }
    if (a.name == "value_ints") {
      rt::HostTensor h(rt::DType::kInt64, rt::Shape{static_cast<int64_t>(a.ints.size())});
      if (!a.ints.empty()) std::memcpy(h.data<int64_t>(), a.ints.data(), a.ints.size() * 8);
      return h;
    }
  }
  return unsupported(what + ": only tensor, float(s) and int(s) values are supported");
}

class Builder {
 public:
  Builder(const Model& model, const RdpResult& rdp, const opt::MemoryPlan& plan,
          const std::vector<std::optional<FusedKernel>>* fused)
      : model_(model), rdp_(rdp), plan_(plan), fused_(fused) {}

  Expected<rt::ProgramDesc> build() {
    SOD2_RETURN_IF_ERROR(collect_symbols());
    const Graph& main = *model_.graph;
    p_.graphs.emplace_back();
    SOD2_RETURN_IF_ERROR(convert_graph(main, 0, &plan_.order.order));
    SOD2_RETURN_IF_ERROR(bind_inputs(main));
    SOD2_RETURN_IF_ERROR(compile_plan());
    SOD2_RETURN_IF_ERROR(compile_assumptions());
    SOD2_RETURN_IF_ERROR(compile_execution_bounds());
    SOD2_RETURN_IF_ERROR(compile_step_work());
    return std::move(p_);
  }

 private:
  // The program's symbols: every input symbol, then the execution symbols the plan needs,
  // sorted by name within each group.
  Status collect_symbols() {
    std::vector<sym::Symbol> input, exec;
    for (const SymbolInfo& info : rdp_.symbols()) {
      (info.kind == SymbolKind::kInput ? input : exec).push_back(info.symbol);
    }
    std::vector<sym::Symbol> needed(plan_.program.symbols().begin(), plan_.program.symbols().end());
    std::erase_if(exec, [&](const sym::Symbol& s) {
      return std::find(needed.begin(), needed.end(), s) == needed.end();
    });
    auto by_name = [](const sym::Symbol& a, const sym::Symbol& b) { return a.name() < b.name(); };
    std::sort(input.begin(), input.end(), by_name);
    std::sort(exec.begin(), exec.end(), by_name);
    for (const auto* list : {&input, &exec}) {
      for (const sym::Symbol& s : *list) {
        const sym::SymbolRange r = rdp_.ranges().get(s);
        index_[s] = static_cast<int32_t>(symbols_.size());
        symbols_.push_back(s);
        p_.symbols.push_back({s.name(), list == &exec, r.lo, r.hi, r.multiple});
      }
    }
    return Status::ok_status();
  }

  Status convert_graph(const Graph& g, size_t gi, const std::vector<NodeId>* order) {
    const bool is_main = gi == 0;
    rt::GraphDesc desc;
    desc.name = g.name();
    desc.values.resize(g.num_values());
    graph_index_[&g] = static_cast<int32_t>(gi);
    for (size_t v = 0; v < g.num_values(); ++v) {
      const Value& value = g.value(static_cast<ValueId>(v));
      rt::ValueDesc& d = desc.values[v];
      d.name = value.name;
      const TensorFact& fact = rdp_.fact(g, static_cast<ValueId>(v));
      d.dtype = to_rt(fact.dtype != DataType::kUndefined ? fact.dtype : value.dtype);
      d.type = to_rt(fact.category);
      if (fact.dims) {
        d.dims = "[";
        for (size_t k = 0; k < fact.dims->size(); ++k) {
          const Dim& dim = (*fact.dims)[k];
          d.dims += (k ? "," : "") + (dim ? dim->to_string() : std::string("?"));
        }
        d.dims += "]";
      } else if (fact.category != TypeCategory::kTensor) {
        // "sequence of [2, 3]": what tools show for a sequence or optional (short, or nothing:
        // the loader bounds this text).
        std::string text = fact.to_string();
        if (text.size() <= 256) d.dims = std::move(text);
      }
      switch (value.kind) {
        case ValueKind::kGraphInput: d.storage = rt::ValueStorage::kGraphInput; break;
        case ValueKind::kInitializer: {
          d.storage = rt::ValueStorage::kConstant;
          SOD2_ASSIGN_OR_RETURN(rt::HostTensor h,
                                to_host_tensor(*g.initializer_of(static_cast<ValueId>(v)),
                                               "initializer '" + value.name + "'"));
          d.constant = static_cast<int32_t>(p_.constants.size());
          p_.constants.push_back(std::move(h));
          break;
        }
        case ValueKind::kOuterScope: {
          d.storage = rt::ValueStorage::kOuterScope;
          d.outer_value = value.outer_value;
          d.outer_levels = g.depth() - value.outer_graph->depth();
          break;
        }
        case ValueKind::kNodeOutput: {
          const int32_t t = is_main ? plan_.tensors.index_of(static_cast<ValueId>(v)) : -1;
          d.storage = t >= 0 ? rt::ValueStorage::kArena : rt::ValueStorage::kHeap;
          d.arena_tensor = t;
          if (is_main && fact.dims) {
            for (size_t k = 0; k < fact.dims->size(); ++k) {
              const Dim& dim = (*fact.dims)[k];
              if (!dim) continue;
              const auto s = dim->as_symbol();
              if (s && rdp_.is_execution_symbol(*s) && index_.count(*s))
                d.exec_dims.push_back({static_cast<int32_t>(k), index_.at(*s)});
            }
          }
          break;
        }
      }
    }
    for (ValueId v : g.inputs()) desc.inputs.push_back(v);
    for (ValueId v : g.outputs()) desc.outputs.push_back(v);

    std::vector<NodeId> topo;
    if (!order) {
      SOD2_ASSIGN_OR_RETURN(topo, g.topological_order());
      order = &topo;
    }
    for (NodeId n : *order) {
      const Node& node = g.node(n);
      if (const FusedKernel* k = is_main ? fused_kernel_of(n) : nullptr) {
        // The group's first node stands for the whole group; its other nodes are inside.
        if (plan_.fusion.groups[static_cast<size_t>(plan_.fusion.group_of[static_cast<size_t>(n)])]
                .nodes.front() != n)
          continue;
        rt::NodeDesc nd;
        nd.info = k->info;
        nd.inputs.assign(k->inputs.begin(), k->inputs.end());
        nd.outputs = {k->output};
        const std::vector<NodeId>& members =
            plan_.fusion.groups[static_cast<size_t>(plan_.fusion.group_of[static_cast<size_t>(n)])]
                .nodes;
        for (NodeId m : members) {
          nd.fused_nodes.push_back(g.node(m).name);
          nd.fused_op_types.push_back(g.node(m).op_type);
        }
        desc.nodes.push_back(std::move(nd));
        main_sources_.push_back(members);
        continue;
      }
      if (is_constant_node(g, node) && node.op_type == "Identity") {
        // Its input's bytes, already in the package (topological order): shared, not copied.
        const rt::ValueDesc& in = desc.values[static_cast<size_t>(node.inputs[0])];
        if (in.storage != rt::ValueStorage::kConstant)
          return internal_error("Identity '" + node.name + "' of a constant has no package value");
        rt::ValueDesc& d = desc.values[static_cast<size_t>(node.outputs[0])];
        d.storage = rt::ValueStorage::kConstant;
        d.arena_tensor = -1;
        d.dtype = in.dtype;
        d.constant = in.constant;
        continue;
      }
      if (is_constant_node(g, node)) {
        SOD2_ASSIGN_OR_RETURN(rt::HostTensor h, constant_value(node));
        for (ValueId out : node.outputs) {
          if (out == kNoValue) continue;
          rt::ValueDesc& d = desc.values[static_cast<size_t>(out)];
          d.storage = rt::ValueStorage::kConstant;
          d.arena_tensor = -1;
          d.dtype = h.dtype();
          d.constant = static_cast<int32_t>(p_.constants.size());
          p_.constants.push_back(h);
        }
        continue;
      }
      SOD2_ASSIGN_OR_RETURN(rt::NodeDesc nd, convert_node(g, node));
      desc.nodes.push_back(std::move(nd));
      if (is_main) main_sources_.push_back({n});
    }
    p_.graphs[gi] = std::move(desc);
    return Status::ok_status();
  }

  const FusedKernel* fused_kernel_of(NodeId n) const {
    if (!fused_) return nullptr;
    const int32_t grp =
        plan_.fusion.group_of.empty() ? -1 : plan_.fusion.group_of[static_cast<size_t>(n)];
    if (grp < 0 || static_cast<size_t>(grp) >= fused_->size()) return nullptr;
    const auto& k = (*fused_)[static_cast<size_t>(grp)];
    return k ? &*k : nullptr;
  }

  Expected<rt::NodeDesc> convert_node(const Graph& g, const Node& node) {
    rt::NodeDesc nd;
    rt::NodeInfo& info = nd.info;
    info.name = node.name;
    info.op_type = node.op_type;
    info.domain = node.domain;
    info.opset = static_cast<int>(node.opset);
    for (ValueId v : node.inputs) {
      nd.inputs.push_back(v);
      info.input_present.push_back(v != kNoValue);
      info.input_dtypes.push_back(v == kNoValue
                                      ? rt::DType::kUndefined
                                      : to_rt(rdp_.fact(g, v).dtype != DataType::kUndefined
                                                  ? rdp_.fact(g, v).dtype
                                                  : g.value(v).dtype));
    }
    for (ValueId v : node.outputs) {
      nd.outputs.push_back(v);
      info.output_dtypes.push_back(v == kNoValue ? rt::DType::kUndefined
                                                 : to_rt(rdp_.fact(g, v).dtype));
    }
    info.num_outputs = node.outputs.size();
    const std::string where = "node '" + node.name + "'";
    // Subgraphs in the order the session expects: If then/else, Loop and Scan body.
    std::vector<const Attribute*> graphs;
    for (const char* name : {"then_branch", "else_branch", "body"}) {
      if (const Attribute* a = node.attribute(name); a && a->g) graphs.push_back(a);
    }
    for (const Attribute& a : node.attributes) {
      // Optional's `type` names what an empty optional would hold: the runtime's empty optional
      // holds nothing of any type.
      if (a.type == AttributeType::kTypeProto && node.op_type == "Optional" && a.name == "type")
        continue;
      rt::AttrValue v;
      using K = rt::AttrValue::Kind;
      switch (a.type) {
        case AttributeType::kInt:
          v.kind = K::kInt;
          v.i = a.i;
          break;
        case AttributeType::kFloat:
          v.kind = K::kFloat;
          v.f = a.f;
          break;
        case AttributeType::kString:
          v.kind = K::kString;
          v.s = a.s;
          break;
        case AttributeType::kInts:
          v.kind = K::kInts;
          v.ints = a.ints;
          break;
        case AttributeType::kFloats:
          v.kind = K::kFloats;
          v.floats = a.floats;
          break;
        case AttributeType::kStrings:
          v.kind = K::kStrings;
          v.strings = a.strings;
          break;
        case AttributeType::kTensor: {
          v.kind = K::kTensor;
          SOD2_ASSIGN_OR_RETURN(v.tensor,
                                to_host_tensor(a.t, where + " attribute '" + a.name + "'"));
          break;
        }
        case AttributeType::kGraph: {
          if (std::find(graphs.begin(), graphs.end(), &a) == graphs.end()) {
            return unsupported(where + ": graph attribute '" + a.name + "' of " + node.op_type);
          }
          v.kind = K::kGraph;
          break;  // filled in below, once the subgraph has its index
        }
        default:
          return unsupported(where + ": attribute '" + a.name + "' of type " +
                             std::string(attribute_type_name(a.type)));
      }
      info.attrs.set(a.name, std::move(v));
    }
    for (const Attribute* a : graphs) {
      const size_t gi = p_.graphs.size();
      p_.graphs.emplace_back();
      SOD2_RETURN_IF_ERROR(convert_graph(*a->g, gi, nullptr));
      nd.subgraphs.push_back(static_cast<int32_t>(gi));
      rt::AttrValue v;
      v.kind = rt::AttrValue::Kind::kGraph;
      v.graph = static_cast<int32_t>(gi);
      info.attrs.set(a->name, std::move(v));
    }
    return nd;
  }

  Status bind_inputs(const Graph& main) {
    for (size_t i = 0; i < main.inputs().size(); ++i) {
      const ValueId v = main.inputs()[i];
      const TensorFact& fact = rdp_.fact(main, v);
      const std::string what = "input '" + main.value(v).name + "'";
      const DataType dtype = fact.dtype != DataType::kUndefined ? fact.dtype : main.value(v).dtype;
      if (fact.category == TypeCategory::kSequence || fact.category == TypeCategory::kOptional) {
        // Their sizes bind no symbol: what they hold is checked by the kernels that read them.
        p_.inputs.push_back({main.value(v).name, to_rt(dtype), 0, to_rt(fact.category)});
        continue;
      }
      if (fact.category != TypeCategory::kTensor || !fact.dims) {
        return unsupported(what +
                           ": only tensors of known rank, sequences and optionals can be "
                           "fed to the runtime");
      }
      if (!rt::Shape::fits(fact.dims->size())) return unsupported(what + ": rank too high");
      p_.inputs.push_back({main.value(v).name, to_rt(dtype),
                           static_cast<int32_t>(fact.dims->size()), rt::ValueType::kTensor});
      for (size_t k = 0; k < fact.dims->size(); ++k) {
        const Dim& dim = (*fact.dims)[k];
        rt::InputDimDesc d{static_cast<int32_t>(i), static_cast<int32_t>(k)};
        if (dim && dim->constant_value()) {
          d.fixed = *dim->constant_value();
        } else if (const auto s = dim ? dim->as_symbol() : std::nullopt; s && index_.count(*s)) {
          d.symbol = index_.at(*s);
        } else {
          return unsupported(what + " dim " + std::to_string(k) +
                             " is neither a number nor a symbol");
        }
        p_.input_dims.push_back(d);
      }
    }
    return Status::ok_status();
  }

  Status compile_plan() {
    const opt::SymbolicPlan& s = plan_.symbolic;
    std::vector<sym::SymExpr> outs = s.sizes;
    outs.insert(outs.end(), s.offsets.begin(), s.offsets.end());
    outs.push_back(s.arena_bytes);
    SOD2_ASSIGN_OR_RETURN(p_.plan_program, sym::compile_shape_program(outs, symbols_));
    p_.num_arena_tensors = s.sizes.size();
    // The bucketed versions, when the planner made any and every bucketed symbol is an input
    // of the plan program.
    const opt::PlanVersions& pv = plan_.versions;
    if (pv.versions.empty() || pv.grid.symbols.empty()) return Status::ok_status();
    rt::PlanGridDesc grid;
    for (size_t k = 0; k < pv.grid.symbols.size(); ++k) {
      auto it = index_.find(pv.grid.symbols[k]);
      if (it == index_.end()) return Status::ok_status();
      grid.symbols.push_back(it->second);
      grid.uppers.push_back(pv.grid.uppers[k]);
    }
    std::vector<rt::ShapeProgram> versions;
    for (const opt::PlanVersion& v : pv.versions) {
      if (v.symbolic.sizes.size() != s.sizes.size())
        return internal_error("a plan version holds a different number of tensors");
      std::vector<sym::SymExpr> vouts = v.symbolic.sizes;
      vouts.insert(vouts.end(), v.symbolic.offsets.begin(), v.symbolic.offsets.end());
      vouts.push_back(v.symbolic.arena_bytes);
      SOD2_ASSIGN_OR_RETURN(rt::ShapeProgram prog, sym::compile_shape_program(vouts, symbols_));
      versions.push_back(std::move(prog));
    }
    p_.plan_grid = std::move(grid);
    p_.version_of_cell = pv.version_of_cell;
    p_.plan_versions = std::move(versions);
    return Status::ok_status();
  }

  Status compile_assumptions() {
    std::vector<sym::SymExpr> outs;
    for (const Assumption& a : rdp_.assumptions()) {
      bool input_only = true;
      for (const sym::SymExpr* e : {&a.lhs, &a.rhs})
        for (const sym::Symbol& s : sym::free_symbols(*e))
          input_only = input_only && !rdp_.is_execution_symbol(s) && index_.count(s);
      if (!input_only) continue;
      outs.push_back(a.lhs);
      outs.push_back(a.rhs);
      p_.assumptions.push_back({a.to_string(), a.node});
    }
    SOD2_ASSIGN_OR_RETURN(p_.assumption_program, sym::compile_shape_program(outs, symbols_));
    return Status::ok_status();
  }

  // The execution symbols' bounds at a binding and the step from which each arena tensor's size
  // is known (rt::ProgramDesc::execution_bounds, arena_known_steps), for the layout a session
  // makes per binding. A bound that reads a symbol the program lacks is its constant range's end.
  Status compile_execution_bounds() {
    bool any = false;
    std::vector<sym::SymExpr> outs;
    for (const sym::Symbol& s : symbols_) {
      const int64_t hi = rdp_.ranges().get(s).hi;
      std::optional<sym::SymExpr> bound;
      if (rdp_.is_execution_symbol(s)) {
        any = true;
        bound = rdp_.direct_execution_bound(s);
        for (const sym::Symbol& f : bound ? sym::free_symbols(*bound) : std::vector<sym::Symbol>{})
          if (!index_.count(f) || f == s) bound.reset();
      }
      outs.push_back(bound ? *bound : sym::SymExpr(hi));
    }
    if (!any) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(p_.execution_bounds, sym::compile_shape_program(outs, symbols_));
    // Where each execution symbol is bound: the first main-graph node whose output binds it.
    constexpr int32_t kNever = INT32_MAX;  // bound by no main-graph node: never known in time
    std::vector<int32_t> bound_at(symbols_.size(), kNever);
    const rt::GraphDesc& main = p_.graphs[0];
    for (size_t n = 0; n < main.nodes.size(); ++n) {
      for (int32_t v : main.nodes[n].outputs) {
        if (v < 0) continue;
        for (const rt::ExecDim& e : main.values[static_cast<size_t>(v)].exec_dims) {
          int32_t& at = bound_at[static_cast<size_t>(e.symbol)];
          at = std::min(at, static_cast<int32_t>(n));
        }
      }
    }
    const opt::SymbolicPlan& plan = plan_.symbolic;
    p_.arena_known_steps.assign(plan.sizes.size(), 0);
    for (size_t t = 0; t < plan.sizes.size(); ++t) {
      for (const sym::Symbol& f : sym::free_symbols(plan.sizes[t])) {
        if (!rdp_.is_execution_symbol(f)) continue;
        auto it = index_.find(f);
        const int32_t at = it == index_.end() ? kNever : bound_at[static_cast<size_t>(it->second)];
        p_.arena_known_steps[t] = std::max(p_.arena_known_steps[t], at);
      }
    }
    return Status::ok_status();
  }

  // The operations of each main-graph node of the program (rt::ProgramDesc::step_work): its
  // model nodes' work summed, -1 where one is uncounted or needs a symbol the program lacks.
  Status compile_step_work() {
    if (p_.graphs.empty() || main_sources_.size() != p_.graphs[0].nodes.size())
      return internal_error("the program's main-graph nodes and their model nodes differ");
    const opt::ModelWork work = opt::count_work(model_, rdp_);
    std::vector<sym::SymExpr> outs;
    outs.reserve(main_sources_.size());
    for (const std::vector<NodeId>& sources : main_sources_) {
      std::optional<sym::SymExpr> sum = sym::SymExpr(0);
      for (NodeId n : sources) {
        const auto i = static_cast<size_t>(n);
        const bool counted = i < work.node_ops.size() && work.node_ops[i];
        sum = counted && sum ? std::optional(*sum + *work.node_ops[i]) : std::nullopt;
      }
      for (const sym::Symbol& f : sum ? sym::free_symbols(*sum) : std::vector<sym::Symbol>{})
        if (!index_.count(f)) sum.reset();
      outs.push_back(sum && !sum->is_overflow() ? *sum : sym::SymExpr(-1));
    }
    if (outs.empty()) return Status::ok_status();
    SOD2_ASSIGN_OR_RETURN(p_.step_work, sym::compile_shape_program(outs, symbols_));
    return Status::ok_status();
  }

  const Model& model_;
  const RdpResult& rdp_;
  const opt::MemoryPlan& plan_;
  const std::vector<std::optional<FusedKernel>>* fused_;
  rt::ProgramDesc p_;
  std::vector<sym::Symbol> symbols_;
  std::unordered_map<sym::Symbol, int32_t> index_;
  std::unordered_map<const Graph*, int32_t> graph_index_;
  std::vector<std::vector<NodeId>> main_sources_;  // per main-graph program node, in order
};

}  // namespace

Expected<rt::ProgramDesc> build_program(const Model& model, const RdpResult& rdp,
                                        const opt::MemoryPlan& plan,
                                        const std::vector<std::optional<FusedKernel>>* fused) {
  return Builder(model, rdp, plan, fused).build();
}

}  // namespace sod2::package
