#include "core/onnx/onnx_shape_io.h"

#include <fstream>
#include <functional>
#include <unordered_set>

#include "core/onnx/four_bit.h"
#include "core/status/input_file.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

namespace sod2 {
namespace {

Expected<onnx::ModelProto> read_proto(const std::string& path) {
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, read_input_file(path));
  onnx::ModelProto m;
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return parse_error(path + ": is not a valid ONNX protobuf");
  return m;
}

// Calls fn on every graph in the order visit_graphs uses: depth-first, nodes in file order,
// attributes in order.
void for_each_graph(onnx::GraphProto* g, const std::function<void(onnx::GraphProto*)>& fn) {
  fn(g);
  for (auto& node : *g->mutable_node())
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) for_each_graph(attr.mutable_g(), fn);
      for (auto& sg : *attr.mutable_graphs()) for_each_graph(&sg, fn);
    }
}

void count_type(const onnx::TypeProto* type, OnnxInferenceCounts* c) {
  ++c->values_total;
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) {
    ++c->rank_unknown;
    return;
  }
  for (const auto& d : type->tensor_type().shape().dim()) {
    ++c->dims_total;
    if (d.has_dim_value())
      ++c->dims_constant;
    else if (d.has_dim_param() && !d.dim_param().empty() && d.dim_param().rfind("unk__", 0) != 0)
      ++c->dims_symbolic;
    else
      ++c->dims_unknown;
  }
}

}  // namespace

Expected<OnnxInferenceCounts> onnx_inference_counts(const std::string& model_path) {
  SOD2_ASSIGN_OR_RETURN(onnx::ModelProto m, read_proto(model_path));
  for_each_graph(m.mutable_graph(), [](onnx::GraphProto* g) { g->clear_value_info(); });
  try {
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(false, 0, true));
  } catch (const std::exception& e) {
    return invalid_model(model_path + ": libonnx shape inference failed: " + e.what());
  }
  OnnxInferenceCounts c;
  for_each_graph(m.mutable_graph(), [&](onnx::GraphProto* g) {
    std::unordered_map<std::string, const onnx::TypeProto*> types;
    for (const auto& vi : g->value_info()) types[vi.name()] = &vi.type();
    for (const auto& vi : g->output()) types[vi.name()] = &vi.type();
    std::unordered_map<std::string, bool> seen;
    for (const auto& node : g->node()) {
      if (node.op_type() == "Constant") continue;
      for (const auto& out : node.output()) {
        if (out.empty() || seen[out]) continue;
        seen[out] = true;
        auto it = types.find(out);
        count_type(it == types.end() ? nullptr : it->second, &c);
      }
    }
  });
  return c;
}

Status write_shapes_to_onnx(const std::string& model_path, const std::string& out_path,
                            const ShapeAnnotations& shapes) {
  SOD2_ASSIGN_OR_RETURN(onnx::ModelProto m, read_proto(model_path));
  size_t index = 0;
  Status status;
  for_each_graph(m.mutable_graph(), [&](onnx::GraphProto* g) {
    if (index >= shapes.size()) {
      status = internal_error("shape annotations cover fewer graphs than the model has");
      return;
    }
    const auto& by_name = shapes[index++];
    g->clear_value_info();
    auto fill = [](const ShapeDecl& shape, onnx::TypeProto_Tensor* t) {
      auto* s = t->mutable_shape();
      s->clear_dim();
      for (const DimDecl& d : *shape) {
        auto* dim = s->add_dim();
        if (d.is_constant())
          dim->set_dim_value(d.value());
        else if (d.is_param())
          dim->set_dim_param(d.param());
      }
    };
    std::unordered_map<std::string, onnx::ValueInfoProto*> outputs;
    for (auto& o : *g->mutable_output()) outputs[o.name()] = &o;
    // They read as int8/uint8 here; that type would contradict the file's int4/uint4.
    const std::unordered_set<std::string> four_bit = onnx_import::four_bit_value_names(*g);
    // Deterministic order: node outputs in node order.
    for (const auto& node : g->node()) {
      for (const auto& name : node.output()) {
        auto it = by_name.find(name);
        if (name.empty() || it == by_name.end() || !it->second.shape || four_bit.count(name))
          continue;
        if (auto o = outputs.find(name); o != outputs.end()) {
          auto* t = o->second->mutable_type()->mutable_tensor_type();
          if (!t->has_shape()) fill(it->second.shape, t);
          continue;
        }
        auto* vi = g->add_value_info();
        vi->set_name(name);
        auto* t = vi->mutable_type()->mutable_tensor_type();
        t->set_elem_type(static_cast<int32_t>(it->second.dtype));
        fill(it->second.shape, t);
      }
    }
  });
  SOD2_RETURN_IF_ERROR(status);
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out || !m.SerializeToOstream(&out)) return io_error(out_path + ": cannot write");
  return {};
}

}  // namespace sod2
