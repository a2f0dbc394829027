#include "app/studio/document/studio_document.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>

#include "core/onnx/onnx_import.h"
#include "core/ops/op_class.h"
#include "core/ops/op_registry.h"
#include "core/opt/report_binding.h"
#include "core/rdp/binding.h"
#include "core/rdp/rdp_summary.h"
#include "core/rdp/symbol_text.h"
#include "core/sym/bounded_text.h"
#include "runtime/package/package_loader.h"

namespace sod2::studio {
namespace {

std::string join_dims(const Dim* begin, const Dim* end,
                      const std::function<std::string(const Dim&)>& one) {
  std::string s = "[";
  for (const Dim* d = begin; d != end; ++d) {
    if (d != begin) s += ",";
    s += one(*d);
  }
  return s + "]";
}

std::string attribute_text(const Attribute& a) {
  std::ostringstream out;
  switch (a.type) {
    case AttributeType::kInt: out << a.i; break;
    case AttributeType::kFloat: out << a.f; break;
    case AttributeType::kString: out << '"' << a.s << '"'; break;
    case AttributeType::kInts: {
      out << "[";
      for (size_t i = 0; i < a.ints.size(); ++i) out << (i ? "," : "") << a.ints[i];
      out << "]";
      break;
    }
    case AttributeType::kFloats: {
      out << "[";
      for (size_t i = 0; i < a.floats.size(); ++i) out << (i ? "," : "") << a.floats[i];
      out << "]";
      break;
    }
    case AttributeType::kGraph:
      out << "subgraph '" << (a.g ? a.g->name() : std::string()) << "' ("
          << (a.g ? a.g->num_nodes() : 0) << " nodes)";
      break;
    case AttributeType::kTensor: out << "tensor"; break;
    default: out << attribute_type_name(a.type); break;
  }
  return out.str();
}

std::string bytes_text(int64_t b) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (b < 1024) return std::to_string(b) + " B";
  double x = static_cast<double>(b) / 1024;
  size_t unit = 0;
  while (x >= 1024 && unit + 1 < std::size(kUnits)) {
    x /= 1024;
    ++unit;
  }
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(x < 10 ? 2 : 1);
  out << x << " " << kUnits[unit];
  return out.str();
}

// A symbol nobody gave a range spans RDP's default 1..65536: for its starting value it is taken
// as 1..256 (a quarter of the way up: 64 tokens, pixels).
constexpr int64_t kUndeclaredTypicalHi = 256;

// An execution symbol's bound as text: the one over input symbols if it has one, else the one its
// rule states; empty when there is none.
std::string bound_text(const RdpResult& rdp, const sym::Symbol& s) {
  if (auto b = rdp.execution_bound(s)) return b->to_string();
  if (auto b = rdp.direct_execution_bound(s)) return b->to_string();
  return "";
}

}  // namespace

Expected<std::unique_ptr<StudioDocument>> StudioDocument::open(const std::string& path,
                                                               const OpenOptions& options,
                                                               const ProgressFn& progress,
                                                               const std::atomic<bool>* cancel) {
  auto step = [&](double f, const char* stage) -> Status {
    if (cancel && cancel->load()) return cancelled("opening " + path + " was cancelled");
    if (progress) progress(f, stage);
    return Status::ok_status();
  };
  std::unique_ptr<StudioDocument> doc(new StudioDocument());
  doc->path_ = path;
  // A package parses as garbage protobuf: say what it is instead.
  if (rt::is_package_file(path))
    return unsupported(path + " is a compiled .sod2 package: open it with PackageDocument");
  RdpOptions rdp_options = options.rdp;
  std::map<std::string, int64_t> start_values = options.start_values;
  doc->ranges_source_ = "--ranges/--range";
  if (rdp_options.ranges.empty()) {
    const std::string beside = ranges_file_beside(path);
    std::error_code ec;
    if (std::filesystem::is_regular_file(beside, ec)) {
      SOD2_ASSIGN_OR_RETURN(rdp_options.ranges, read_ranges_file(beside));
      if (start_values.empty()) {
        SOD2_ASSIGN_OR_RETURN(start_values, read_range_defaults(beside));
      }
      doc->ranges_source_ = std::filesystem::path(beside).filename().string() + " beside the model";
    } else {
      doc->ranges_source_ =
          "none declared (each symbol 1.." + std::to_string(rdp_options.default_range.hi) + ")";
    }
  }
  doc->rdp_options_ = rdp_options;

  pipeline::CompileOptions compile_options;
  compile_options.import.load_external_data = options.load_external_data;
  compile_options.build_program = options.load_external_data;
  compile_options.rdp = rdp_options;
  compile_options.fuse = options.fuse;
  compile_options.progress = [&](double f, const char* stage) { return step(0.8 * f, stage); };
  Expected<pipeline::CompiledModel> compiled = pipeline::compile_file(path, compile_options);
  if (!compiled.ok()) {
    const Status& st = compiled.status();
    // Cancelling is not the file's fault, and import errors name the file already.
    if (st.code() == StatusCode::kCancelled || st.message().rfind(path, 0) == 0) return st;
    return st.with_context(path);
  }
  doc->compiled_ = std::make_unique<pipeline::CompiledModel>(std::move(*compiled));

  SOD2_RETURN_IF_ERROR(step(0.85, "libonnx shape inference (for comparison)"));
  // Safe only after our importer accepted the file: libonnx is not hardened against hostile ones.
  if (auto counts = onnx_inference_counts(path); counts.ok())
    doc->onnx_counts_ = *counts;
  else
    doc->onnx_counts_error_ = counts.status().message();

  for (const SymbolInfo& info : doc->rdp().symbols()) {
    if (info.kind != SymbolKind::kInput) continue;
    const sym::SymbolRange r = doc->rdp().ranges().get(info.symbol);
    SymbolControl c;
    c.name = info.symbol.name();
    c.lo = r.lo;
    c.hi = opt::report_upper_bound(doc->rdp(), info.symbol);
    c.multiple = std::max<int64_t>(r.multiple, 1);
    c.declared = rdp_options.ranges.count(c.name) > 0;
    c.initial = typical_size(
        c.lo, c.declared ? c.hi : std::max(c.lo, std::min(c.hi, kUndeclaredTypicalHi)), c.multiple);
    if (auto it = start_values.find(c.name); it != start_values.end())
      c.initial = std::clamp(it->second, c.lo, c.hi);
    c.origin = info.origin;
    doc->symbols_.push_back(std::move(c));
  }
  // Then the execution symbols still free after RDP (a refined one is an expression of older
  // symbols), each up to its bound at the initial binding.
  const std::map<std::string, int64_t> initial = doc->initial_values();
  for (const SymbolInfo& info : doc->rdp().symbols()) {
    if (info.kind != SymbolKind::kExecution || doc->rdp().refinements().count(info.symbol))
      continue;
    const sym::SymbolRange r = doc->rdp().ranges().get(info.symbol);
    SymbolControl c;
    c.name = info.symbol.name();
    c.execution = true;
    c.lo = r.lo;
    SOD2_ASSIGN_OR_RETURN(c.hi, doc->execution_upper(c.name, initial));
    c.multiple = std::max<int64_t>(r.multiple, 1);
    c.initial = c.hi;
    c.origin = info.origin;
    c.bound = bound_text(doc->rdp(), info.symbol);
    doc->symbols_.push_back(std::move(c));
  }
  SOD2_RETURN_IF_ERROR(step(1.0, "done"));
  return doc;
}

int64_t typical_size(int64_t lo, int64_t hi, int64_t multiple) {
  multiple = std::max<int64_t>(multiple, 1);
  const int64_t target = lo + (hi - lo) / 4;
  int64_t v = (target + multiple / 2) / multiple * multiple;
  if (v < lo) v += multiple;
  if (v > hi) v -= multiple;
  return std::clamp(v, lo, hi);
}

std::string ranges_file_beside(const std::string& model_path) {
  return std::filesystem::path(model_path).replace_extension(".ranges.json").string();
}

std::map<std::string, int64_t> StudioDocument::initial_values() const {
  std::map<std::string, int64_t> v;
  for (const SymbolControl& c : symbols_)
    if (!c.execution) v[c.name] = c.initial;
  return v;
}

Expected<sym::Binding> StudioDocument::binding(const std::map<std::string, int64_t>& values) const {
  // make_binding checks an execution symbol against its bound at this binding; complete_binding
  // keeps the values given and sizes the others at their bound.
  SOD2_ASSIGN_OR_RETURN(sym::Binding b, make_binding(rdp(), values));
  return opt::complete_binding(rdp(), plan().program.symbols(), std::move(b));
}

Expected<int64_t> StudioDocument::execution_upper(
    const std::string& name, const std::map<std::string, int64_t>& values) const {
  const sym::Symbol s = sym::symbol(name);
  const SymbolInfo* info = rdp().symbol_info(s);
  if (!info || info->kind != SymbolKind::kExecution)
    return invalid_argument("'" + name + "' is not an execution symbol of this model");
  // Only what the bound may read: the symbols of the model other than `name` itself.
  sym::Binding at;
  for (const auto& [k, v] : values) {
    const sym::Symbol other = sym::symbol(k);
    if (k != name && rdp().symbol_info(other)) at[other] = v;
  }
  const int64_t upper = opt::report_upper_bound(rdp(), s, at);
  return std::max(upper, rdp().ranges().get(s).lo);
}

std::vector<ExecutionAtBound> StudioDocument::executions_at_bound(
    const sym::Binding& binding) const {
  std::vector<ExecutionAtBound> out;
  for (const SymbolControl& c : symbols_) {
    if (!c.execution) continue;
    const sym::Symbol s = sym::symbol(c.name);
    const auto it = binding.find(s);
    if (it == binding.end()) continue;
    sym::Binding others = binding;
    others.erase(s);
    if (it->second < opt::report_upper_bound(rdp(), s, others)) continue;
    out.push_back({c.name, it->second, c.bound, c.origin});
  }
  return out;
}

Expected<opt::PlanAtBinding> StudioDocument::instantiate(const sym::Binding& binding) const {
  return pipeline::plan_at(compiled(), binding);
}

Expected<std::unique_ptr<opt::MemoryPlan>> StudioDocument::plan_without_fusion() const {
  Expected<opt::MemoryPlan> plan = pipeline::plan_unfused(compiled());
  if (!plan.ok()) return plan.status().with_context(path_ + ": planning without fusion");
  return std::make_unique<opt::MemoryPlan>(std::move(*plan));
}

Expected<opt::PlanAtBinding> StudioDocument::instantiate(const opt::MemoryPlan& plan,
                                                         const sym::Binding& binding) const {
  return opt::evaluate_plan(plan, rdp(), binding);
}

std::string StudioDocument::dims_text(ValueId v) const { return dims_text(graph(), v); }

std::string StudioDocument::dims_text(const Graph& g, ValueId v) const {
  if (!rdp().has_facts(g)) return "rank ?";
  const TensorFact& f = rdp().fact(g, v);
  if (!f.dims) return "rank ?";
  return join_dims(f.dims->data(), f.dims->data() + f.dims->size(),
                   [](const Dim& d) { return d ? d->to_string() : std::string("?"); });
}

std::string StudioDocument::dims_at_text(ValueId v, const sym::Binding& binding) const {
  return dims_at_text(graph(), v, binding);
}

std::string StudioDocument::dims_at_text(const Graph& g, ValueId v,
                                         const sym::Binding& binding) const {
  if (!rdp().has_facts(g)) return "rank ?";
  const TensorFact& f = rdp().fact(g, v);
  if (!f.dims) return "rank ?";
  return join_dims(f.dims->data(), f.dims->data() + f.dims->size(), [&](const Dim& d) {
    const auto x = dim_at(d, binding);
    return x ? std::to_string(*x) : std::string("?");
  });
}

std::optional<int64_t> StudioDocument::bytes_at(ValueId v, const sym::Binding& binding) const {
  return bytes_at(graph(), v, binding);
}

std::optional<int64_t> StudioDocument::bytes_at(const Graph& g, ValueId v,
                                                const sym::Binding& binding) const {
  if (!rdp().has_facts(g)) return std::nullopt;
  const TensorFact& f = rdp().fact(g, v);
  const DataType t = f.dtype != DataType::kUndefined ? f.dtype : g.value(v).dtype;
  const size_t elem = data_type_size(t);
  if (!f.dims || elem == 0) return std::nullopt;
  int64_t n = 1;
  for (const Dim& d : *f.dims) {
    const auto x = dim_at(d, binding);
    if (!x) return std::nullopt;
    n *= *x;
  }
  return n * static_cast<int64_t>(elem);
}

std::string StudioDocument::node_report(NodeId id, const sym::Binding& binding) const {
  return node_report(graph(), id, binding);
}

std::string StudioDocument::node_report(const Graph& g, NodeId id,
                                        const sym::Binding& binding) const {
  const Node& n = g.node(id);
  std::ostringstream out;
  const OpClass cls = op_class_of(n);
  out << n.name << "\n";
  out << "op       " << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << " (opset "
      << n.opset << ")\n";
  out << "class    " << op_class_name(cls);
  if (cls == OpClass::kISVDOS)
    out << (rdp().resolved(n) ? " (value inputs resolved)" : " (unresolved)");
  out << "\n";
  if (!n.attributes.empty()) {
    out << "attributes\n";
    for (const Attribute& a : n.attributes)
      out << "  " << a.name << " = " << attribute_text(a) << "\n";
  }
  auto value_line = [&](ValueId v) {
    if (v == kNoValue) return std::string("  (omitted)\n");
    std::string s = "  " + g.value(v).name + "  " + dims_text(g, v) + "  at binding " +
                    dims_at_text(g, v, binding);
    if (const auto b = bytes_at(g, v, binding)) s += "  " + bytes_text(*b);
    return s + "\n";
  };
  out << "inputs\n";
  for (ValueId v : n.inputs) out << value_line(v);
  out << "outputs\n";
  for (ValueId v : n.outputs) out << value_line(v);
  if (&g != &graph()) out << "in       " << g.name() << " (a body; fused groups are main-graph)\n";
  const int32_t grp = &g == &graph() && id < static_cast<NodeId>(fusion().group_of.size())
                          ? fusion().group_of[static_cast<size_t>(id)]
                          : -1;
  if (grp >= 0) {
    const opt::FusionGroup& fg = fusion().groups[static_cast<size_t>(grp)];
    out << "group    " << grp << " (" << fg.kind << ", " << fg.nodes.size() << " nodes)";
    if (fg.nodes.size() > 1) {
      out << ":";
      for (NodeId m : fg.nodes) out << " " << g.node(m).name;
    }
    out << "\n";
    for (const std::string& why : fg.not_fused) out << "  not fused: " << why << "\n";
  }
  // What the node computes (core/ops/op_work.h), and its group's arithmetic intensity: the
  // roofline a profile's GOP/s is read against.
  const pipeline::CompiledModel& c = compiled();
  if (&g == &graph() && static_cast<size_t>(id) < c.work.node_ops.size()) {
    const std::optional<sym::SymExpr>& ops = c.work.node_ops[static_cast<size_t>(id)];
    out << "work     ";
    if (!ops) {
      out << "not counted (a dim it needs is unknown, or an op without a rule)\n";
    } else {
      out << sym::bounded_text(*ops, 160) << " operations";
      if (const auto v = opt::ops_at(*ops, binding))
        out << " = " << opt::human_ops(static_cast<double>(*v)) << " at binding";
      out << "\n";
    }
    if (grp >= 0) {
      const opt::FusionGroup& fg = fusion().groups[static_cast<size_t>(grp)];
      const auto gops = opt::group_ops(c.work, fg);
      const auto gbytes = opt::group_bytes(g, rdp(), fg);
      const auto ov = gops ? opt::ops_at(*gops, binding) : std::nullopt;
      const auto bv = gbytes ? opt::ops_at(*gbytes, binding) : std::nullopt;
      if (ov && bv && *bv > 0) {
        std::ostringstream intensity;
        intensity.precision(3);
        intensity << static_cast<double>(*ov) / static_cast<double>(*bv);
        out << "group    " << opt::human_ops(static_cast<double>(*ov)) << " over "
            << bytes_text(*bv) << " read and written: " << intensity.str()
            << " operations per byte\n";
      }
    }
  }
  for (const Diagnostic& d : rdp().diagnostics())
    if (d.node == n.name) out << severity_name(d.severity) << ": " << d.message << "\n";
  return out.str();
}

std::string StudioDocument::summary_report(const opt::PlanAtBinding& at) const {
  std::ostringstream out;
  std::map<std::string, std::map<std::string, int>> by_class;  // class -> op -> count
  for (size_t i = 0; i < graph().num_nodes(); ++i) {
    const Node& n = graph().node(static_cast<NodeId>(i));
    by_class[op_class_name(op_class_of(n))][n.op_type]++;
  }
  out << "model    " << path_ << "\n";
  out << "nodes    " << graph().num_nodes() << " in the main graph, " << fusion().groups.size()
      << " steps after fusion\n\n";
  out << "ops by class\n";
  for (const auto& [cls, ops] : by_class) {
    int total = 0;
    for (const auto& [op, c] : ops) total += c;
    std::string line = "  " + cls + " (" + std::to_string(total) + "):";
    for (const auto& [op, c] : ops) {
      const std::string item = " " + op + " " + std::to_string(c);
      if (line.size() + item.size() > 88) {
        out << line << "\n";
        line = "     ";
      }
      line += item;
    }
    out << line << "\n";
  }
  const RdpSummary s = summarize_rdp(model(), rdp());
  out << "\ndims     " << s.dims_total << " total: " << s.dims_constant << " constant, "
      << s.dims_symbolic << " symbolic, " << s.dims_execution << " data-dependent, "
      << s.dims_unknown << " unknown; ranks unknown " << s.rank_unknown << "\n";
  if (onnx_counts_) {
    const OnnxInferenceCounts& o = *onnx_counts_;
    out << "libonnx  " << o.dims_total << " total: " << o.dims_constant << " constant, "
        << o.dims_symbolic << " symbolic, " << o.dims_unknown << " unknown; ranks unknown "
        << o.rank_unknown << " (its InferShapes with data propagation)\n";
  } else {
    out << "libonnx  shape inference failed: " << onnx_counts_error_ << "\n";
  }
  out << "assumed  " << s.assumptions << " equalities\n";
  const opt::ModelWork& work = compiled().work;
  out << "work     " << sym::bounded_text(work.total_ops, 160) << " operations";
  if (const auto v = opt::ops_at(work.total_ops, at.binding))
    out << " = " << opt::human_ops(static_cast<double>(*v))
        << (work.involves_execution ? " at most" : "") << " at this binding";
  out << "\n";
  if (!work.uncounted.empty())
    out << "         " << work.uncounted.size() << " node(s) not counted, e.g. "
        << work.uncounted.front() << "\n";
  out << "ranges   " << ranges_source_ << "\n";
  // What the plan below sizes for data it cannot know: each such symbol at the most it can be.
  for (const ExecutionAtBound& e : executions_at_bound(at.binding))
    out << "bound    " << e.name << " at its bound " << e.value << " ("
        << (e.bound.empty() ? "no bound: a report value" : "<= " + e.bound) << "; " << e.origin
        << ")\n";
  out << "\n";
  auto ratio = [&](int64_t x) {
    std::ostringstream r;
    r.precision(3);
    r << (at.lower_bound_bytes > 0 ? static_cast<double>(x) / at.lower_bound_bytes : 0.0);
    return r.str();
  };
  out << "memory at this binding\n";
  out << "  arena        " << bytes_text(at.arena_bytes) << "  (" << ratio(at.arena_bytes)
      << " x lower bound)\n";
  out << "  lower bound  " << bytes_text(at.lower_bound_bytes) << "\n";
  out << "  greedy       " << bytes_text(at.greedy_bytes) << "\n";
  out << "  no reuse     " << bytes_text(at.naive_bytes) << "\n";
  return out.str();
}

}  // namespace sod2::studio
