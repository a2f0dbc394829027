// The hand-built graphs the golden plan tests use; each is small enough to plan by hand (the
// expected offsets are worked out in golden_plan_test.cpp).
#pragma once

#include "../onnx/proto_builder.h"
#include "plan_test_util.h"

namespace sod2::testing {

// x[n,16] -> Relu a -> Relu b -> Relu y (output): a and y never live together.
inline onnx::ModelProto chain_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_node(g, "Relu", {"x"}, {"a"}, "relu_a");
  add_node(g, "Relu", {"a"}, {"b"}, "relu_b");
  add_node(g, "Relu", {"b"}, {"y"}, "relu_y");
  add_output(g, "y");
  return m;
}

// A residual MLP block: r = Relu(x) lives across a 4x wider hidden layer.
//   r = Relu(x) [n,16]; h = MatMul(r, W1[16,64]) [n,64]; g = Relu(h); c = MatMul(g, W2[64,16]);
//   y = Add(c, r) (output)
inline onnx::ModelProto residual_mlp_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{16}});
  add_initializer(g, "W1", {16, 64});
  add_initializer(g, "W2", {64, 16});
  add_node(g, "Relu", {"x"}, {"r"}, "relu_r");
  add_node(g, "MatMul", {"r", "W1"}, {"h"}, "fc1");
  add_node(g, "Relu", {"h"}, {"g"}, "act");
  add_node(g, "MatMul", {"g", "W2"}, {"c"}, "fc2");
  add_node(g, "Add", {"c", "r"}, {"y"}, "residual");
  add_output(g, "y");
  return m;
}

// An EDO op in the middle: s = Relu(x[n,4]) stays live across NonZero(s) -> nz [2,k] int64 ->
// Transpose -> t [k,2] (output); y = Relu(s) (output). Sizes 16n and 16k bytes need the
// 64-byte alignment spelled out.
inline onnx::ModelProto nonzero_model() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", {std::string("n"), int64_t{4}});
  add_node(g, "Relu", {"x"}, {"s"}, "relu_s");
  add_node(g, "NonZero", {"s"}, {"nz"}, "nonzero");
  add_node(g, "Transpose", {"nz"}, {"t"}, "transpose");
  add_node(g, "Relu", {"s"}, {"y"}, "relu_y");
  add_output(g, "t", {}, onnx::TensorProto::INT64);
  add_output(g, "y");
  return m;
}

}  // namespace sod2::testing
