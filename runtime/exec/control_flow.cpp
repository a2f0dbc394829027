// If, Loop, Scan and SequenceMap, run by the session itself through their bodies. Body values live
// in the session's value buffer, each freed after its last reader (the main graph's plan does not
// hold them); what a body returns is copied into the node's outputs, which the plan places like any
// other.
#include <cstring>

#include "runtime/exec/frame.h"
#include "runtime/exec/node_outputs.h"
#include "runtime/exec/session.h"
#include "runtime/tensor/sequence.h"

namespace sod2::rt {
namespace {

HostTensor copy_of(const Tensor& t) {
  if (!t.is_tensor()) return own_non_tensor(t);
  HostTensor h(t.dtype, t.shape);
  copy_elements(t, h.view());
  return h;
}

// Copies into `h`, reusing its bytes.
void copy_into(const Tensor& t, HostTensor* h) {
  if (!t.is_tensor()) {
    *h = own_non_tensor(t);
    return;
  }
  h->reset(t.dtype, t.shape);
  copy_elements(t, h->view());
}

Expected<bool> scalar_truth(const Tensor* t, const char* what) {
  if (!t || !t->is_tensor() || t->numel() != 1)
    return invalid_argument(std::string(what) + " must be a tensor of one element");
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
    if (!values[i].is_tensor()) {
      SOD2_RETURN_IF_ERROR(outs.output_value(first + i, values[i]));
      continue;
    }
    SOD2_ASSIGN_OR_RETURN(Tensor * t, outs.output(first + i, values[i].dtype(), values[i].shape()));
    copy_elements(values[i].view(), *t);
  }
  return Status::ok_status();
}

// Writes parts[0, used) stacked along a new leading axis into the node's output `index`. With
// no iterations the output is [0].
Status emit_stacked(NodeOutputs& outs, size_t index, const std::vector<HostTensor>& parts,
                    size_t used) {
  if (used == 0) return outs.output(index, DType::kFloat, Shape{0}).status();
  const Shape part = parts[0].shape();
  if (part.rank() + 1 > kMaxRank) return unsupported("scan output rank too high to stack");
  Shape shape;
  shape.push_back(static_cast<int64_t>(used));
  for (int d = 0; d < part.rank(); ++d) shape.push_back(part[d]);
  const size_t bytes = parts[0].bytes().size();
  for (size_t i = 0; i < used; ++i) {
    if (!parts[i].is_tensor() || parts[i].dtype() == DType::kString)
      return unsupported("iteration " + std::to_string(i) +
                         " gives a sequence, optional or string tensor as a scan output: only "
                         "tensors of fixed-size elements are stacked");
    if (!(parts[i].shape() == part) || parts[i].dtype() != parts[0].dtype()) {
      return invalid_argument("iteration " + std::to_string(i) + " gives a scan output of shape " +
                              parts[i].shape().to_string() + ", iteration 0 gave " +
                              part.to_string());
    }
  }
  SOD2_ASSIGN_OR_RETURN(Tensor * t, outs.output(index, parts[0].dtype(), shape));
  for (size_t i = 0; i < used; ++i)
    if (bytes > 0)
      std::memcpy(static_cast<uint8_t*>(t->data) + i * bytes, parts[i].bytes().data(), bytes);
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
    if (!parts[i].is_tensor() || parts[i].dtype() == DType::kString)
      return unsupported(what + ": iteration " + std::to_string(i) +
                         " gives a sequence, optional or string tensor where a tensor of "
                         "fixed-size elements is stacked");
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

Status Session::loop_may_iterate(int64_t iteration) const {
  if (iteration >= max_loop_iterations_) {
    return resource_exhausted("more than " + std::to_string(max_loop_iterations_) +
                              " iterations (RunLimits::max_loop_iterations)");
  }
  return check_run_alive();
}

Status Session::parts_fit(uint64_t part_bytes) const {
  if (part_bytes <= bytes_left_outside_arena()) return Status::ok_status();
  return resource_exhausted("the scan outputs gathered so far take " + std::to_string(part_bytes) +
                            " bytes, above what the run may still hold (RunLimits::max_bytes)");
}

Expected<Frame*> Session::enter_body(Frame& parent, int32_t g, std::span<const Tensor> inputs) {
  const GraphDesc& graph = program_.graphs[static_cast<size_t>(g)];
  if (inputs.size() != graph.inputs.size()) {
    return invalid_model("body '" + graph.name + "' takes " + std::to_string(graph.inputs.size()) +
                         " inputs, given " + std::to_string(inputs.size()));
  }
  std::unique_ptr<Frame>& cached = body_frames_[static_cast<size_t>(g)];
  if (!cached) cached = std::make_unique<Frame>(graph, &parent);
  Frame& child = *cached;
  child.parent = &parent;
  std::fill(child.ready.begin(), child.ready.end(), 0);
  std::fill(child.held.begin(), child.held.end(), Frame::Held{});
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
  Status st = run_graph(child);
  if (!st.ok()) {
    leave_body(child);
    return st;
  }
  for (int32_t o : graph.outputs) {
    if (!child.get(o)) {
      leave_body(child);
      return internal_error("body '" + graph.name + "' output '" +
                            graph.values[static_cast<size_t>(o)].name + "' was never produced");
    }
  }
  return &child;
}

void Session::leave_body(Frame& child) {
  for (size_t v = 0; v < child.held.size(); ++v) release_value(child, v);
}

Status Session::run_body(Frame& parent, int32_t g, std::span<const Tensor> inputs,
                         std::vector<HostTensor>* out) {
  SOD2_ASSIGN_OR_RETURN(Frame * child, enter_body(parent, g, inputs));
  const GraphDesc& graph = *child->graph;
  out->resize(graph.outputs.size());
  for (size_t i = 0; i < graph.outputs.size(); ++i)
    copy_into(*child->get(graph.outputs[i]), &(*out)[i]);
  leave_body(*child);
  return Status::ok_status();
}

Status Session::run_if(Frame& frame, const NodeDesc& node) {
  // Built only on error paths, so the steady state does not allocate.
  auto where_fn = [&] { return "node '" + node.info.name + "' (If)"; };
  if (node.subgraphs.size() != 2) return invalid_model(where_fn() + " needs two branches");
  auto cond = scalar_truth(node.inputs.empty() ? nullptr : frame.get(node.inputs[0]), "cond");
  if (!cond.ok()) return cond.status().with_context(where_fn());
  const int32_t branch = node.subgraphs[*cond ? 0 : 1];
  auto child = enter_body(frame, branch, {});
  if (!child.ok()) return child.status().with_context(where_fn());
  // Straight from the branch's values into the node's outputs: one copy, no staging buffer.
  const GraphDesc& graph = *(*child)->graph;
  NodeOutputs outs(this, &frame, &node);
  Status st = Status::ok_status();
  for (size_t i = 0; i < graph.outputs.size() && st.ok(); ++i) {
    const Tensor& r = *(*child)->get(graph.outputs[i]);
    if (!r.is_tensor()) {
      st = outs.output_value(i, own_non_tensor(r));
      continue;
    }
    auto t = outs.output(i, r.dtype, r.shape);
    if (!t.ok()) {
      st = t.status();
    } else {
      copy_elements(r, **t);
    }
  }
  outs.finish();
  if (st.ok()) outs.move_outputs_written_before_growth();
  leave_body(**child);
  return st.ok() ? st : st.with_context(where_fn());
}

Status Session::run_loop(Frame& frame, const NodeDesc& node) {
  // Built only on error paths, so the steady state does not allocate.
  auto where_fn = [&] { return "node '" + node.info.name + "' (Loop)"; };
  if (node.subgraphs.size() != 1 || node.inputs.size() < 2)
    return invalid_model(where_fn() + " is malformed");
  const Tensor* max_trip = node.inputs[0] >= 0 ? frame.get(node.inputs[0]) : nullptr;
  const Tensor* cond_in = node.inputs[1] >= 0 ? frame.get(node.inputs[1]) : nullptr;
  if (!max_trip && !cond_in) {
    return unsupported(where_fn() +
                       " has neither a trip count nor a condition: it would never end");
  }
  int64_t trips = INT64_MAX;
  if (max_trip) {
    if (!max_trip->is_tensor() || max_trip->numel() != 1 || max_trip->dtype != DType::kInt64)
      return invalid_argument(where_fn() + ": M must be one int64");
    trips = *static_cast<const int64_t*>(max_trip->data);
  }
  bool cond = true;
  if (cond_in) {
    auto c = scalar_truth(cond_in, "cond");
    if (!c.ok()) return c.status().with_context(where_fn());
    cond = *c;
  }
  const size_t carried = node.inputs.size() - 2;
  const GraphDesc& body = program_.graphs[static_cast<size_t>(node.subgraphs[0])];
  if (body.outputs.size() < 1 + carried)
    return invalid_model(where_fn() + ": body has too few outputs");
  const size_t scans = body.outputs.size() - 1 - carried;
  // Buffers kept per body across runs, so a loop that runs again like before allocates nothing.
  LoopBuffers& buf = loop_buffers_[static_cast<size_t>(node.subgraphs[0])];
  buf.state.resize(carried);
  buf.parts.resize(scans);
  buf.parts_used.assign(scans, 0);
  for (size_t i = 0; i < carried; ++i) {
    const Tensor* t = node.inputs[2 + i] >= 0 ? frame.get(node.inputs[2 + i]) : nullptr;
    if (!t)
      return invalid_model(where_fn() + ": loop-carried input " + std::to_string(i) +
                           " is missing");
    copy_into(*t, &buf.state[i]);
  }
  buf.iter.reset(DType::kInt64, Shape{});
  buf.cond.reset(DType::kBool, Shape{});
  std::vector<HostTensor>& results = body_results_[static_cast<size_t>(node.subgraphs[0])];
  uint64_t part_bytes = 0;  // of the scan outputs gathered so far
  for (int64_t i = 0; i < trips && cond; ++i) {
    if (Status st = loop_may_iterate(i); !st.ok()) return st.with_context(where_fn());
    *buf.iter.data<int64_t>() = i;
    *buf.cond.data<bool>() = cond;
    buf.inputs.clear();
    buf.inputs.push_back(buf.iter.view());
    buf.inputs.push_back(buf.cond.view());
    for (const HostTensor& st : buf.state) buf.inputs.push_back(st.view());
    {
      Status body_status = run_body(frame, node.subgraphs[0], buf.inputs, &results);
      if (!body_status.ok()) return body_status.with_context(where_fn());
    }
    const Tensor body_cond = results[0].view();
    auto c = scalar_truth(&body_cond, "the body's cond");
    if (!c.ok()) return c.status().with_context(where_fn());
    cond = *c;
    // Swap rather than move: the old state's bytes are reused by the next iteration's results.
    for (size_t k = 0; k < carried; ++k) std::swap(buf.state[k], results[1 + k]);
    for (size_t k = 0; k < scans; ++k) {
      part_bytes += results[1 + carried + k].bytes().size();
      if (Status st = parts_fit(part_bytes); !st.ok()) return st.with_context(where_fn());
      if (buf.parts[k].size() <= buf.parts_used[k]) buf.parts[k].emplace_back();
      copy_into(results[1 + carried + k].view(), &buf.parts[k][buf.parts_used[k]++]);
    }
  }
  NodeOutputs outs(this, &frame, &node);
  Status st = emit(outs, 0, buf.state);
  for (size_t k = 0; k < scans && st.ok(); ++k)
    st = emit_stacked(outs, carried + k, buf.parts[k], buf.parts_used[k]);
  outs.finish();
  if (st.ok()) outs.move_outputs_written_before_growth();
  return st.ok() ? st : st.with_context(where_fn());
}

Status Session::run_scan(Frame& frame, const NodeDesc& node) {
  // Built only on error paths, so the steady state does not allocate.
  auto where_fn = [&] { return "node '" + node.info.name + "' (Scan)"; };
  if (node.subgraphs.size() != 1) return invalid_model(where_fn() + " needs one body");
  if (node.info.opset < 9) {
    // Scan-8: input 0 is the optional sequence_lens [batch]; the states [batch, ...] and scan
    // inputs [batch, seq, ...] carry a leading batch axis. Each batch entry runs as its own scan
    // of sequence_lens[b] steps (all of seq when absent); scan outputs are [batch, seq, ...],
    // zero past an entry's length. `directions` 1 reads that scan input backwards.
    auto m8 = node.info.attrs.get_int("num_scan_inputs", -1);
    if (!m8.ok() || *m8 < 0 || node.inputs.empty() ||
        static_cast<size_t>(*m8) > node.inputs.size() - 1)
      return invalid_model(where_fn() + ": bad num_scan_inputs");
    const size_t n_scan = static_cast<size_t>(*m8);
    const size_t n_state = node.inputs.size() - 1 - n_scan;
    auto dirs = node.info.attrs.get_ints("directions");
    if (!dirs.ok()) return dirs.status().with_context(where_fn());
    if (!dirs->empty() && dirs->size() != n_scan)
      return invalid_model(where_fn() + ": directions needs one value per scan input");
    const GraphDesc& body8 = program_.graphs[static_cast<size_t>(node.subgraphs[0])];
    if (body8.outputs.size() < n_state)
      return invalid_model(where_fn() + ": body has too few outputs");
    const size_t n_out = body8.outputs.size() - n_state;
    std::vector<const Tensor*> ins;  // states, then scan inputs
    int64_t batch = -1, seq = -1;
    for (size_t i = 0; i < n_state + n_scan; ++i) {
      const Tensor* t = node.inputs[1 + i] >= 0 ? frame.get(node.inputs[1 + i]) : nullptr;
      const bool scan = i >= n_state;
      if (!t || t->shape.rank() < (scan ? 2 : 1))
        return invalid_argument(where_fn() + ": input " + std::to_string(1 + i) + " needs " +
                                (scan ? "[batch, seq, ...]" : "[batch, ...]"));
      if (t->dtype == DType::kString)
        return unsupported(where_fn() + ": string inputs are not supported (sliced by bytes)");
      if (batch >= 0 && t->shape[0] != batch)
        return invalid_argument(where_fn() + ": inputs disagree on the batch size");
      batch = t->shape[0];
      if (scan) {
        if (seq >= 0 && t->shape[1] != seq)
          return invalid_argument(where_fn() + ": scan inputs disagree on the sequence length");
        seq = t->shape[1];
      }
      ins.push_back(t);
    }
    batch = std::max<int64_t>(batch, 0);
    seq = std::max<int64_t>(seq, 0);
    // Each batch entry is a scan of its own: the entries count against the iteration limit
    // before anything is sized by them (empty inputs may have any batch size).
    if (batch > 0) {
      if (Status s = loop_may_iterate(batch - 1); !s.ok()) return s.with_context(where_fn());
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    if (const Tensor* lt = node.inputs[0] >= 0 ? frame.get(node.inputs[0]) : nullptr) {
      if (lt->numel() != batch || (lt->dtype != DType::kInt32 && lt->dtype != DType::kInt64))
        return invalid_argument(where_fn() + ": sequence_lens must be int32/int64 [" +
                                std::to_string(batch) + "], got " + lt->shape.to_string());
      for (int64_t b = 0; b < batch; ++b) {
        const int64_t v = lt->dtype == DType::kInt32 ? lt->as<int32_t>()[b] : lt->as<int64_t>()[b];
        if (v < 0 || v > seq)
          return invalid_argument(where_fn() + ": sequence_lens[" + std::to_string(b) +
                                  "] = " + std::to_string(v) + " is outside [0, " +
                                  std::to_string(seq) + "]");
        lens[static_cast<size_t>(b)] = v;
      }
    }
    auto slice = [](const Tensor* t, int64_t index, int skip) {
      Shape s(t->shape.dims().subspan(static_cast<size_t>(skip)));
      const size_t bytes = static_cast<size_t>(s.numel()) * dtype_size(t->dtype);
      return Tensor{t->dtype, s,
                    static_cast<uint8_t*>(t->data) + bytes * static_cast<size_t>(index)};
    };
    std::vector<std::vector<HostTensor>> finals8(n_state);  // [state][batch]
    std::vector<std::vector<HostTensor>> outs8(n_out);      // [output][batch * seq]
    std::vector<HostTensor>& res = body_results_[static_cast<size_t>(node.subgraphs[0])];
    std::vector<HostTensor> st8;
    std::vector<Tensor> body_in;
    uint64_t gathered = 0;
    int64_t body_runs = 0;  // over all entries: the iteration limit bounds the node's work
    // A scan output's [batch, seq, part...] result and its batch * seq slots must fit the run's
    // limits before either is allocated: seq is a dim of the (possibly empty) scan inputs, not
    // the steps run (sequence_lens may stop every entry early).
    auto stacked_fit = [&](DType dtype, const Shape& part) -> Status {
      if (part.rank() + 2 > kMaxRank)
        return unsupported(where_fn() + ": scan output rank too high to stack");
      Shape shape{batch, seq};
      for (int d = 0; d < part.rank(); ++d) shape.push_back(part[d]);
      SOD2_ASSIGN_OR_RETURN(const size_t bytes, checked_tensor_bytes(dtype, shape));
      SOD2_ASSIGN_OR_RETURN(
          const size_t slots,
          checked_tensor_bytes(DType::kUint8,
                               Shape{batch, seq, static_cast<int64_t>(sizeof(HostTensor))}));
      if (Status s = parts_fit(bytes); !s.ok()) return s.with_context(where_fn());
      if (Status s = parts_fit(slots); !s.ok()) return s.with_context(where_fn());
      return Status::ok_status();
    };
    for (int64_t b = 0; b < batch; ++b) {
      st8.clear();
      for (size_t i = 0; i < n_state; ++i) st8.push_back(copy_of(slice(ins[i], b, 1)));
      const int64_t len = lens[static_cast<size_t>(b)];
      for (int64_t it = 0; it < len; ++it) {
        if (Status s = loop_may_iterate(body_runs++); !s.ok()) return s.with_context(where_fn());
        body_in.clear();
        for (const HostTensor& s : st8) body_in.push_back(s.view());
        for (size_t k = 0; k < n_scan; ++k) {
          const bool back = !dirs->empty() && (*dirs)[k] != 0;
          const Tensor row = slice(ins[n_state + k], b, 1);  // [seq, ...] of entry b
          body_in.push_back(slice(&row, back ? len - 1 - it : it, 1));
        }
        if (Status s = run_body(frame, node.subgraphs[0], body_in, &res); !s.ok())
          return s.with_context(where_fn());
        for (size_t k = 0; k < n_state; ++k) std::swap(st8[k], res[k]);
        for (size_t k = 0; k < n_out; ++k) {
          gathered += res[n_state + k].bytes().size();
          if (Status s = parts_fit(gathered); !s.ok()) return s.with_context(where_fn());
          std::vector<HostTensor>& o = outs8[k];
          if (o.empty()) {
            SOD2_RETURN_IF_ERROR(stacked_fit(res[n_state + k].dtype(), res[n_state + k].shape()));
            o.resize(static_cast<size_t>(batch * seq));
          }
          o[static_cast<size_t>(b * seq + it)] = copy_of(res[n_state + k].view());
        }
      }
      for (size_t i = 0; i < n_state; ++i) finals8[i].push_back(std::move(st8[i]));
    }
    std::vector<HostTensor> result8;
    for (size_t i = 0; i < n_state; ++i) {
      SOD2_ASSIGN_OR_RETURN(HostTensor stacked, stack(finals8[i], where_fn()));
      result8.push_back(std::move(stacked));
    }
    for (size_t k = 0; k < n_out; ++k) {
      // [batch, seq, part...], zero where an entry stopped early.
      const HostTensor* first = nullptr;
      for (const HostTensor& p : outs8[k])
        if (p.dtype() != DType::kUndefined) {
          first = &p;
          break;
        }
      if (!first) {
        SOD2_RETURN_IF_ERROR(stacked_fit(DType::kFloat, Shape{}));
        result8.emplace_back(DType::kFloat, Shape{batch, seq});
        continue;
      }
      if (first->dtype() == DType::kString || !first->is_tensor())
        return unsupported(where_fn() + ": scan output " + std::to_string(k) +
                           " is not a tensor of fixed-size elements, which are all it stacks");
      const Shape part = first->shape();  // its [batch, seq, part...] checked by stacked_fit
      Shape shape{batch, seq};
      for (int d = 0; d < part.rank(); ++d) shape.push_back(part[d]);
      HostTensor out(first->dtype(), shape);
      const size_t bytes = first->bytes().size();
      for (size_t j = 0; j < outs8[k].size(); ++j) {
        const HostTensor& p = outs8[k][j];
        if (p.dtype() == DType::kUndefined) continue;  // past the entry's length
        if (!(p.shape() == part) || p.dtype() != first->dtype() || !p.is_tensor())
          return invalid_argument(where_fn() + ": scan output " + std::to_string(k) +
                                  " changes shape from " + part.to_string() + " to " +
                                  p.shape().to_string());
        if (bytes > 0) std::memcpy(out.bytes().data() + j * bytes, p.bytes().data(), bytes);
      }
      result8.push_back(std::move(out));
    }
    NodeOutputs outs(this, &frame, &node);
    Status st = emit(outs, 0, result8);
    outs.finish();
    if (st.ok()) outs.move_outputs_written_before_growth();
    return st.ok() ? st : st.with_context(where_fn());
  }
  auto m = node.info.attrs.get_int("num_scan_inputs", -1);
  if (!m.ok() || *m < 0 || static_cast<size_t>(*m) > node.inputs.size())
    return invalid_model(where_fn() + ": bad num_scan_inputs");
  for (const char* attr :
       {"scan_input_axes", "scan_input_directions", "scan_output_axes", "scan_output_directions"}) {
    auto v = node.info.attrs.get_ints(attr);
    if (!v.ok()) return v.status().with_context(where_fn());
    for (int64_t x : *v)
      if (x != 0)
        return unsupported(where_fn() + ": " + attr + " other than 0 is not supported yet");
  }
  const size_t scan_in = static_cast<size_t>(*m);
  const size_t state_n = node.inputs.size() - scan_in;
  const GraphDesc& body = program_.graphs[static_cast<size_t>(node.subgraphs[0])];
  if (body.outputs.size() < state_n)
    return invalid_model(where_fn() + ": body has too few outputs");
  const size_t scans_out = body.outputs.size() - state_n;
  std::vector<HostTensor> state;
  for (size_t i = 0; i < state_n; ++i) {
    // An optional output its producer did not write is never ready: there is no state to copy.
    const Tensor* t = node.inputs[i] >= 0 ? frame.get(node.inputs[i]) : nullptr;
    if (!t)
      return invalid_model(where_fn() + ": state input " + std::to_string(i) +
                           " was never produced");
    state.push_back(copy_of(*t));
  }
  int64_t iterations = -1;
  std::vector<const Tensor*> seqs;
  for (size_t i = 0; i < scan_in; ++i) {
    const Tensor* t = frame.get(node.inputs[state_n + i]);
    if (!t || t->shape.rank() < 1)
      return invalid_argument(where_fn() + ": a scan input needs rank >= 1");
    // Sliced by bytes: a string tensor's elements are objects, not bytes.
    if (t->dtype == DType::kString)
      return unsupported(where_fn() + ": scan inputs of strings are not supported");
    if (iterations >= 0 && t->shape[0] != iterations)
      return invalid_argument(where_fn() + ": scan inputs disagree on the sequence length");
    iterations = t->shape[0];
    seqs.push_back(t);
  }
  std::vector<std::vector<HostTensor>> parts(scans_out);
  std::vector<Tensor> inputs;
  std::vector<HostTensor>& results = body_results_[static_cast<size_t>(node.subgraphs[0])];
  uint64_t part_bytes = 0;  // of the scan outputs gathered so far
  for (int64_t it = 0; it < std::max<int64_t>(iterations, 0); ++it) {
    if (Status st = loop_may_iterate(it); !st.ok()) return st.with_context(where_fn());
    inputs.clear();
    for (const HostTensor& s : state) inputs.push_back(s.view());
    for (const Tensor* t : seqs) {
      Shape slice(t->shape.dims().subspan(1));
      const size_t bytes = static_cast<size_t>(slice.numel()) * dtype_size(t->dtype);
      inputs.push_back(
          {t->dtype, slice, static_cast<uint8_t*>(t->data) + bytes * static_cast<size_t>(it)});
    }
    {
      Status body_status = run_body(frame, node.subgraphs[0], inputs, &results);
      if (!body_status.ok()) return body_status.with_context(where_fn());
    }
    for (size_t k = 0; k < state_n; ++k) std::swap(state[k], results[k]);
    for (size_t k = 0; k < scans_out; ++k) {
      part_bytes += results[state_n + k].bytes().size();
      if (Status st = parts_fit(part_bytes); !st.ok()) return st.with_context(where_fn());
      parts[k].push_back(copy_of(results[state_n + k].view()));
    }
  }
  std::vector<HostTensor> finals = std::move(state);
  for (size_t k = 0; k < scans_out; ++k) {
    SOD2_ASSIGN_OR_RETURN(HostTensor stacked, stack(parts[k], where_fn()));
    finals.push_back(std::move(stacked));
  }
  NodeOutputs outs(this, &frame, &node);
  Status st = emit(outs, 0, finals);
  outs.finish();
  if (st.ok()) outs.move_outputs_written_before_growth();
  return st.ok() ? st : st.with_context(where_fn());
}

Status Session::run_sequence_map(Frame& frame, const NodeDesc& node) {
  auto where_fn = [&] { return "node '" + node.info.name + "' (SequenceMap)"; };
  if (node.subgraphs.size() != 1 || node.inputs.empty() || node.inputs[0] < 0)
    return invalid_model(where_fn() + " needs a body and an input sequence");
  const int32_t g = node.subgraphs[0];
  const GraphDesc& body = program_.graphs[static_cast<size_t>(g)];
  if (body.inputs.size() != node.inputs.size())
    return invalid_model(where_fn() + ": the body takes " + std::to_string(body.inputs.size()) +
                         " inputs, the node has " + std::to_string(node.inputs.size()));
  // Sequences are iterated element by element; tensors pass whole to every iteration.
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Tensor* t = node.inputs[i] >= 0 ? frame.get(node.inputs[i]) : nullptr;
    if (!t || t->none)
      return invalid_argument(where_fn() + ": input " + std::to_string(i) + " holds no value");
    if (i == 0 && !t->sequence)
      return invalid_argument(where_fn() + ": input 0 must be a sequence");
    if (i > 0 && t->sequence && t->sequence->size() != ins.front()->sequence->size())
      return invalid_argument(where_fn() + ": input " + std::to_string(i) + " has " +
                              std::to_string(t->sequence->size()) + " elements, input 0 has " +
                              std::to_string(ins.front()->sequence->size()));
    ins.push_back(t);
  }
  const size_t n = ins[0]->sequence->size();
  std::vector<std::shared_ptr<Sequence>> results(body.outputs.size());
  for (size_t j = 0; j < results.size(); ++j) {
    const int32_t out = j < node.outputs.size() ? node.outputs[j] : -1;
    results[j] = std::make_shared<Sequence>(
        out >= 0 ? frame.graph->values[static_cast<size_t>(out)].dtype : DType::kUndefined);
  }
  std::vector<Tensor> body_in(ins.size());
  std::vector<HostTensor>& got = body_results_[static_cast<size_t>(g)];
  uint64_t gathered = 0;
  for (size_t i = 0; i < n; ++i) {
    if (Status st = loop_may_iterate(static_cast<int64_t>(i)); !st.ok())
      return st.with_context(where_fn());
    for (size_t k = 0; k < ins.size(); ++k)
      body_in[k] = ins[k]->sequence ? ins[k]->sequence->at(i).view() : *ins[k];
    if (Status st = run_body(frame, g, body_in, &got); !st.ok()) return st.with_context(where_fn());
    for (size_t j = 0; j < results.size(); ++j) {
      if (!got[j].is_tensor())
        return invalid_argument(where_fn() + ": body output " + std::to_string(j) +
                                " is not a tensor");
      Sequence& r = *results[j];
      if (r.dtype() == DType::kUndefined) r.set_dtype(got[j].dtype());
      if (got[j].dtype() != r.dtype())
        return invalid_argument(where_fn() + ": body output " + std::to_string(j) + " is " +
                                dtype_name(got[j].dtype()) + " at element " + std::to_string(i) +
                                ", " + dtype_name(r.dtype()) + " before");
      gathered += got[j].bytes().size();
      if (Status st = parts_fit(gathered); !st.ok()) return st.with_context(where_fn());
      r.push_back(std::make_shared<const HostTensor>(std::move(got[j])));
    }
  }
  NodeOutputs outs(this, &frame, &node);
  Status st = Status::ok_status();
  for (size_t j = 0; j < results.size() && st.ok(); ++j) {
    const DType dtype = results[j]->dtype();
    st = outs.output_value(j, HostTensor::of_sequence(std::move(results[j]), dtype));
  }
  outs.finish();
  return st.ok() ? st : st.with_context(where_fn());
}

}  // namespace sod2::rt
