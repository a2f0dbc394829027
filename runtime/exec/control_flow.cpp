// If, Loop and Scan, run by the session itself through their bodies. Body values live on the
// heap (only the main graph is planned); what a body returns is copied into the node's outputs,
// which the plan places like any other.
#include <cstring>

#include "runtime/exec/frame.h"
#include "runtime/exec/node_outputs.h"
#include "runtime/exec/session.h"

namespace sod2::rt {
namespace {

HostTensor copy_of(const Tensor& t) {
  HostTensor h(t.dtype, t.shape);
  if (t.bytes() > 0) std::memcpy(h.bytes().data(), t.data, t.bytes());
  return h;
}

Expected<bool> scalar_truth(const Tensor* t, const char* what) {
  if (!t || t->numel() != 1) return invalid_argument(std::string(what) + " must hold one element");
  switch (t->dtype) {
    case DType::kBool:
    case DType::kUint8:
    case DType::kInt8: return *static_cast<const uint8_t*>(t->data) != 0;
    case DType::kInt32: return *static_cast<const int32_t*>(t->data) != 0;
    case DType::kInt64: return *static_cast<const int64_t*>(t->data) != 0;
    case DType::kFloat: return *static_cast<const float*>(t->data) != 0;
    default: return invalid_argument(std::string(what) + " has type " + dtype_name(t->dtype));
  }
}

// Writes `values` into the node's outputs [first, first + values.size()).
Status emit(NodeOutputs& outs, size_t first, const std::vector<HostTensor>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    SOD2_ASSIGN_OR_RETURN(Tensor * t, outs.output(first + i, values[i].dtype(), values[i].shape()));
    if (t->bytes() > 0) std::memcpy(t->data, values[i].bytes().data(), t->bytes());
  }
  return Status::ok_status();
}

// Stacks equally shaped parts along a new leading axis.
Expected<HostTensor> stack(const std::vector<HostTensor>& parts, const std::string& what) {
  if (parts.empty()) return HostTensor(DType::kFloat, Shape{0});
  const Shape part = parts[0].shape();
  if (part.rank() + 1 > kMaxRank) return unsupported(what + ": rank too high to stack");
  Shape shape;
  shape.push_back(static_cast<int64_t>(parts.size()));
  for (int d = 0; d < part.rank(); ++d) shape.push_back(part[d]);
  HostTensor out(parts[0].dtype(), shape);
  const size_t bytes = parts[0].bytes().size();
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!(parts[i].shape() == part) || parts[i].dtype() != parts[0].dtype()) {
      return invalid_argument(what + ": iteration " + std::to_string(i) + " gives shape " +
                              parts[i].shape().to_string() + ", iteration 0 gave " +
                              part.to_string());
    }
    if (bytes > 0) std::memcpy(out.bytes().data() + i * bytes, parts[i].bytes().data(), bytes);
  }
  return out;
}

}  // namespace

Status Session::run_body(Frame& parent, int32_t g, std::span<const Tensor> inputs,
                         std::vector<HostTensor>* out) {
  const GraphDesc& graph = program_.graphs[static_cast<size_t>(g)];
  if (inputs.size() != graph.inputs.size()) {
    return invalid_model("body '" + graph.name + "' takes " + std::to_string(graph.inputs.size()) +
                         " inputs, given " + std::to_string(inputs.size()));
  }
  Frame child(graph, &parent);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t v = static_cast<size_t>(graph.inputs[i]);
    child.tensors[v] = inputs[i];
    child.ready[v] = 1;
  }
  for (size_t v = 0; v < graph.values.size(); ++v) {
    const ValueDesc& d = graph.values[v];
    if (d.storage != ValueStorage::kConstant) continue;
    child.tensors[v] = program_.constants[static_cast<size_t>(d.constant)].view();
    child.ready[v] = 1;
  }
  SOD2_RETURN_IF_ERROR(run_graph(child));
  out->clear();
  for (int32_t o : graph.outputs) {
    const Tensor* t = child.get(o);
    if (!t) {
      return internal_error("body '" + graph.name + "' output '" +
                            graph.values[static_cast<size_t>(o)].name + "' was never produced");
    }
    out->push_back(copy_of(*t));
  }
  return Status::ok_status();
}

Status Session::run_if(Frame& frame, const NodeDesc& node) {
  const std::string where = "node '" + node.info.name + "' (If)";
  if (node.subgraphs.size() != 2) return invalid_model(where + " needs two branches");
  auto cond = scalar_truth(node.inputs.empty() ? nullptr : frame.get(node.inputs[0]), "cond");
  if (!cond.ok()) return cond.status().with_context(where);
  std::vector<HostTensor> results;
  SOD2_RETURN_IF_ERROR(
      run_body(frame, node.subgraphs[*cond ? 0 : 1], {}, &results).with_context(where));
  NodeOutputs outs(this, &frame, &node);
  Status st = emit(outs, 0, results);
  outs.finish();
  return st.with_context(where);
}

Status Session::run_loop(Frame& frame, const NodeDesc& node) {
  const std::string where = "node '" + node.info.name + "' (Loop)";
  if (node.subgraphs.size() != 1 || node.inputs.size() < 2)
    return invalid_model(where + " is malformed");
  const Tensor* max_trip = node.inputs[0] >= 0 ? frame.get(node.inputs[0]) : nullptr;
  const Tensor* cond_in = node.inputs[1] >= 0 ? frame.get(node.inputs[1]) : nullptr;
  if (!max_trip && !cond_in) {
    return unsupported(where + " has neither a trip count nor a condition: it would never end");
  }
  int64_t trips = INT64_MAX;
  if (max_trip) {
    if (max_trip->numel() != 1 || max_trip->dtype != DType::kInt64)
      return invalid_argument(where + ": M must be one int64");
    trips = *static_cast<const int64_t*>(max_trip->data);
  }
  bool cond = true;
  if (cond_in) {
    auto c = scalar_truth(cond_in, "cond");
    if (!c.ok()) return c.status().with_context(where);
    cond = *c;
  }
  const size_t carried = node.inputs.size() - 2;
  const GraphDesc& body = program_.graphs[static_cast<size_t>(node.subgraphs[0])];
  if (body.outputs.size() < 1 + carried) return invalid_model(where + ": body has too few outputs");
  const size_t scans = body.outputs.size() - 1 - carried;
  std::vector<HostTensor> state;
  for (size_t i = 0; i < carried; ++i) {
    const Tensor* t = node.inputs[2 + i] >= 0 ? frame.get(node.inputs[2 + i]) : nullptr;
    if (!t)
      return invalid_model(where + ": loop-carried input " + std::to_string(i) + " is missing");
    state.push_back(copy_of(*t));
  }
  std::vector<std::vector<HostTensor>> scan_parts(scans);
  HostTensor iter(DType::kInt64, Shape{});
  HostTensor cond_t(DType::kBool, Shape{});
  std::vector<Tensor> inputs;
  std::vector<HostTensor> results;
  for (int64_t i = 0; i < trips && cond; ++i) {
    *iter.data<int64_t>() = i;
    *cond_t.data<bool>() = cond;
    inputs.clear();
    inputs.push_back(iter.view());
    inputs.push_back(cond_t.view());
    for (const HostTensor& s : state) inputs.push_back(s.view());
    SOD2_RETURN_IF_ERROR(run_body(frame, node.subgraphs[0], inputs, &results).with_context(where));
    const Tensor body_cond = results[0].view();
    auto c = scalar_truth(&body_cond, "the body's cond");
    if (!c.ok()) return c.status().with_context(where);
    cond = *c;
    for (size_t k = 0; k < carried; ++k) state[k] = std::move(results[1 + k]);
    for (size_t k = 0; k < scans; ++k) scan_parts[k].push_back(std::move(results[1 + carried + k]));
  }
  std::vector<HostTensor> finals = std::move(state);
  for (size_t k = 0; k < scans; ++k) {
    SOD2_ASSIGN_OR_RETURN(HostTensor stacked, stack(scan_parts[k], where));
    finals.push_back(std::move(stacked));
  }
  NodeOutputs outs(this, &frame, &node);
  Status st = emit(outs, 0, finals);
  outs.finish();
  return st.with_context(where);
}

Status Session::run_scan(Frame& frame, const NodeDesc& node) {
  const std::string where = "node '" + node.info.name + "' (Scan)";
  if (node.info.opset < 9)
    return unsupported(where + ": Scan before opset 9 (batched) is not supported");
  if (node.subgraphs.size() != 1) return invalid_model(where + " needs one body");
  auto m = node.info.attrs.get_int("num_scan_inputs", -1);
  if (!m.ok() || *m < 0 || static_cast<size_t>(*m) > node.inputs.size())
    return invalid_model(where + ": bad num_scan_inputs");
  for (const char* attr :
       {"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"}) {
    auto v = node.info.attrs.get_ints(attr);
    if (!v.ok()) return v.status().with_context(where);
    for (int64_t x : *v)
      if (x != 0) return unsupported(where + ": " + attr + " other than 0 is not supported yet");
  }
  const size_t scan_in = static_cast<size_t>(*m);
  const size_t state_n = node.inputs.size() - scan_in;
  const GraphDesc& body = program_.graphs[static_cast<size_t>(node.subgraphs[0])];
  if (body.outputs.size() < state_n) return invalid_model(where + ": body has too few outputs");
  const size_t scans_out = body.outputs.size() - state_n;
  std::vector<HostTensor> state;
  for (size_t i = 0; i < state_n; ++i) state.push_back(copy_of(*frame.get(node.inputs[i])));
  int64_t iterations = -1;
  std::vector<const Tensor*> seqs;
  for (size_t i = 0; i < scan_in; ++i) {
    const Tensor* t = frame.get(node.inputs[state_n + i]);
    if (!t || t->shape.rank() < 1)
      return invalid_argument(where + ": a scan input needs rank >= 1");
    if (iterations >= 0 && t->shape[0] != iterations)
      return invalid_argument(where + ": scan inputs disagree on the sequence length");
    iterations = t->shape[0];
    seqs.push_back(t);
  }
  std::vector<std::vector<HostTensor>> parts(scans_out);
  std::vector<Tensor> inputs;
  std::vector<HostTensor> results;
  for (int64_t it = 0; it < std::max<int64_t>(iterations, 0); ++it) {
    inputs.clear();
    for (const HostTensor& s : state) inputs.push_back(s.view());
    for (const Tensor* t : seqs) {
      Shape slice(t->shape.dims().subspan(1));
      const size_t bytes = static_cast<size_t>(slice.numel()) * dtype_size(t->dtype);
      inputs.push_back(
          {t->dtype, slice, static_cast<uint8_t*>(t->data) + bytes * static_cast<size_t>(it)});
    }
    SOD2_RETURN_IF_ERROR(run_body(frame, node.subgraphs[0], inputs, &results).with_context(where));
    for (size_t k = 0; k < state_n; ++k) state[k] = std::move(results[k]);
    for (size_t k = 0; k < scans_out; ++k) parts[k].push_back(std::move(results[state_n + k]));
  }
  std::vector<HostTensor> finals = std::move(state);
  for (size_t k = 0; k < scans_out; ++k) {
    SOD2_ASSIGN_OR_RETURN(HostTensor stacked, stack(parts[k], where));
    finals.push_back(std::move(stacked));
  }
  NodeOutputs outs(this, &frame, &node);
  Status st = emit(outs, 0, finals);
  outs.finish();
  return st.with_context(where);
}

}  // namespace sod2::rt
