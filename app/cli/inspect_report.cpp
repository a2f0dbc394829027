#include "app/cli/inspect_report.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/ops/op_registry.h"
#include "core/opt/model_work.h"
#include "core/rdp/binding.h"
#include "core/rdp/rdp_summary.h"
#include "core/sym/bounded_text.h"
#include "core/text/text_table.h"
#include "core/version.h"

namespace sod2::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string value_name(const Graph& g, ValueId id) {
  return id == kNoValue ? "" : g.value(id).name;
}

Json declared_dims_json(const ShapeDecl& shape) {
  if (!shape) return nullptr;
  Json dims = Json::array();
  for (const DimDecl& d : *shape)
    dims.push_back(d.is_unknown() ? Json(nullptr) : Json(d.to_string()));
  return dims;
}

Json fact_dims_json(const TensorFact& f) {
  if (!f.dims) return nullptr;
  Json dims = Json::array();
  for (const Dim& d : *f.dims) dims.push_back(d ? Json(d->to_string()) : Json(nullptr));
  return dims;
}

Json dims_at_json(const TensorFact& f, const sym::Binding& b) {
  if (!f.dims) return nullptr;
  Json dims = Json::array();
  for (const Dim& d : *f.dims) {
    auto v = dim_at(d, b);
    dims.push_back(v ? Json(*v) : Json(nullptr));
  }
  return dims;
}

std::string dtype_of(const Value& v, const TensorFact& f) {
  return std::string(data_type_name(f.dtype != DataType::kUndefined ? f.dtype : v.dtype));
}

// Node names past this many columns lose their middle; their ends tell the layers apart.
constexpr size_t kNameWidth = 48;
// Known values past this many are shown as their first few and a count.
constexpr size_t kValuesShown = 8;

// TensorFact::to_string with a long value list elided: a 64-element constant reads
// "[64] = (0, 0, 0, 0, … 64 values)", not a line of a thousand characters.
std::string fact_text(const TensorFact& f) {
  if (!f.value || f.value->size() <= kValuesShown) return f.to_string();
  TensorFact shape = f;
  shape.value.reset();
  std::vector<std::string> items;
  for (const sym::SymExpr& e : *f.value) items.push_back(e.to_string());
  return shape.to_string() + " = (" + text::elided_list(items, kValuesShown) + ")";
}

// Node outputs and graph outputs get RDP facts; graph inputs and initializers show theirs too.
Json value_json(const Graph& g, ValueId id, const InspectData& d) {
  const Value& v = g.value(id);
  const TensorFact& f = d.rdp.fact(g, id);
  Json j;
  j["name"] = v.name;
  j["graph"] = g.name();
  j["kind"] = value_kind_name(v.kind);
  j["type"] = type_category_name(f.category);
  j["dtype"] = dtype_of(v, f);
  j["rank"] = f.dims ? Json(f.dims->size()) : Json(nullptr);
  j["dims"] = fact_dims_json(f);
  if (f.value && v.kind != ValueKind::kInitializer) {
    Json vals = Json::array();
    for (const auto& e : *f.value) vals.push_back(e.to_string());
    j["value"] = vals;
  }
  j["declared_dims"] = declared_dims_json(v.shape);
  if (d.binding) j["dims_at"] = dims_at_json(f, *d.binding);
  return j;
}

Json io_json(const Graph& g, const std::vector<ValueId>& ids, const InspectData& d) {
  Json arr = Json::array();
  for (ValueId id : ids) {
    const Value& v = g.value(id);
    const TensorFact& f = d.rdp.fact(g, id);
    Json j;
    j["name"] = v.name;
    j["dtype"] = dtype_of(v, f);
    j["rank"] = f.dims ? Json(f.dims->size()) : Json(nullptr);
    j["dims"] = fact_dims_json(f);
    j["declared_dims"] = declared_dims_json(v.shape);
    if (d.binding) j["dims_at"] = dims_at_json(f, *d.binding);
    arr.push_back(std::move(j));
  }
  return arr;
}

// ISDO/ISDOS shapes are always static; ISVDOS ones when RDP resolved their value inputs.
bool node_resolved(const Node& n, const RdpResult& rdp) {
  switch (op_class_of(n)) {
    case OpClass::kISDO:
    case OpClass::kISDOS: return true;
    case OpClass::kISVDOS: return rdp.resolved(n);
    default: return false;
  }
}

std::vector<std::pair<std::string, size_t>> sorted_histogram(const Graph& root) {
  std::map<std::string, size_t> hist;
  visit_graphs(root, [&](const Graph& g, const Node*) {
    for (const Node& n : g.nodes())
      ++hist[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
  });
  std::vector<std::pair<std::string, size_t>> v(hist.begin(), hist.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

Json summary_json(const RdpSummary& s) {
  return {{"values_total", s.values_total},     {"rank_unknown", s.rank_unknown},
          {"dims_total", s.dims_total},         {"dims_constant", s.dims_constant},
          {"dims_symbolic", s.dims_symbolic},   {"dims_unknown", s.dims_unknown},
          {"dims_execution", s.dims_execution}, {"assumptions", s.assumptions}};
}

Json diagnostics_json(const InspectData& d) {
  Json diags = Json::array();
  auto add = [&](const Diagnostic& x) {
    diags.push_back(
        {{"severity", severity_name(x.severity)}, {"message", x.message}, {"node", x.node}});
  };
  for (const Diagnostic& x : d.model.diagnostics) add(x);
  for (const Diagnostic& x : d.rdp.diagnostics()) add(x);
  return diags;
}

}  // namespace

Json inspect_json(const InspectData& d) {
  const Model& model = d.model;
  const Graph& root = *model.graph;
  Json doc;
  doc["schema_version"] = kInspectSchemaVersion;
  doc["tool"] = std::string("sod2 ") + SOD2_VERSION_STRING;
  doc["model"] = {{"path", model.path},
                  {"graph", root.name()},
                  {"ir_version", model.ir_version},
                  {"producer_name", model.producer_name},
                  {"producer_version", model.producer_version}};
  doc["opset"] = model.opset("");
  Json imports = Json::array();
  for (const OpsetImport& o : model.opset_imports)
    imports.push_back(
        {{"domain", o.domain.empty() ? "ai.onnx" : o.domain}, {"version", o.version}});
  doc["opset_imports"] = imports;
  doc["inputs"] = io_json(root, root.inputs(), d);
  doc["outputs"] = io_json(root, root.outputs(), d);

  Json symbols = Json::array();
  for (const SymbolInfo& s : d.rdp.symbols()) {
    const sym::SymbolRange r = d.rdp.ranges().get(s.symbol);
    Json j = {{"name", s.symbol.name()},
              {"kind", s.kind == SymbolKind::kInput ? "input" : "execution"},
              {"origin", s.origin},
              {"range", {r.lo, r.hi, r.multiple}},
              {"range_declared", s.has_declared_range}};
    if (auto it = d.rdp.refinements().find(s.symbol); it != d.rdp.refinements().end())
      j["refined_to"] = it->second.to_string();
    if (d.binding) {
      auto b = d.binding->find(s.symbol);
      j["bound"] = b == d.binding->end() ? Json(nullptr) : Json(b->second);
    }
    symbols.push_back(std::move(j));
  }
  doc["symbols"] = symbols;

  Json nodes = Json::array(), values = Json::array(), subgraphs = Json::array();
  visit_graphs(root, [&](const Graph& g, const Node* owner) {
    if (owner) {
      Json s;
      s["name"] = g.name();
      s["parent"] = g.parent()->name();
      s["node"] = owner->name;
      Json ins = Json::array(), outs = Json::array(), captured = Json::array();
      for (ValueId id : g.inputs()) ins.push_back(g.value(id).name);
      for (ValueId id : g.outputs()) outs.push_back(g.value(id).name);
      for (const Value& v : g.values())
        if (v.kind == ValueKind::kOuterScope) captured.push_back(v.name);
      s["inputs"] = ins;
      s["outputs"] = outs;
      s["outer_scope"] = captured;
      subgraphs.push_back(std::move(s));
    }
    for (const Node& n : g.nodes()) {
      Json j;
      j["name"] = n.name;
      j["op"] = n.op_type;
      j["domain"] = n.domain.empty() ? "ai.onnx" : n.domain;
      j["graph"] = g.name();
      j["class"] = op_class_name(op_class_of(n));
      j["resolved"] = node_resolved(n, d.rdp);
      Json ins = Json::array(), outs = Json::array(), subs = Json::array();
      for (ValueId id : n.inputs) ins.push_back(value_name(g, id));
      for (ValueId id : n.outputs) outs.push_back(value_name(g, id));
      for (const Graph* sg : n.subgraphs()) subs.push_back(sg->name());
      j["inputs"] = ins;
      j["outputs"] = outs;
      j["subgraphs"] = subs;
      nodes.push_back(std::move(j));
    }
    for (size_t i = 0; i < g.num_values(); ++i)
      if (g.value(static_cast<ValueId>(i)).kind != ValueKind::kOuterScope)
        values.push_back(value_json(g, static_cast<ValueId>(i), d));
  });
  doc["nodes"] = std::move(nodes);
  doc["values"] = std::move(values);
  doc["subgraphs"] = std::move(subgraphs);

  Json assumptions = Json::array();
  for (const Assumption& a : d.rdp.assumptions())
    assumptions.push_back({{"expr", a.to_string()}, {"node", a.node}, {"why", a.why}});
  doc["assumptions"] = assumptions;

  Json hist = Json::object();
  for (const auto& [op, count] : sorted_histogram(root)) hist[op] = count;
  doc["op_histogram"] = hist;
  doc["counts"] = {{"nodes", root.total_nodes()},
                   {"nodes_main_graph", root.num_nodes()},
                   {"subgraphs", root.total_subgraphs()},
                   {"initializers", root.total_initializers()}};
  doc["summary"] = summary_json(summarize_rdp(model, d.rdp));
  const opt::ModelWork work = opt::count_work(model, d.rdp);
  Json node_ops = Json::object();  // main-graph nodes by name
  for (size_t i = 0; i < work.node_ops.size(); ++i)
    node_ops[root.nodes()[i].name] =
        work.node_ops[i] ? Json(sym::bounded_text(*work.node_ops[i])) : Json(nullptr);
  doc["work"] = {{"ops", sym::bounded_text(work.total_ops)},
                 {"involves_execution", work.involves_execution},
                 {"uncounted", work.uncounted},
                 {"node_ops", std::move(node_ops)}};
  if (d.binding) {
    const auto v = opt::ops_at(work.total_ops, *d.binding);
    doc["work"]["ops_at_binding"] = v ? Json(*v) : Json(nullptr);
  }
  if (d.onnx) {
    doc["onnx_summary"] = {
        {"values_total", d.onnx->values_total},   {"rank_unknown", d.onnx->rank_unknown},
        {"dims_total", d.onnx->dims_total},       {"dims_constant", d.onnx->dims_constant},
        {"dims_symbolic", d.onnx->dims_symbolic}, {"dims_unknown", d.onnx->dims_unknown}};
  }
  doc["diagnostics"] = diagnostics_json(d);
  return doc;
}

std::string inspect_text(const InspectData& d) {
  const Model& model = d.model;
  const Graph& root = *model.graph;
  std::ostringstream out;
  out << "model     " << text::visible(model.path.empty() ? root.name() : model.path) << "\n";
  out << "          ir " << model.ir_version << ", opset " << model.opset("");
  for (const OpsetImport& o : model.opset_imports)
    if (!o.domain.empty()) out << ", " << text::visible(o.domain) << " " << o.version;
  if (!model.producer_name.empty())
    out << ", produced by " << text::visible(model.producer_name) << " "
        << text::visible(model.producer_version);
  out << "\n";

  // Inputs and outputs in one table so that their columns line up with each other.
  text::TextTable io({{""}, {"", text::Align::kLeft, kNameWidth}, {""}, {""}});
  io.show_header(false);
  auto print_io = [&](const char* title, const std::vector<ValueId>& ids) {
    bool first = true;
    for (ValueId id : ids) {
      const Value& v = root.value(id);
      const TensorFact& f = d.rdp.fact(root, id);
      std::string shape = fact_text(f);
      if (v.shape && shape_to_string(v.shape) != f.to_string())
        shape += "   (declared " + shape_to_string(v.shape) + ")";
      io.add_row({first ? title : "", v.name, dtype_of(v, f), shape});
      first = false;
    }
    if (first) io.add_row({title, "(none)"});
  };
  // Padded to eight so that the names start in column 10, under the other sections' text.
  print_io("inputs  ", root.inputs());
  print_io("outputs ", root.outputs());
  out << io.str();
  out << "nodes     " << root.total_nodes() << " (" << root.num_nodes() << " in the main graph, "
      << root.total_subgraphs() << " subgraph" << (root.total_subgraphs() == 1 ? "" : "s") << "), "
      << root.total_initializers() << " initializers\n";
  out << "ops       ";
  size_t col = 10;
  bool first = true;
  for (const auto& [op, count] : sorted_histogram(root)) {
    const std::string item = text::visible(op) + " " + std::to_string(count);
    if (!first) {
      if (col + item.size() + 2 > 100) {
        out << ",\n          ";
        col = 10;
      } else {
        out << ", ";
        col += 2;
      }
    }
    out << item;
    col += item.size();
    first = false;
  }
  out << "\n";
  const RdpSummary s = summarize_rdp(model, d.rdp);
  out << "shapes    " << s.values_total << " values, " << s.rank_unknown << " of unknown rank; "
      << s.dims_total << " dims: " << s.dims_constant << " constant, " << s.dims_symbolic
      << " symbolic, " << s.dims_execution << " execution-dependent, " << s.dims_unknown
      << " unknown\n";
  if (d.onnx) {
    out << "libonnx   " << d.onnx->values_total << " values, " << d.onnx->rank_unknown
        << " of unknown rank; " << d.onnx->dims_total << " dims: " << d.onnx->dims_constant
        << " constant, " << d.onnx->dims_symbolic << " symbolic, " << d.onnx->dims_unknown
        << " unknown (InferShapes with data propagation)\n";
  }
  out << "symbols  ";
  for (const SymbolInfo& si : d.rdp.symbols()) {
    if (si.kind != SymbolKind::kInput) continue;
    const sym::SymbolRange r = d.rdp.ranges().get(si.symbol);
    out << " " << text::visible(si.symbol.name()) << "∈[" << r.lo << "," << r.hi << "]";
    if (r.multiple > 1) out << "%" << r.multiple;
    if (d.binding) out << "=" << d.binding->at(si.symbol);
  }
  const size_t n_exec =
      std::count_if(d.rdp.symbols().begin(), d.rdp.symbols().end(),
                    [](const SymbolInfo& i) { return i.kind == SymbolKind::kExecution; });
  out << "; " << n_exec << " execution symbol" << (n_exec == 1 ? "" : "s") << "\n";
  // What a run computes as a function of the sizes (core/ops/op_work.h), and at --bind.
  const opt::ModelWork work = opt::count_work(model, d.rdp);
  out << "work      " << sym::bounded_text(work.total_ops, 640) << " operations";
  if (d.binding) {
    if (const auto v = opt::ops_at(work.total_ops, *d.binding))
      out << " = " << opt::human_ops(static_cast<double>(*v)) << " at --bind";
  }
  if (work.involves_execution) out << " (execution symbols at their values: at most their bounds)";
  out << "\n";
  if (!work.uncounted.empty())
    out << "          " << work.uncounted.size() << " node"
        << (work.uncounted.size() == 1 ? "" : "s") << " not counted, e.g. "
        << text::visible(work.uncounted.front()) << "\n";
  for (const Assumption& a : d.rdp.assumptions())
    out << "assumes   " << text::visible(a.to_string()) << "   [node " << text::visible(a.node)
        << ": " << text::visible(a.why) << "]\n";

  // The node table: one line per node output, so every propagated shape can be read.
  text::TextTable nodes({{"node", text::Align::kLeft, kNameWidth},
                         {"op"},
                         {"class"},
                         {std::string("output shapes") + (d.binding ? " (at binding)" : "")}});
  visit_graphs(root, [&](const Graph& g, const Node* owner) {
    if (owner) nodes.add_line("-- subgraph " + g.name() + " of " + owner->name);
    for (const Node& n : g.nodes()) {
      std::string cls = op_class_name(op_class_of(n));
      if (op_class_of(n) == OpClass::kISVDOS && d.rdp.resolved(n)) cls += "*";
      std::string shapes;
      for (ValueId id : n.outputs) {
        if (id == kNoValue) continue;
        const TensorFact& f = d.rdp.fact(g, id);
        shapes += (shapes.empty() ? "" : "; ") + fact_text(f);
        if (d.binding && f.dims) {
          std::vector<std::string> dims;
          for (const Dim& dim : *f.dims) {
            auto v = dim_at(dim, *d.binding);
            dims.push_back(v ? std::to_string(*v) : "?");
          }
          shapes += " → [" + text::elided_list(dims, dims.size()) + "]";
        }
      }
      nodes.add_row({n.name, n.op_type, cls, shapes});
    }
  });
  out << "\n" << nodes.str();
  out << "(class* = ISVDOS whose value inputs RDP resolved)\n";
  for (const auto* diags : {&model.diagnostics, &d.rdp.diagnostics()})
    for (const Diagnostic& x : *diags) {
      out << severity_name(x.severity) << ": " << text::visible(x.message);
      if (!x.node.empty()) out << " [node " << text::visible(x.node) << "]";
      out << "\n";
    }
  return out.str();
}

ShapeAnnotations shape_annotations(const Model& model, const RdpResult& rdp) {
  ShapeAnnotations out;
  visit_graphs(*model.graph, [&](const Graph& g, const Node*) {
    auto& by_name = out.emplace_back();
    for (size_t i = 0; i < g.num_values(); ++i) {
      const Value& v = g.value(static_cast<ValueId>(i));
      if (v.kind != ValueKind::kNodeOutput) continue;
      const TensorFact& f = rdp.fact(g, static_cast<ValueId>(i));
      if (f.category != TypeCategory::kTensor || !f.dims) continue;
      std::vector<DimDecl> dims;
      for (const Dim& dim : *f.dims) {
        if (!dim)
          dims.push_back(DimDecl::unknown());
        else if (auto c = dim->constant_value())
          dims.push_back(DimDecl::constant(*c));
        else
          dims.push_back(DimDecl::param(dim->to_string()));
      }
      by_name[v.name] = {f.dtype != DataType::kUndefined ? f.dtype : v.dtype, std::move(dims)};
    }
  });
  return out;
}

}  // namespace sod2::cli
