#include "app/cli/inspect_report.h"

#include <algorithm>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/version.h"

namespace sod2::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string value_name(const Graph& g, ValueId id) { return id == kNoValue ? "" : g.value(id).name; }

Json dims_json(const ShapeDecl& shape) {
  if (!shape) return nullptr;
  Json dims = Json::array();
  for (const DimDecl& d : *shape) dims.push_back(d.is_unknown() ? Json(nullptr) : Json(d.to_string()));
  return dims;
}

Json value_json(const Graph& g, const Value& v) {
  Json j;
  j["name"] = v.name;
  j["graph"] = g.name();
  j["kind"] = value_kind_name(v.kind);
  j["type"] = type_category_name(v.category);
  j["dtype"] = v.category == TypeCategory::kTensor || v.category == TypeCategory::kSparseTensor
                   ? Json(std::string(data_type_name(v.dtype)))
                   : Json(nullptr);
  j["rank"] = v.shape ? Json(v.shape->size()) : Json(nullptr);
  j["dims"] = dims_json(v.shape);
  return j;
}

Json io_json(const Graph& g, const std::vector<ValueId>& ids) {
  Json arr = Json::array();
  for (ValueId id : ids) {
    const Value& v = g.value(id);
    Json j;
    j["name"] = v.name;
    j["dtype"] = std::string(data_type_name(v.dtype));
    j["rank"] = v.shape ? Json(v.shape->size()) : Json(nullptr);
    j["dims"] = dims_json(v.shape);
    arr.push_back(std::move(j));
  }
  return arr;
}

std::map<std::string, size_t> op_histogram(const Graph& root) {
  std::map<std::string, size_t> hist;
  visit_graphs(root, [&](const Graph& g, const Node*) {
    for (const Node& n : g.nodes())
      ++hist[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
  });
  return hist;
}

// Most frequent first, ties by name, so the output is stable.
std::vector<std::pair<std::string, size_t>> sorted_histogram(const Graph& root) {
  const auto hist = op_histogram(root);
  std::vector<std::pair<std::string, size_t>> v(hist.begin(), hist.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

}  // namespace

Json inspect_json(const Model& model) {
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
    imports.push_back({{"domain", o.domain.empty() ? "ai.onnx" : o.domain}, {"version", o.version}});
  doc["opset_imports"] = imports;
  doc["inputs"] = io_json(root, root.inputs());
  doc["outputs"] = io_json(root, root.outputs());

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
      Json ins = Json::array(), outs = Json::array(), subs = Json::array();
      for (ValueId id : n.inputs) ins.push_back(value_name(g, id));
      for (ValueId id : n.outputs) outs.push_back(value_name(g, id));
      for (const Graph* sg : n.subgraphs()) subs.push_back(sg->name());
      j["inputs"] = ins;
      j["outputs"] = outs;
      j["subgraphs"] = subs;
      nodes.push_back(std::move(j));
    }
    for (const Value& v : g.values())
      if (v.kind != ValueKind::kOuterScope) values.push_back(value_json(g, v));
  });
  doc["nodes"] = std::move(nodes);
  doc["values"] = std::move(values);
  doc["subgraphs"] = std::move(subgraphs);

  Json hist = Json::object();
  for (const auto& [op, count] : sorted_histogram(root)) hist[op] = count;
  doc["op_histogram"] = hist;
  doc["counts"] = {{"nodes", root.total_nodes()},
                   {"nodes_main_graph", root.num_nodes()},
                   {"subgraphs", root.total_subgraphs()},
                   {"initializers", root.total_initializers()}};
  Json diags = Json::array();
  for (const Diagnostic& d : model.diagnostics)
    diags.push_back({{"severity", severity_name(d.severity)}, {"message", d.message}, {"node", d.node}});
  doc["diagnostics"] = diags;
  return doc;
}

std::string inspect_text(const Model& model) {
  const Graph& root = *model.graph;
  std::ostringstream out;
  out << "model     " << (model.path.empty() ? root.name() : model.path) << "\n";
  out << "          ir " << model.ir_version << ", opset " << model.opset("");
  for (const OpsetImport& o : model.opset_imports)
    if (!o.domain.empty()) out << ", " << o.domain << " " << o.version;
  if (!model.producer_name.empty())
    out << ", produced by " << model.producer_name << " " << model.producer_version;
  out << "\n";

  size_t width = 0;
  for (ValueId id : root.inputs()) width = std::max(width, root.value(id).name.size());
  for (ValueId id : root.outputs()) width = std::max(width, root.value(id).name.size());
  auto print_io = [&](const char* title, const std::vector<ValueId>& ids) {
    bool first = true;
    for (ValueId id : ids) {
      const Value& v = root.value(id);
      out << (first ? title : "          ") << std::left << std::setw(static_cast<int>(width) + 2)
          << v.name << std::setw(9) << data_type_name(v.dtype) << shape_to_string(v.shape) << "\n";
      first = false;
    }
    if (first) out << title << "(none)\n";
  };
  print_io("inputs    ", root.inputs());
  print_io("outputs   ", root.outputs());
  out << "nodes     " << root.total_nodes() << " (" << root.num_nodes() << " in the main graph, "
      << root.total_subgraphs() << " subgraph" << (root.total_subgraphs() == 1 ? "" : "s")
      << "), " << root.total_initializers() << " initializers\n";
  out << "ops      ";
  size_t col = 10;
  bool first = true;
  for (const auto& [op, count] : sorted_histogram(root)) {
    std::string item = (first ? " " : ", ") + op + " " + std::to_string(count);
    if (col + item.size() > 100) {
      out << ",\n          ";
      item = item.substr(first ? 1 : 2);
      col = 10;
    }
    out << item;
    col += item.size();
    first = false;
  }
  out << "\n";
  for (const Diagnostic& d : model.diagnostics) {
    out << severity_name(d.severity) << ": " << d.message;
    if (!d.node.empty()) out << " [node " << d.node << "]";
    out << "\n";
  }
  return out.str();
}

}  // namespace sod2::cli
