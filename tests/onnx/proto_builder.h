// Terse construction of ONNX protobufs for importer tests.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace sod2::testing {

using DimSpec = std::variant<int64_t, std::string>;  // a dim_value or a dim_param

inline onnx::ModelProto make_model(int64_t opset = 17, int64_t ir_version = 8) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("sod2-test");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

inline void set_tensor_type(onnx::ValueInfoProto* vi, int32_t elem, std::vector<DimSpec> dims) {
  auto* t = vi->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
    else dim->set_dim_param(std::get<std::string>(d));
  }
}

inline onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name,
                                       std::vector<DimSpec> dims,
                                       int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_tensor_type(vi, elem, std::move(dims));
  return vi;
}

inline onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name,
                                        std::vector<DimSpec> dims = {},
                                        int32_t elem = onnx::TensorProto::FLOAT) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_tensor_type(vi, elem, std::move(dims));
  return vi;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op,
                                 std::vector<std::string> inputs,
                                 std::vector<std::string> outputs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::AttributeProto* add_int_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
  return a;
}

inline onnx::TensorProto* add_float_initializer(onnx::GraphProto* g, const std::string& name,
                                                std::vector<int64_t> dims,
                                                std::vector<float> values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return t;
}

inline std::vector<uint8_t> serialize(const onnx::ModelProto& m) {
  std::string s = m.SerializeAsString();
  return std::vector<uint8_t>(s.begin(), s.end());
}

}  // namespace sod2::testing
