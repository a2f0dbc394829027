// If, Loop and Scan: their shapes come from propagating their bodies (through the engine's
// infer_subgraph). If's choice and Loop's trip count are execution symbols unless RDP resolved
// the condition / trip count.
#include <algorithm>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// The fact both branches agree on; dims that differ become execution symbols of `out`.
TensorFact merge_branches(InferContext& ctx, size_t out, const TensorFact& a, const TensorFact& b) {
  TensorFact f;
  f.category = a.category;
  f.dtype = a.dtype != DataType::kUndefined ? a.dtype : b.dtype;
  if (a.category != b.category) return TensorFact::unknown(f.dtype);
  if (a.element && b.element && *a.element == *b.element) f.element = a.element;
  if (!a.dims || !b.dims || a.dims->size() != b.dims->size()) return f;
  DimList dims(a.dims->size());
  for (size_t d = 0; d < dims.size(); ++d) {
    const Dim& x = (*a.dims)[d];
    const Dim& y = (*b.dims)[d];
    if (x && y && (*x == *y || ctx.prove_eq(*x, *y) == Tri::kTrue)) {
      dims[d] = x;
    } else if (x && y) {
      // The output is one branch's: never above the larger of the two.
      dims[d] = ctx.bounded_execution_dim(out, d, 0, sym::max(*x, *y));
    } else {
      dims[d] = ctx.execution_dim(out, d, 0, sym::kDefaultMaxDim);
    }
  }
  f.dims = std::move(dims);
  if (a.value && b.value && *a.value == *b.value) f.value = a.value;
  return f;
}

Status if_rule(InferContext& ctx) {
  const Graph* then_g = ctx.attr_graph("then_branch");
  const Graph* else_g = ctx.attr_graph("else_branch");
  if (!then_g || !else_g) return invalid_model("If: then_branch or else_branch is missing");
  const auto cond = ctx.input_ints(0);
  if (cond && cond->size() == 1) {
    // The condition is known before running: only the taken branch decides the outputs.
    const bool take_then = cond->front() != 0;
    SOD2_RETURN_IF_ERROR(ctx.infer_subgraph(take_then ? *else_g : *then_g, {}, false).status());
    SOD2_ASSIGN_OR_RETURN(auto outs, ctx.infer_subgraph(take_then ? *then_g : *else_g, {}));
    for (size_t i = 0; i < outs.size() && i < ctx.num_outputs(); ++i) ctx.set_output(i, outs[i]);
    return {};
  }
  SOD2_ASSIGN_OR_RETURN(auto then_out, ctx.infer_subgraph(*then_g, {}));
  SOD2_ASSIGN_OR_RETURN(auto else_out, ctx.infer_subgraph(*else_g, {}));
  if (then_out.size() != else_out.size() || then_out.size() != ctx.num_outputs())
    return invalid_model("If: branches and node have different output counts");
  for (size_t i = 0; i < then_out.size(); ++i)
    ctx.set_output(i, merge_branches(ctx, i, then_out[i], else_out[i]));
  return {};
}

// Loop-carried facts after one more iteration: dims that changed become execution symbols.
TensorFact generalise(InferContext& ctx, size_t index, const TensorFact& before,
                      const TensorFact& after) {
  if (before == after) return before;
  TensorFact f = before;
  f.value.reset();
  if (!before.dims || !after.dims || before.dims->size() != after.dims->size()) {
    f.dims.reset();
    return f;
  }
  for (size_t d = 0; d < f.dims->size(); ++d) {
    const Dim& x = (*before.dims)[d];
    const Dim& y = (*after.dims)[d];
    if (!(x && y && *x == *y))
      (*f.dims)[d] = ctx.execution_symbol(
          "carried" + std::to_string(index) + ".d" + std::to_string(d), 0, sym::kDefaultMaxDim);
  }
  return f;
}

Status loop_rule(InferContext& ctx) {
  const Graph* body = ctx.attr_graph("body");
  if (!body) return invalid_model("Loop: the body attribute is missing");
  const size_t n_carried = ctx.num_inputs() >= 2 ? ctx.num_inputs() - 2 : 0;
  if (body->outputs().size() < 1 + n_carried)
    return invalid_model("Loop: the body has fewer outputs than loop-carried values + 1");
  const size_t n_scan = body->outputs().size() - 1 - n_carried;

  // The trip count: M when the loop cannot stop early, else an execution symbol bounded by M.
  const std::optional<SymExpr> max_trips = input_scalar(ctx, 0);

  // The body's condition input is the loop's condition on the first iteration and the body's own
  // condition output after that; it keeps a known value only if the body passes it on unchanged.
  TensorFact cond_in = TensorFact::shaped(DataType::kBool, {});
  const auto initial_cond =
      ctx.has_input(1) ? ctx.input_ints(1) : std::optional<std::vector<int64_t>>();
  if (!ctx.has_input(1))
    cond_in.value = std::vector<SymExpr>{SymExpr(1)};
  else if (initial_cond && initial_cond->size() == 1)
    cond_in.value = std::vector<SymExpr>{SymExpr((*initial_cond)[0] != 0)};

  std::vector<TensorFact> carried, outs;
  auto body_inputs = [&] {
    std::vector<TensorFact> in{TensorFact::shaped(DataType::kInt64, {}), cond_in};
    in.insert(in.end(), carried.begin(), carried.end());
    return in;
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    carried.clear();
    for (size_t i = 0; i < n_carried; ++i) carried.push_back(ctx.input(2 + i));
    for (int iteration = 0;; ++iteration) {
      SOD2_ASSIGN_OR_RETURN(outs, ctx.infer_subgraph(*body, body_inputs()));
      bool stable = true;
      std::vector<TensorFact> next;
      for (size_t i = 0; i < n_carried; ++i) {
        next.push_back(generalise(ctx, i, carried[i], outs[1 + i]));
        stable = stable && next.back() == carried[i];
      }
      if (stable) break;
      carried = std::move(next);
      // Each round only generalises (known → execution symbol, rank → unknown), so three rounds
      // reach a fact the body maps to itself; past that, give up on the carried shapes.
      if (iteration == 3) {
        for (auto& c : carried) c = TensorFact::unknown(c.dtype);
        SOD2_ASSIGN_OR_RETURN(outs, ctx.infer_subgraph(*body, body_inputs()));
        break;
      }
    }
    if (!cond_in.value || outs[0].value == cond_in.value) break;
    cond_in.value.reset();  // the body changes its condition: propagate without knowing it
  }
  const bool never_stops_early = cond_in.value && cond_in.value->front().constant_value() == 1;
  SymExpr trips;
  if (max_trips && never_stops_early) {
    trips = *max_trips;
  } else {
    // A loop that may stop early runs at most M times (scan outputs have one row per run).
    trips = ctx.bounded_execution_symbol("trips", 0, max_trips);
  }
  for (size_t i = 0; i < n_carried; ++i) {
    TensorFact f = carried[i];
    if (ctx.input(2 + i).value != f.value) f.value.reset();
    ctx.set_output(i, std::move(f));
  }
  for (size_t k = 0; k < n_scan && n_carried + k < ctx.num_outputs(); ++k) {
    const TensorFact& elem = outs[1 + n_carried + k];
    TensorFact f = TensorFact::unknown(elem.dtype);
    if (elem.dims) {
      DimList dims{trips};
      dims.insert(dims.end(), elem.dims->begin(), elem.dims->end());
      f.dims = std::move(dims);
    }
    ctx.set_output(n_carried + k, std::move(f));
  }
  return {};
}

// Scan-8: input 0 is the optional sequence_lens; states [batch, ...] and scan inputs
// [batch, seq, ...] carry axes the body does not see, and the outputs get them back (scan
// outputs [batch, seq, ...]: an entry that stops early is zero-padded, so no shape depends on
// sequence_lens' values).
Status scan8_rule(InferContext& ctx, const Graph& body) {
  const auto m = ctx.attr_int("num_scan_inputs");
  if (!m || *m < 0 || ctx.num_inputs() < 1 || static_cast<size_t>(*m) > ctx.num_inputs() - 1)
    return invalid_model("Scan: num_scan_inputs is missing or out of range");
  const size_t n_scan = static_cast<size_t>(*m);
  const size_t n_state = ctx.num_inputs() - 1 - n_scan;
  Dim batch, seq;
  auto merge = [&](Dim* into, const Dim& d, const char* what) {
    if (!*into)
      *into = d;
    else if (d)
      ctx.require_equal(**into, *d, what);
  };
  std::vector<TensorFact> in;
  for (size_t i = 0; i < n_state + n_scan; ++i) {
    const TensorFact& x = ctx.input(1 + i);
    const size_t lead = i < n_state ? 1 : 2;
    TensorFact slice = TensorFact::unknown(x.dtype);
    if (x.dims) {
      if (x.dims->size() < lead)
        return invalid_model(i < n_state ? "Scan-8: a state needs a batch axis"
                                         : "Scan-8: a scan input needs batch and sequence axes");
      merge(&batch, (*x.dims)[0], "Scan-8 inputs must share the batch size");
      if (lead == 2) merge(&seq, (*x.dims)[1], "Scan-8 scan inputs must share the sequence length");
      slice.dims = DimList(x.dims->begin() + static_cast<std::ptrdiff_t>(lead), x.dims->end());
    }
    in.push_back(std::move(slice));
  }
  SOD2_ASSIGN_OR_RETURN(auto outs, ctx.infer_subgraph(body, in));
  for (size_t k = 0; k < outs.size() && k < ctx.num_outputs(); ++k) {
    TensorFact f = TensorFact::unknown(outs[k].dtype);
    if (outs[k].dims) {
      DimList dims{batch};
      if (k >= n_state) dims.push_back(seq);
      dims.insert(dims.end(), outs[k].dims->begin(), outs[k].dims->end());
      f.dims = std::move(dims);
    }
    ctx.set_output(k, std::move(f));
  }
  return {};
}

Status scan_rule(InferContext& ctx) {
  const Graph* body = ctx.attr_graph("body");
  if (!body) return invalid_model("Scan: the body attribute is missing");
  if (ctx.opset() < 9) return scan8_rule(ctx, *body);
  const auto m = ctx.attr_int("num_scan_inputs");
  if (!m || *m < 0 || static_cast<size_t>(*m) > ctx.num_inputs())
    return invalid_model("Scan: num_scan_inputs is missing or out of range");
  const size_t n_state = ctx.num_inputs() - static_cast<size_t>(*m);
  const auto in_axes =
      ctx.attr_ints("scan_input_axes").value_or(std::vector<int64_t>(static_cast<size_t>(*m), 0));
  std::vector<TensorFact> in;
  for (size_t i = 0; i < n_state; ++i) in.push_back(ctx.input(i));
  Dim seq_len;
  for (size_t j = 0; j < static_cast<size_t>(*m); ++j) {
    const TensorFact& x = ctx.input(n_state + j);
    TensorFact slice = TensorFact::unknown(x.dtype);
    if (x.dims && j < in_axes.size()) {
      const auto axis = normalize_axis(in_axes[j], x.rank());
      if (!axis) return invalid_model("Scan: scan_input_axes out of range");
      DimList dims = *x.dims;
      const Dim len = dims[static_cast<size_t>(*axis)];
      if (!seq_len)
        seq_len = len;
      else if (len)
        ctx.require_equal(*seq_len, *len, "Scan inputs must share the sequence length");
      dims.erase(dims.begin() + *axis);
      slice.dims = std::move(dims);
    }
    in.push_back(std::move(slice));
  }
  SOD2_ASSIGN_OR_RETURN(auto outs, ctx.infer_subgraph(*body, in));
  for (size_t i = 0; i < n_state && i < outs.size(); ++i)
    ctx.set_output(i, in[i] == outs[i] ? in[i] : outs[i]);
  const auto out_axes = ctx.attr_ints("scan_output_axes");
  for (size_t k = n_state; k < outs.size() && k < ctx.num_outputs(); ++k) {
    const TensorFact& elem = outs[k];
    TensorFact f = TensorFact::unknown(elem.dtype);
    if (elem.dims) {
      const int64_t axis_attr =
          out_axes && k - n_state < out_axes->size() ? (*out_axes)[k - n_state] : 0;
      const auto axis = normalize_axis(axis_attr, elem.rank() + 1);
      if (!axis) return invalid_model("Scan: scan_output_axes out of range");
      DimList dims = *elem.dims;
      dims.insert(dims.begin() + *axis, seq_len);
      f.dims = std::move(dims);
    }
    ctx.set_output(k, std::move(f));
  }
  return {};
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  r.add({"If", 1, OpClass::kEDO, {0}, if_rule});
  r.add({"Loop", 1, OpClass::kEDO, {0, 1}, loop_rule});
  r.add({"Scan", 8, OpClass::kISDOS, {}, scan_rule});
}

}  // namespace sod2
