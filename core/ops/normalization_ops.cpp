// Normalizations keep their input's shape; the rules here are about their extra outputs (batch
// statistics, LayerNormalization's Mean/InvStdDev) and the losses' reduction modes.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

Status ok() { return Status::ok_status(); }

std::string axis_error(int64_t axis, int64_t rank) {
  return "attribute 'axis' = " + std::to_string(axis) + " is out of range for rank " +
         std::to_string(rank);
}

Status same_shape_rule(InferContext& ctx) {
  same_shape_as_input(ctx);
  return ok();
}

// Statistics outputs (running mean/var; before opset 14 also saved mean/var) have the shape of the
// statistics inputs: [C], or [C, D1...] in the pre-9 non-spatial form.
Status batch_norm_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  same_shape_as_input(ctx);
  TensorFact stat = TensorFact::unknown(
      ctx.input(3).dtype != DataType::kUndefined ? ctx.input(3).dtype : x.dtype);
  for (size_t i : {3, 4, 1, 2}) {
    if (ctx.input(i).dims) {
      stat.dims = ctx.input(i).dims;
      break;
    }
  }
  const bool spatial = ctx.opset() >= 9 || ctx.attr_int("spatial", 1) != 0;
  if (!stat.dims && spatial && x.dims && x.rank() >= 2) stat.dims = DimList{(*x.dims)[1]};
  for (size_t o = 1; o < ctx.num_outputs(); ++o)
    if (ctx.has_output(o)) ctx.set_output(o, stat);
  return ok();
}

Status axis_checked_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const int64_t axis = ctx.attr_int("axis", -1);
  if (x.dims && !normalize_axis(axis, x.rank())) return invalid_model(axis_error(axis, x.rank()));
  same_shape_as_input(ctx);
  return ok();
}

// Mean and InvStdDev: X's dims before `axis`, then 1s; of the stash type (float by default).
Status layer_norm_rule(InferContext& ctx) {
  const TensorFact& x = ctx.input(0);
  const int64_t axis = ctx.attr_int("axis", -1);
  std::optional<int64_t> n;
  if (x.dims) {
    n = normalize_axis(axis, x.rank());
    if (!n) return invalid_model(axis_error(axis, x.rank()));
  }
  same_shape_as_input(ctx);
  const int64_t stash = ctx.attr_int("stash_type", 1);
  const auto stash_dt =
      stash >= 0 && stash <= 64 ? data_type_from_onnx(static_cast<int32_t>(stash)) : std::nullopt;
  TensorFact stat = TensorFact::unknown(stash_dt.value_or(DataType::kUndefined));
  if (n) {
    DimList d(x.dims->begin(), x.dims->begin() + *n);
    d.resize(x.dims->size(), SymExpr(1));
    stat.dims = std::move(d);
  }
  for (size_t o = 1; o <= 2; ++o)
    if (ctx.has_output(o)) ctx.set_output(o, stat);
  return ok();
}

// Per-sample loss shape [N, D1...]: the scores' dims without C, completed from the target's.
std::optional<DimList> per_sample_dims(const TensorFact& scores, const TensorFact& target) {
  std::optional<DimList> d;
  if (scores.dims && scores.rank() >= 2) {
    d = DimList{(*scores.dims)[0]};
    d->insert(d->end(), scores.dims->begin() + 2, scores.dims->end());
  }
  if (!target.dims) return d;
  if (!d) return target.dims;
  if (d->size() == target.dims->size())
    for (size_t i = 0; i < d->size(); ++i)
      if (!(*d)[i]) (*d)[i] = (*target.dims)[i];
  return d;
}

// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (whose output 1 is the log-probabilities,
// shaped like the scores).
Status loss_rule(InferContext& ctx) {
  const TensorFact &scores = ctx.input(0), &target = ctx.input(1);
  const std::string reduction = ctx.attr_string("reduction").value_or("mean");
  TensorFact out = TensorFact::unknown(scores.dtype);
  if (reduction == "none")
    out.dims = per_sample_dims(scores, target);
  else if (reduction == "mean" || reduction == "sum")
    out.dims = DimList{};
  else
    return invalid_model("attribute 'reduction' = '" + reduction + "' is not none, mean or sum");
  ctx.set_output(0, std::move(out));
  if (ctx.has_output(1)) same_shape_as_input(ctx, 0, 1);
  return ok();
}

}  // namespace

void register_normalization_ops(OpRegistry& registry) {
  auto add = [&](const char* op, int64_t since, ShapeRule rule) {
    registry.add({op, since, OpClass::kISDOS, {}, rule});
  };
  // One rule for every version: training outputs (opset 14+) and the older mean/var/saved_*
  // outputs all take the statistics inputs' shape.
  add("BatchNormalization", 1, batch_norm_rule);
  add("InstanceNormalization", 1, same_shape_rule);
  add("LayerNormalization", 17, layer_norm_rule);
  // GroupNormalization (18; per-channel scale and bias from 21) and RMSNormalization (23) keep
  // X's shape.
  add("GroupNormalization", 18, same_shape_rule);
  add("GroupNormalization", 21, same_shape_rule);
  add("RMSNormalization", 23, same_shape_rule);
  add("RotaryEmbedding", 23, same_shape_rule);
  add("LpNormalization", 1, axis_checked_rule);
  add("MeanVarianceNormalization", 9, same_shape_rule);
  add("LRN", 1, same_shape_rule);
  add("NegativeLogLikelihoodLoss", 12, loss_rule);
  add("SoftmaxCrossEntropyLoss", 12, loss_rule);
}

}  // namespace sod2
