#include "app/studio/document/package_document.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "core/ops/op_registry.h"
#include "runtime/package/package_loader.h"
#include "runtime/program/execution_bounds.h"
#include "runtime/program/program_dataflow.h"

namespace sod2::studio {
namespace {

const char* storage_name(rt::ValueStorage s) {
  switch (s) {
    case rt::ValueStorage::kGraphInput: return "input";
    case rt::ValueStorage::kConstant: return "constant";
    case rt::ValueStorage::kArena: return "arena";
    case rt::ValueStorage::kHeap: return "heap";
    case rt::ValueStorage::kOuterScope: return "outer scope";
  }
  return "?";
}

// The class a compiled node shows: the standard registry's for ai.onnx ops; our fused kernels
// (domain "sod2") fuse a Conv/MatMul/Gemm with an elementwise epilogue, all ISDOS.
OpClass class_of(const rt::NodeInfo& info) {
  if (info.domain.empty()) {
    if (const OpSpec* spec = OpRegistry::standard().find(info.op_type, info.opset))
      return spec->op_class;
    return OpClass::kUnknown;
  }
  if (info.domain == "sod2" && info.op_type.rfind("Fused", 0) == 0) return OpClass::kISDOS;
  return OpClass::kUnknown;
}

int nodes_in(const rt::ProgramDesc& p, int32_t graph) {
  int n = 0;
  for (const rt::NodeDesc& node : p.graphs[static_cast<size_t>(graph)].nodes) {
    ++n;
    for (int32_t g : node.subgraphs) n += nodes_in(p, g);
  }
  return n;
}

}  // namespace

Expected<std::unique_ptr<PackageDocument>> PackageDocument::open(const std::string& path) {
  SOD2_ASSIGN_OR_RETURN(rt::ProgramDesc program, rt::load_package_file(path));
  std::unique_ptr<PackageDocument> doc(new PackageDocument());
  doc->path_ = path;
  doc->program_ = std::move(program);
  const rt::ProgramDesc& p = doc->program_;
  // The input symbols, then the execution symbols, whose sliders start at the constant bound
  // over the whole ranges; the bindings bar narrows them to the bound at the input sizes
  // (execution_upper) where the package carries its execution bounds.
  for (const bool execution : {false, true}) {
    for (const rt::SymbolDesc& s : p.symbols) {
      if (s.execution != execution) continue;
      SymbolControl c;
      c.name = s.name;
      c.lo = s.lo;
      c.hi = s.hi;
      c.multiple = std::max<int64_t>(s.multiple, 1);
      // Execution symbols at their bound (they follow the inputs), inputs at a typical size.
      c.initial = execution ? s.hi : typical_size(c.lo, c.hi, c.multiple);
      c.declared = !execution;
      c.execution = execution;
      c.origin = !execution ? "package symbol"
                 : p.execution_bounds.num_outputs() != 0
                     ? "package execution symbol (its bound follows the input sizes)"
                     : "package execution symbol (bound over the whole ranges)";
      doc->symbols_.push_back(std::move(c));
    }
  }

  // The arena tensors' lifetimes as the session derives them, which its greedy layout at a
  // binding is made over: the view must place tensors where a run would.
  SOD2_ASSIGN_OR_RETURN(rt::ArenaLifetimes lives, rt::check_program_dataflow(p));
  doc->lives_ = std::move(lives.life);
  doc->value_of_tensor_ = std::move(lives.value);
  doc->views_of_tensor_ = std::move(lives.views);
  auto names = std::make_shared<CoreNodeNames>();
  if (!p.graphs.empty())
    for (const rt::NodeDesc& n : p.graphs[0].nodes) {
      names->names.push_back(n.info.name);
      names->ops.push_back(n.info.op_type);
    }
  doc->names_ = std::move(names);
  return doc;
}

std::map<std::string, int64_t> PackageDocument::initial_values() const {
  std::map<std::string, int64_t> v;
  for (const SymbolControl& c : symbols_)
    if (!c.execution) v[c.name] = c.initial;
  return v;
}

Expected<PackagePlanAt> PackageDocument::plan_at(
    const std::map<std::string, int64_t>& values) const {
  Expected<PackagePlanAt> at = plan::program_plan_at(program_, lives_, values);
  if (!at.ok() && at.status().code() == StatusCode::kInvalidModel)
    return at.status().with_context(path_);
  return at;
}

Expected<int64_t> PackageDocument::execution_upper(
    const std::string& name, const std::map<std::string, int64_t>& values) const {
  const rt::ProgramDesc& p = program_;
  size_t target = p.symbols.size();
  std::vector<int64_t> at(p.symbols.size(), 0);
  for (size_t k = 0; k < p.symbols.size(); ++k) {
    const rt::SymbolDesc& s = p.symbols[k];
    if (s.name == name && s.execution) target = k;
    if (s.execution) continue;
    auto it = values.find(s.name);
    if (it == values.end()) return invalid_argument("no value for symbol '" + s.name + "'");
    at[k] = it->second;
  }
  if (target == p.symbols.size())
    return not_found("no execution symbol '" + name + "' in " + path_);
  plan::ExecutionBounds bounder;
  SOD2_RETURN_IF_ERROR(bounder.bound_all(p, at));
  for (size_t k = 0; k < p.symbols.size(); ++k) {
    auto it = values.find(p.symbols[k].name);
    if (p.symbols[k].execution && k != target && it != values.end()) at[k] = it->second;
  }
  return bounder.bound_of(p, at, target);
}

TimelineModel PackageDocument::timeline(const PackagePlanAt& at) const {
  std::vector<TimelineRect> rects;
  const rt::GraphDesc* main = program_.graphs.empty() ? nullptr : &program_.graphs[0];
  for (size_t t = 0; t < at.sizes.size(); ++t) {
    TimelineRect r;
    r.tensor = static_cast<int>(t);
    const int32_t v = value_of_tensor_[t];
    r.name = main && v >= 0 ? main->values[static_cast<size_t>(v)].name
                            : "arena tensor " + std::to_string(t);
    r.first_step = lives_[t].first_step;
    r.last_step = lives_[t].last_step;
    r.offset = at.offsets[t];
    r.size = at.sizes[t];
    if (main)
      for (int32_t view : views_of_tensor_[t])
        r.views.push_back(main->values[static_cast<size_t>(view)].name);
    r.size_expr = "(compiled)";
    r.offset_expr = "(compiled)";
    rects.push_back(std::move(r));
  }
  const int64_t steps = main ? static_cast<int64_t>(main->nodes.size()) : 0;
  // A package keeps no lower bound: the live-bytes peak is the honest one (-1 derives it).
  return TimelineModel::from_rects(std::move(rects), std::max<int64_t>(steps, 1), at.arena_bytes,
                                   -1);
}

GraphHierarchy PackageDocument::hierarchy() const { return build_name_hierarchy(names_->names); }

const std::string& PackageDocument::node_name(int node) const {
  return program_.graphs[0].nodes[static_cast<size_t>(node)].info.name;
}

const std::string& PackageDocument::node_op(int node) const {
  return program_.graphs[0].nodes[static_cast<size_t>(node)].info.op_type;
}

OpClass PackageDocument::node_class(int node) const {
  return class_of(program_.graphs[0].nodes[static_cast<size_t>(node)].info);
}

DisplayGraph PackageDocument::display_graph(const GraphHierarchy* hierarchy,
                                            const std::set<int>& expanded_scopes) const {
  DisplayGraph out;
  if (program_.graphs.empty()) return out;
  out.core_names = names_;
  const rt::GraphDesc& main = program_.graphs[0];
  std::unordered_map<int32_t, int> producer;  // value -> display node
  auto add = [&](DisplayNode n) {
    n.id = static_cast<int>(out.nodes.size());
    out.nodes.push_back(std::move(n));
    return out.nodes.back().id;
  };
  for (int32_t v : main.inputs) {
    if (v < 0 || static_cast<size_t>(v) >= main.values.size()) continue;
    DisplayNode n;
    n.kind = DisplayNodeKind::kGraphInput;
    n.label = main.values[static_cast<size_t>(v)].name;
    n.op = "input";
    producer[v] = add(std::move(n));
  }
  out.display_of_node.assign(main.nodes.size(), -1);
  for (size_t i = 0; i < main.nodes.size(); ++i) {
    const rt::NodeDesc& node = main.nodes[i];
    DisplayNode n;
    n.kind = DisplayNodeKind::kOp;
    n.label = node.info.name;
    n.op = node.info.op_type;
    n.op_class = class_of(node.info);
    n.members = {static_cast<NodeId>(i)};
    n.has_subgraphs = !node.subgraphs.empty();
    for (int32_t g : node.subgraphs) n.subgraph_nodes += nodes_in(program_, g);
    const int id = add(std::move(n));
    out.display_of_node[i] = id;
    for (int32_t v : node.outputs)
      if (v >= 0) producer[v] = id;
  }
  std::set<std::pair<int, int>> seen;
  auto edge = [&](int32_t v, int to) {
    auto it = producer.find(v);
    if (it == producer.end() || it->second == to || !seen.insert({it->second, to}).second) return;
    const rt::ValueDesc& d = main.values[static_cast<size_t>(v)];
    // The symbolic dims the package carries; a package written without them shows the dtype.
    out.edges.push_back(
        {it->second, to, d.dims.empty() ? std::string(rt::dtype_name(d.dtype)) : d.dims, kNoValue});
  };
  for (size_t i = 0; i < main.nodes.size(); ++i)
    for (int32_t v : main.nodes[i].inputs)
      if (v >= 0) edge(v, out.display_of_node[i]);
  for (int32_t v : main.outputs) {
    if (v < 0 || static_cast<size_t>(v) >= main.values.size()) continue;
    DisplayNode n;
    n.kind = DisplayNodeKind::kGraphOutput;
    n.label = main.values[static_cast<size_t>(v)].name;
    n.op = "output";
    edge(v, add(std::move(n)));
  }
  if (hierarchy) apply_name_scopes(out, *hierarchy, expanded_scopes);
  return out;
}

std::string PackageDocument::value_text(int32_t v, const PackagePlanAt& at) const {
  if (v < 0) return "  (omitted)\n";
  const rt::GraphDesc& main = program_.graphs[0];
  const rt::ValueDesc& d = main.values[static_cast<size_t>(v)];
  std::ostringstream out;
  out << "  " << d.name << "  " << rt::dtype_name(d.dtype) << (d.dims.empty() ? "" : " ") << d.dims
      << "  " << storage_name(d.storage);
  if (d.storage == rt::ValueStorage::kArena && d.arena_tensor >= 0 &&
      static_cast<size_t>(d.arena_tensor) < at.sizes.size()) {
    const auto t = static_cast<size_t>(d.arena_tensor);
    out << " tensor " << t << ": offset " << at.offsets[t] << ", " << human_bytes(at.sizes[t]);
  }
  if (!d.exec_dims.empty()) out << "  (dims bound when produced)";
  return out.str() + "\n";
}

std::string PackageDocument::node_report(int node, const PackagePlanAt& at) const {
  if (program_.graphs.empty() || node < 0 ||
      static_cast<size_t>(node) >= program_.graphs[0].nodes.size())
    return {};
  const rt::NodeDesc& n = program_.graphs[0].nodes[static_cast<size_t>(node)];
  std::ostringstream out;
  out << n.info.name << "\n";
  out << "op       " << (n.info.domain.empty() ? "" : n.info.domain + ".") << n.info.op_type
      << " (opset " << n.info.opset << ")\n";
  out << "class    " << op_class_name(class_of(n.info)) << "\n";
  out << "step     " << node << " of " << program_.graphs[0].nodes.size() << " (as compiled)\n";
  out << "inputs\n";
  for (int32_t v : n.inputs) out << value_text(v, at);
  out << "outputs\n";
  for (int32_t v : n.outputs) out << value_text(v, at);
  if (!n.subgraphs.empty()) {
    out << "bodies  ";
    for (int32_t g : n.subgraphs)
      out << " " << program_.graphs[static_cast<size_t>(g)].name << " (" << nodes_in(program_, g)
          << " nodes)";
    out << "\n";
  }
  out << "(dims as compiled; sizes at this binding for arena tensors)\n";
  return out.str();
}

std::string PackageDocument::summary_report(const PackagePlanAt& at) const {
  std::ostringstream out;
  out << "package  " << path_ << "\n";
  const size_t nodes = program_.graphs.empty() ? 0 : program_.graphs[0].nodes.size();
  out << "nodes    " << nodes << " compiled steps in the main graph, " << program_.graphs.size()
      << " graphs\n\n";
  std::map<std::string, std::map<std::string, int>> by_class;
  if (!program_.graphs.empty())
    for (const rt::NodeDesc& n : program_.graphs[0].nodes)
      by_class[op_class_name(class_of(n.info))]
              [(n.info.domain.empty() ? "" : n.info.domain + ".") + n.info.op_type]++;
  out << "ops by class\n";
  for (const auto& [cls, ops] : by_class) {
    out << "  " << cls << ":";
    for (const auto& [op, c] : ops) out << " " << op << " " << c;
    out << "\n";
  }
  out << "\nsymbols\n";
  bool at_bound = false;
  for (const rt::SymbolDesc& s : program_.symbols) {
    const int64_t v = at.values.at(s.name);
    auto b = at.bounds.find(s.name);
    const int64_t bound_here = b != at.bounds.end() ? b->second : s.hi;
    const bool bound = s.execution && v >= bound_here;
    at_bound |= bound;
    out << "  " << s.name << (s.execution ? " (execution)" : "") << "  " << s.lo << ".." << s.hi
        << (s.multiple > 1 ? " step " + std::to_string(s.multiple) : "") << "  = " << v
        << (bound                              ? " (at its bound)"
            : s.execution && bound_here < s.hi ? " (bound " + std::to_string(bound_here) + " here)"
                                               : std::string())
        << "\n";
  }
  if (at_bound)
    out << "  (execution symbols at their bounds: the runtime binds them when their node runs and "
           "may need less)\n";
  out << "assumed  " << program_.assumptions.size() << " equalities\n\n";
  out << "memory at this binding\n";
  out << "  arena        " << human_bytes(at.arena_bytes) << " (" << program_.num_arena_tensors
      << " tensors)\n";
  out << "  plan         " << plan::version_text(at.version, program_.plan_versions.size()) << "\n";
  return out.str();
}

}  // namespace sod2::studio
