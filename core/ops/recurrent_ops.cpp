// Recurrent layers (LSTM, GRU, RNN) and ReverseSequence. All ISDOS: sequence_lens masks steps but
// never changes a shape.
#include <string>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// Inputs: X, W [dirs, gates*hidden, input], R [dirs, gates*hidden, hidden], B, sequence_lens,
// initial_h (, initial_c, P for LSTM). Outputs: Y, Y_h (, Y_c for LSTM).
// layout 0: X [seq, batch, input], Y [seq, dirs, batch, hidden], Y_h [dirs, batch, hidden];
// layout 1 (opset 14): X [batch, seq, input], Y [batch, seq, dirs, hidden], Y_h [batch, dirs,
// hidden].
template <int kGates, bool kHasLayout>
Status recurrent_rule(InferContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const TensorFact& x = ctx.input(0);
  const TensorFact& w = ctx.input(1);
  const TensorFact& r = ctx.input(2);
  if (x.dims && x.rank() != 3) return invalid_model(op + " input X must be 3-D");
  if (w.dims && w.rank() != 3) return invalid_model(op + " input W must be 3-D");
  if (r.dims && r.rank() != 3) return invalid_model(op + " input R must be 3-D");
  const std::string direction = ctx.attr_string("direction").value_or("forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return invalid_model(op + " unknown 'direction' \"" + direction + "\"");
  const int64_t layout = kHasLayout ? ctx.attr_int("layout", 0) : 0;
  if (layout != 0 && layout != 1) return invalid_model(op + " 'layout' must be 0 or 1");
  const SymExpr dirs(direction == "bidirectional" ? 2 : 1);

  Dim hidden;
  if (const auto hs = ctx.attr_int("hidden_size")) {
    if (*hs < 1) return invalid_model(op + " 'hidden_size' must be >= 1");
    hidden = SymExpr(*hs);
  }
  // R's last dim is the hidden size itself; gate-stacked dims divide exactly in a valid model.
  const Dim r_hidden = dim_at(r, 2);
  if (!hidden) hidden = r_hidden;
  for (const Dim& stacked : {dim_at(r, 1), dim_at(w, 1)})
    if (!hidden && stacked) hidden = ctx.simplify(sym::floordiv(*stacked, kGates));
  if (hidden) {
    require_if_known(ctx, r_hidden, hidden, "R's last dim must equal hidden_size");
    const SymExpr stacked = ctx.simplify(*hidden * kGates);
    require_if_known(ctx, dim_at(w, 1), stacked, "W.dim1 must be gates * hidden_size");
    require_if_known(ctx, dim_at(r, 1), stacked, "R.dim1 must be gates * hidden_size");
  }
  require_if_known(ctx, dim_at(w, 0), dirs, "W.dim0 must be the number of directions");
  require_if_known(ctx, dim_at(r, 0), dirs, "R.dim0 must be the number of directions");
  require_if_known(ctx, dim_at(x, 2), dim_at(w, 2), "X's last dim must equal W's input size");

  const Dim seq = dim_at(x, layout == 0 ? 0 : 1);
  Dim batch = dim_at(x, layout == 0 ? 1 : 0);
  // sequence_lens [batch] and initial_h/initial_c carry the batch too.
  const Dim from_lens = ctx.has_input(4) ? dim_at(ctx.input(4), 0) : Dim();
  require_if_known(ctx, batch, from_lens, "sequence_lens length must equal the batch size");
  if (!batch) batch = from_lens;
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (i == 6 && kGates != 4) break;
    if (!ctx.has_input(i)) continue;
    const Dim from_state = dim_at(ctx.input(i), layout == 0 ? 1 : 0);
    require_if_known(ctx, batch, from_state, "initial state batch must equal the batch size");
    if (!batch) batch = from_state;
  }

  const DataType dtype = x.dtype;
  const DimList y =
      layout == 0 ? DimList{seq, dirs, batch, hidden} : DimList{batch, seq, dirs, hidden};
  const DimList state = layout == 0 ? DimList{dirs, batch, hidden} : DimList{batch, dirs, hidden};
  ctx.set_output(0, TensorFact::shaped(dtype, y));
  if (ctx.has_output(1)) ctx.set_output(1, TensorFact::shaped(dtype, state));
  if (kGates == 4 && ctx.has_output(2)) ctx.set_output(2, TensorFact::shaped(dtype, state));
  return {};
}

Status reverse_sequence_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  if (x.dims) {
    if (x.rank() < 2) return invalid_model("ReverseSequence input must have rank >= 2");
    const auto batch_axis = normalize_axis(ctx.attr_int("batch_axis", 1), x.rank());
    const auto time_axis = normalize_axis(ctx.attr_int("time_axis", 0), x.rank());
    if (!batch_axis || !time_axis || *batch_axis == *time_axis || *batch_axis > 1 || *time_axis > 1)
      return invalid_model("ReverseSequence 'batch_axis'/'time_axis' must be 0 and 1");
    require_if_known(ctx, dim_at(x, static_cast<size_t>(*batch_axis)), dim_at(ctx.input(1), 0),
                     "sequence_lens length must equal the batch size");
  }
  same_shape_as_input(ctx);
  return {};
}

}  // namespace

void register_recurrent_ops(OpRegistry& registry) {
  // The `layout` attribute (batch-major X/Y) arrives in opset 14.
  registry.add({"LSTM", 1, OpClass::kISDOS, {}, recurrent_rule<4, false>});
  registry.add({"LSTM", 14, OpClass::kISDOS, {}, recurrent_rule<4, true>});
  registry.add({"GRU", 1, OpClass::kISDOS, {}, recurrent_rule<3, false>});
  registry.add({"GRU", 14, OpClass::kISDOS, {}, recurrent_rule<3, true>});
  registry.add({"RNN", 1, OpClass::kISDOS, {}, recurrent_rule<1, false>});
  registry.add({"RNN", 14, OpClass::kISDOS, {}, recurrent_rule<1, true>});
  registry.add({"ReverseSequence", 10, OpClass::kISDOS, {}, reverse_sequence_rule});
}

}  // namespace sod2
