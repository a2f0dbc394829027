#include "core/onnx/graph_import.h"

#include <algorithm>

#include "core/onnx/import_limits.h"
#include "core/onnx/op_schema_check.h"
#include "core/onnx/qdq_dedicate.h"
#include "core/onnx/type_import.h"

namespace sod2::onnx_import {
namespace {

std::string normalise_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::string node_label(const std::string& name, const std::string& op) {
  return "node '" + name + "' (" + op + ")";
}

}  // namespace

std::string GraphImporter::where() const {
  return depth_ == 0 ? std::string() : " in subgraph '" + graph_->name() + "'";
}

ValueId GraphImporter::resolve(const std::string& name) {
  const ValueId local = graph_->find(name);
  if (local != kNoValue || !parent_) return local;
  const ValueId outer = parent_->resolve(name);
  if (outer == kNoValue) return kNoValue;
  const Value& src = parent_->graph_->value(outer);
  Value v;
  v.name = name;
  v.kind = ValueKind::kOuterScope;
  v.category = src.category;
  v.dtype = src.dtype;
  v.shape = src.shape;
  v.outer_graph = parent_->graph_.get();
  v.outer_value = outer;
  captured_.push_back(name);
  // Cannot collide: find() just said the name is not local.
  return *graph_->add_value(std::move(v));
}

Status GraphImporter::check_not_shadowing(const std::string& name, const std::string& what) const {
  if (parent_ && parent_->graph_->find_in_scope(name, nullptr) != kNoValue) {
    return invalid_model(what + where() + " reuses the name '" + name +
                         "' of an enclosing graph (ONNX names are single-assignment across "
                         "subgraph scopes)");
  }
  return {};
}

std::string GraphImporter::unique_node_name(const onnx::NodeProto& node) {
  std::string name = node.name();
  if (!name.empty() && scope_->node_names.insert(name).second) return name;
  if (!name.empty()) {
    scope_->diagnostics->push_back(
        {Severity::kWarning, "node name '" + name + "' is used more than once; renamed", name});
  }
  const std::string base = name.empty() ? node.op_type() : name;
  int64_t& counter = scope_->name_counters[base];
  do {
    name = base + "_" + std::to_string(counter++);
  } while (!scope_->node_names.insert(name).second);
  return name;
}

Status GraphImporter::declare_inputs_and_initializers(const onnx::GraphProto& proto) {
  std::unordered_set<std::string> initializer_names;
  for (const auto& t : proto.initializer()) initializer_names.insert(t.name());
  for (const auto& t : proto.sparse_initializer()) initializer_names.insert(t.values().name());

  std::vector<ValueId> inputs;
  for (const auto& in : proto.input()) {
    // An input that also has an initializer is a constant with an overridable default (IR < 4
    // style); it is read as the initializer.
    if (initializer_names.count(in.name())) continue;
    Value v;
    v.name = in.name();
    v.kind = ValueKind::kGraphInput;
    const std::string what = "graph input '" + in.name() + "'" + where();
    if (in.name().empty()) return invalid_model("a graph input has an empty name" + where());
    SOD2_RETURN_IF_ERROR(check_not_shadowing(in.name(), "graph input '" + in.name() + "'"));
    SOD2_RETURN_IF_ERROR(import_type(in.type(), what, &v));
    SOD2_ASSIGN_OR_RETURN(ValueId id, graph_->add_value(std::move(v)));
    inputs.push_back(id);
  }
  graph_->set_inputs(std::move(inputs));

  auto add = [&](Tensor tensor) -> Status {
    if (tensor.name().empty()) return invalid_model("an initializer has an empty name" + where());
    SOD2_RETURN_IF_ERROR(check_not_shadowing(tensor.name(), "initializer '" + tensor.name() + "'"));
    Value v;
    v.name = tensor.name();
    SOD2_ASSIGN_OR_RETURN(ValueId id, graph_->add_value(std::move(v)));
    graph_->add_initializer(std::move(tensor), id);
    return {};
  };
  auto mark_four_bit = [&](int32_t onnx_type, const std::string& name) {
    if (widened_four_bit_type(onnx_type))
      scope_->four_bit_values.insert({graph_.get(), graph_->find(name)});
  };
  for (const auto& t : proto.initializer()) {
    SOD2_ASSIGN_OR_RETURN(Tensor tensor,
                          import_tensor(t, scope_->tensors, "initializer '" + t.name() + "'"));
    SOD2_RETURN_IF_ERROR(add(std::move(tensor)));
    mark_four_bit(t.data_type(), t.name());
  }
  for (const auto& t : proto.sparse_initializer()) {
    SOD2_ASSIGN_OR_RETURN(
        Tensor tensor,
        import_sparse_tensor(t, scope_->tensors, "sparse initializer '" + t.values().name() + "'"));
    SOD2_RETURN_IF_ERROR(add(std::move(tensor)));
    mark_four_bit(t.values().data_type(), t.values().name());
  }
  return {};
}

Status GraphImporter::declare_node_outputs(const onnx::GraphProto& proto) {
  node_names_.reserve(static_cast<size_t>(proto.node_size()));
  for (const auto& node : proto.node()) {
    if (node.op_type().empty())
      return invalid_model("node '" + node.name() + "'" + where() + " has no op_type");
    node_names_.push_back(unique_node_name(node));
    for (const std::string& out : node.output()) {
      if (out.empty()) continue;
      SOD2_RETURN_IF_ERROR(check_not_shadowing(
          out, node_label(node_names_.back(), node.op_type()) + " output '" + out + "'"));
      Value v;
      v.name = out;
      v.kind = ValueKind::kNodeOutput;
      auto id = graph_->add_value(std::move(v));
      if (!id.ok()) {
        return invalid_model(node_label(node_names_.back(), node.op_type()) + where() +
                             ": output '" + out +
                             "' is already defined (ONNX graphs are single-assignment)");
      }
    }
  }
  return {};
}

void GraphImporter::apply_value_info(const onnx::GraphProto& proto) {
  for (const auto& vi : proto.value_info()) {
    const ValueId id = graph_->find(vi.name());
    if (id == kNoValue || graph_->value(id).kind != ValueKind::kNodeOutput) continue;
    Value& v = graph_->value(id);
    // value_info is advisory: a malformed entry loses its annotation, not the model.
    Value parsed;
    if (import_type(vi.type(), vi.name(), &parsed, FourBitDeclaration::kReadWidened).ok()) {
      v.category = parsed.category;
      v.dtype = parsed.dtype;
      v.shape = parsed.shape;
    } else {
      scope_->diagnostics->push_back(
          {Severity::kWarning, "value_info for '" + vi.name() + "' is malformed and ignored", ""});
    }
  }
}

Expected<Attribute> GraphImporter::import_attribute(const onnx::AttributeProto& p,
                                                    const std::string& label,
                                                    const std::string& node_name,
                                                    std::vector<std::string>* captured) {
  Attribute a;
  a.name = p.name();
  if (a.name.empty()) return invalid_model(label + ": an attribute has an empty name");
  const std::string what = label + " attribute '" + a.name + "'";
  auto subgraph = [&](const onnx::GraphProto& g,
                      const std::string& fallback) -> Expected<std::shared_ptr<Graph>> {
    if (depth_ + 1 > kMaxGraphDepth)
      return invalid_model(what + ": subgraphs nest deeper than " + std::to_string(kMaxGraphDepth) +
                           " levels");
    GraphImporter child(scope_, this, depth_ + 1);
    SOD2_ASSIGN_OR_RETURN(std::shared_ptr<Graph> graph, child.import(g, fallback));
    for (const std::string& name : child.captured())
      if (std::find(captured->begin(), captured->end(), name) == captured->end())
        captured->push_back(name);
    return graph;
  };
  switch (effective_attribute_type(p)) {
    case onnx::AttributeProto::FLOAT:
      a.type = AttributeType::kFloat;
      a.f = p.f();
      break;
    case onnx::AttributeProto::INT:
      a.type = AttributeType::kInt;
      a.i = p.i();
      break;
    case onnx::AttributeProto::STRING:
      a.type = AttributeType::kString;
      a.s = p.s();
      break;
    case onnx::AttributeProto::TENSOR: {
      a.type = AttributeType::kTensor;
      SOD2_ASSIGN_OR_RETURN(a.t, import_tensor(p.t(), scope_->tensors, what));
      break;
    }
    case onnx::AttributeProto::SPARSE_TENSOR: {
      a.type = AttributeType::kSparseTensor;
      SOD2_ASSIGN_OR_RETURN(a.t, import_sparse_tensor(p.sparse_tensor(), scope_->tensors, what));
      break;
    }
    case onnx::AttributeProto::GRAPH: {
      a.type = AttributeType::kGraph;
      SOD2_ASSIGN_OR_RETURN(a.g, subgraph(p.g(), node_name + "." + a.name));
      break;
    }
    case onnx::AttributeProto::FLOATS: {
      a.type = AttributeType::kFloats;
      a.floats.assign(p.floats().begin(), p.floats().end());
      break;
    }
    case onnx::AttributeProto::INTS: {
      a.type = AttributeType::kInts;
      a.ints.assign(p.ints().begin(), p.ints().end());
      break;
    }
    case onnx::AttributeProto::STRINGS: {
      a.type = AttributeType::kStrings;
      a.strings.assign(p.strings().begin(), p.strings().end());
      break;
    }
    case onnx::AttributeProto::TENSORS: {
      a.type = AttributeType::kTensors;
      for (int i = 0; i < p.tensors_size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(Tensor t, import_tensor(p.tensors(i), scope_->tensors,
                                                      what + "[" + std::to_string(i) + "]"));
        a.tensors.push_back(std::move(t));
      }
      break;
    }
    case onnx::AttributeProto::GRAPHS: {
      a.type = AttributeType::kGraphs;
      for (int i = 0; i < p.graphs_size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(
            auto g, subgraph(p.graphs(i), node_name + "." + a.name + "." + std::to_string(i)));
        a.graphs.push_back(std::move(g));
      }
      break;
    }
    case onnx::AttributeProto::SPARSE_TENSORS: {
      a.type = AttributeType::kSparseTensors;
      for (int i = 0; i < p.sparse_tensors_size(); ++i) {
        SOD2_ASSIGN_OR_RETURN(Tensor t, import_sparse_tensor(p.sparse_tensors(i), scope_->tensors,
                                                             what + "[" + std::to_string(i) + "]"));
        a.tensors.push_back(std::move(t));
      }
      break;
    }
    case onnx::AttributeProto::TYPE_PROTO: a.type = AttributeType::kTypeProto; break;
    case onnx::AttributeProto::TYPE_PROTOS: a.type = AttributeType::kTypeProtos; break;
    default: return invalid_model(what + ": has no value (its type is undefined)");
  }
  return a;
}

Status GraphImporter::import_node(const onnx::NodeProto& p, size_t index) {
  Node node;
  node.name = node_names_[index];
  node.op_type = p.op_type();
  node.domain = normalise_domain(p.domain());
  const std::string label = node_label(node.name, node.op_type) + where();
  node.opset = scope_->model->opset(node.domain);
  if (node.opset == 0) {
    if (node.domain.empty())
      return invalid_model(label + ": the model imports no opset of the ONNX default domain");
    scope_->diagnostics->push_back(
        {Severity::kWarning,
         "domain '" + node.domain + "' is used but not in the model's opset_import", node.name});
  }
  SOD2_RETURN_IF_ERROR(check_node_schema(p, label, node.domain, node.opset, scope_->diagnostics));
  SOD2_RETURN_IF_ERROR(check_four_bit_attributes(p, label));

  std::vector<std::string> captured;
  for (const auto& attr : p.attribute()) {
    SOD2_ASSIGN_OR_RETURN(Attribute a, import_attribute(attr, label, node.name, &captured));
    node.attributes.push_back(std::move(a));
  }
  for (int i = 0; i < p.input_size(); ++i) {
    const std::string& name = p.input(i);
    if (name.empty()) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const ValueId id = resolve(name);
    if (id == kNoValue) {
      return invalid_model(label + ": input " + std::to_string(i) + " '" + name +
                           "' is not produced by any node, graph input or initializer");
    }
    node.inputs.push_back(id);
  }
  for (const std::string& out : p.output())
    node.outputs.push_back(out.empty() ? kNoValue : graph_->find(out));
  if (is_four_bit_constant(p) && !node.outputs.empty() && node.outputs[0] != kNoValue)
    scope_->four_bit_values.insert({graph_.get(), node.outputs[0]});
  for (const std::string& name : captured) {
    // The subgraph resolved it through this graph, so it exists here now.
    const ValueId id = resolve(name);
    if (std::find(node.implicit_inputs.begin(), node.implicit_inputs.end(), id) ==
        node.implicit_inputs.end())
      node.implicit_inputs.push_back(id);
  }
  SOD2_RETURN_IF_ERROR(check_control_flow_arity(node, label));
  graph_->add_node(std::move(node));
  return {};
}

// Bodies whose inputs and outputs do not line up with their node cannot run; catching that here
// keeps every later stage from guarding against it.
Status GraphImporter::check_control_flow_arity(const Node& node, const std::string& label) const {
  if (!node.domain.empty()) return {};
  auto body_of = [&](const char* name) -> const Graph* {
    const Attribute* a = node.attribute(name);
    return a ? a->g.get() : nullptr;
  };
  auto mismatch = [&](const std::string& what, size_t got, size_t want) {
    return invalid_model(label + ": " + what + " has " + std::to_string(got) + " but " +
                         std::to_string(want) + " are needed");
  };
  if (node.op_type == "If") {
    for (const char* branch : {"then_branch", "else_branch"}) {
      const Graph* g = body_of(branch);
      if (g && g->outputs().size() != node.outputs.size())
        return mismatch(std::string(branch) + " outputs", g->outputs().size(), node.outputs.size());
    }
  } else if (node.op_type == "Loop") {
    const Graph* g = body_of("body");
    if (!g) return {};
    if (node.inputs.size() < 2)
      return invalid_model(label + ": Loop needs its M and cond inputs (either may be empty)");
    const size_t carried = node.inputs.size() - 2;
    if (g->inputs().size() != carried + 2)
      return mismatch("the body's inputs", g->inputs().size(), carried + 2);
    if (g->outputs().size() != node.outputs.size() + 1)
      return mismatch("the body's outputs", g->outputs().size(), node.outputs.size() + 1);
    if (node.outputs.size() < carried)
      return mismatch("the node's outputs", node.outputs.size(), carried);
  } else if ((node.op_type == "Scan" && node.opset >= 9) || node.op_type == "SequenceMap") {
    const Graph* g = body_of("body");
    if (!g) return {};
    if (g->inputs().size() != node.inputs.size())
      return mismatch("the body's inputs", g->inputs().size(), node.inputs.size());
    if (g->outputs().size() != node.outputs.size())
      return mismatch("the body's outputs", g->outputs().size(), node.outputs.size());
  }
  return {};
}

Status GraphImporter::import_outputs(const onnx::GraphProto& proto) {
  std::vector<ValueId> outputs;
  for (const auto& out : proto.output()) {
    const ValueId id = resolve(out.name());
    if (id == kNoValue) {
      return invalid_model("graph output '" + out.name() + "'" + where() +
                           " is not produced by any node, graph input or initializer");
    }
    Value& v = graph_->value(id);
    if (v.kind == ValueKind::kNodeOutput && out.has_type()) {
      SOD2_RETURN_IF_ERROR(import_type(out.type(), "graph output '" + out.name() + "'", &v));
    }
    outputs.push_back(id);
  }
  graph_->set_outputs(std::move(outputs));
  return {};
}

Expected<std::shared_ptr<Graph>> GraphImporter::import(const onnx::GraphProto& proto,
                                                       const std::string& fallback_name) {
  graph_ = std::make_shared<Graph>(proto.name().empty() ? fallback_name : proto.name(),
                                   parent_ ? parent_->graph_.get() : nullptr);
  size_t n_values = static_cast<size_t>(proto.input_size() + proto.initializer_size() +
                                        proto.sparse_initializer_size());
  for (const auto& node : proto.node()) n_values += static_cast<size_t>(node.output_size());
  graph_->reserve(n_values, static_cast<size_t>(proto.node_size()));
  SOD2_RETURN_IF_ERROR(declare_inputs_and_initializers(proto));
  SOD2_RETURN_IF_ERROR(declare_node_outputs(proto));
  apply_value_info(proto);
  for (int i = 0; i < proto.node_size(); ++i)
    SOD2_RETURN_IF_ERROR(import_node(proto.node(i), static_cast<size_t>(i)));
  SOD2_RETURN_IF_ERROR(import_outputs(proto));
  graph_->link();
  SOD2_RETURN_IF_ERROR(dedicate_shared_dequantize(*graph_).status());
  auto order = graph_->topological_order();
  if (!order.ok()) return order.status();
  return graph_;
}

}  // namespace sod2::onnx_import
