#include "core/package/kernel_fusion.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/ops/constant_nodes.h"
#include "core/ops/op_support.h"
#include "core/opt/fusion_rules.h"
#include "core/package/activation_chains.h"
#include "core/package/elementwise_fusion.h"
#include "core/package/program_builder.h"
#include "core/sym/prover.h"
#include "runtime/program/program.h"

namespace sod2::package {
namespace {

// The fact's dims as constants, when all are.
std::optional<std::vector<int64_t>> constant_dims(const TensorFact& f) {
  if (!f.dims) return std::nullopt;
  std::vector<int64_t> out;
  for (const Dim& d : *f.dims) {
    if (!d || !d->constant_value()) return std::nullopt;
    out.push_back(*d->constant_value());
  }
  return out;
}

float attr_float(const Node& n, const char* name, float fallback) {
  const Attribute* a = n.attribute(name);
  return a ? a->f : fallback;
}
int64_t attr_int(const Node& n, const char* name, int64_t fallback) {
  const Attribute* a = n.attribute(name);
  return a ? a->i : fallback;
}

class Matcher {
 public:
  Matcher(const Graph& g, const RdpResult& rdp, Target target)
      : g_(g), rdp_(rdp), target_(target) {}

  // The group's fused kernel, or why the CPU has none for it (`refused_` and `at_`).
  FusionVerdict match(const opt::FusionGroup& grp) {
    if (grp.nodes.size() < 2) return refuse(FusionRefusal::kSingleNode, grp.nodes.front());
    for (NodeId x : grp.nodes) {
      if (fusion_role(x) != FusionRole::kQuantization) continue;
      bool dequantizes = false;
      for (NodeId y : grp.nodes) {
        if (fusion_role(y) == FusionRole::kContraction) return match_qdq(grp);
        if (g_.node(y).op_type == "MaxPool") return match_qdq_max_pool(grp);
        dequantizes = dequantizes || g_.node(y).op_type == "DequantizeLinear";
      }
      // Float elementwise ops whose result is quantized: a FusedElementwise with 8-bit output.
      return dequantizes ? match_qdq_add(grp) : match_elementwise_group(g_, rdp_, grp, target_);
    }
    // A MatMul's operand Transposes come first (opt::fusion's prologue): the kernel reads their
    // inputs through a_perm / b_perm.
    size_t first = 0;
    while (first < grp.nodes.size() && g_.node(grp.nodes[first]).op_type == "Transpose") ++first;
    if (first == grp.nodes.size())
      return refuse(FusionRefusal::kNoContractionAnchor, grp.nodes.front());
    const Node& anchor = g_.node(grp.nodes[first]);
    if (grp.outputs.size() != 1) return refuse(FusionRefusal::kSeveralOutputs, grp.nodes.front());
    const std::string& op = anchor.op_type;
    if (first > 0 && (op != "MatMul" || !anchor.domain.empty() || target_ != Target::kCpu))
      return refuse(FusionRefusal::kUnsupportedPrologue, grp.nodes.front());
    // BatchNormalization at inference is a per-channel scale and shift: the same epilogue runs
    // after it (DenseNet's and pre-activation nets' BatchNorm -> ReLU after a Concat).
    const bool batch_norm = op == "BatchNormalization";
    if (!anchor.domain.empty() || (op != "Conv" && op != "MatMul" && op != "Gemm" && !batch_norm))
      return refuse(FusionRefusal::kNoContractionAnchor, grp.nodes.front());
    if (batch_norm) {
      bool inference = anchor.inputs.size() == 5 && attr_int(anchor, "training_mode", 0) == 0 &&
                       attr_int(anchor, "spatial", 1) == 1;
      for (size_t i = 1; inference && i < 5; ++i)
        inference = anchor.inputs[i] != kNoValue && is_constant_value(g_, anchor.inputs[i]) &&
                    rdp_.fact(g_, anchor.inputs[i]).dtype == DataType::kFloat;
      if (!inference) return refuse(FusionRefusal::kBatchNormNotInference, grp.nodes.front());
    }
    if (anchor.outputs.size() != 1)
      return refuse(FusionRefusal::kSeveralOutputs, grp.nodes.front());
    ValueId cur = anchor.outputs[0];
    const TensorFact& out_fact = rdp_.fact(g_, cur);
    // float16 and bfloat16 groups run the float32 kernel on widened inputs
    // (runtime/kernels/narrow_float_kernel.h), rounded once at the group's end.
    const DataType precision = out_fact.dtype;
    const bool floating = precision == DataType::kFloat || precision == DataType::kFloat16 ||
                          precision == DataType::kBFloat16;
    // The fused BatchNormalization runs float32 only (no narrow-float wrapper).
    if (!floating || !out_fact.dims || out_fact.dims->size() < 2 ||
        (batch_norm && precision != DataType::kFloat))
      return refuse(FusionRefusal::kNotFloat32, grp.nodes.front());
    // Output channels: dim 1 for Conv and BatchNormalization, the last dim for MatMul/Gemm.
    const bool channel_dim1 = op == "Conv" || batch_norm;
    const Dim& ch = channel_dim1 ? (*out_fact.dims)[1] : out_fact.dims->back();
    // Only a per-channel bias needs the count: attention's scores (last dim the sequence) fuse
    // their operand Transposes and a same-shape residual without it.
    const bool known_channels = ch && ch->constant_value();
    if (!known_channels && (batch_norm || target_ != Target::kCpu))
      return refuse(FusionRefusal::kSymbolicChannels, grp.nodes.front());
    const int64_t channels = known_channels ? *ch->constant_value() : -1;

    FusedKernel k;
    k.info.name = anchor.name;
    k.info.op_type = "Fused" + op;
    k.info.domain = "sod2";
    k.info.opset = static_cast<int>(anchor.opset);
    for (ValueId v : anchor.inputs) k.inputs.push_back(v);
    std::vector<int64_t> perms[2];
    for (size_t i = 0; i < first; ++i) {
      const Node& t = g_.node(grp.nodes[i]);
      size_t slot = 2;
      for (size_t s = 0; s < 2 && s < anchor.inputs.size(); ++s)
        if (t.outputs.size() == 1 && anchor.inputs[s] == t.outputs[0]) slot = s;
      const auto perm = opt::gemm_readable_perm(g_, rdp_, t);
      if (slot == 2 || !perms[slot].empty() || !perm)
        return refuse(FusionRefusal::kUnsupportedPrologue, grp.nodes[i]);
      perms[slot] = *perm;
      k.inputs[slot] = t.inputs[0];
    }
    if (!perms[0].empty()) set_ints(&k.info.attrs, "a_perm", perms[0]);
    if (!perms[1].empty()) set_ints(&k.info.attrs, "b_perm", perms[1]);
    int64_t bias = -1, residual = -1, before = 1;
    std::string activation;
    float alpha = 0, beta = 0;
    for (size_t i = first + 1; i < grp.nodes.size(); ++i) {
      const Node& n = g_.node(grp.nodes[i]);
      const NodeId at = grp.nodes[i];
      if (!n.domain.empty() || n.outputs.size() != 1)
        return refuse(FusionRefusal::kUnsupportedEpilogueOp, at);
      // SiLU or GELU as exporters write them (activation_chains.h): one activation of the
      // epilogue, GELU on the CPU only (no shader computes it).
      if (activation.empty()) {
        std::optional<ChainedActivation> chain = match_silu(g_, grp.nodes, i, cur);
        if (!chain && target_ == Target::kCpu) chain = match_gelu(g_, rdp_, grp.nodes, i, cur);
        if (chain) {
          activation = chain->name;
          alpha = chain->alpha;
          beta = chain->beta;
          cur = chain->out;
          i += chain->nodes - 1;
          continue;
        }
      }
      // The chain: each node reads the previous one's output, which nobody else reads.
      const Value& prev = g_.value(cur);
      if (prev.consumers.size() != 1 || prev.consumers[0] != grp.nodes[i])
        return refuse(FusionRefusal::kNotAChain, at);
      if (std::find(g_.outputs().begin(), g_.outputs().end(), cur) != g_.outputs().end())
        return refuse(FusionRefusal::kNotAChain, at);
      if (n.op_type == "Add") {
        if (n.inputs.size() != 2) return refuse(FusionRefusal::kUnsupportedEpilogueOp, at);
        const ValueId other = n.inputs[0] == cur ? n.inputs[1] : n.inputs[0];
        if (n.inputs[0] != cur && n.inputs[1] != cur) return refuse(FusionRefusal::kNotAChain, at);
        const TensorFact& of = rdp_.fact(g_, other);
        const auto dims = constant_dims(of);
        int64_t numel = 1;
        if (dims)
          for (int64_t d : *dims) numel *= d;
        if (!known_channels && is_constant_value(g_, other))
          return refuse(FusionRefusal::kSymbolicChannels, at);
        const bool per_channel = dims && numel == channels && is_constant_value(g_, other) &&
                                 activation.empty() && bias < 0 && of.dtype == precision &&
                                 fits_channel(*dims, channel_dim1, out_fact.dims->size());
        if (per_channel) {
          bias = static_cast<int64_t>(k.inputs.size());
          k.inputs.push_back(other);
        } else if (residual < 0 && of.dtype == precision &&
                   opt::same_shape(of, out_fact, rdp_.ranges()) &&
                   opt::same_shape(rdp_.fact(g_, n.outputs[0]), out_fact, rdp_.ranges())) {
          residual = static_cast<int64_t>(k.inputs.size());
          before = activation.empty();
          k.inputs.push_back(other);
        } else {
          return refuse(FusionRefusal::kUnsupportedAdd, at);
        }
      } else if (activation.empty() && n.inputs.size() >= 1 && n.inputs[0] == cur) {
        // After a residual Add too: the residual was added with no activation yet
        // (residual_before_activation = 1), so the kernels compute act(acc + bias + residual),
        // ResNet's Conv -> Add -> Relu.
        const OpSupport* row = n.domain.empty() ? find_op_support(n.op_type) : nullptr;
        if (!row || !row->epilogue_activation)
          return refuse(FusionRefusal::kUnsupportedEpilogueOp, at);
        activation = n.op_type;
        // The activations with parameters; the table's others have none.
        if (n.op_type == "LeakyRelu") {
          alpha = attr_float(n, "alpha", 0.01f);
        } else if (n.op_type == "HardSigmoid") {
          alpha = attr_float(n, "alpha", 0.2f);
          beta = attr_float(n, "beta", 0.5f);
        } else if (n.op_type == "Clip") {
          alpha = -3.402823466e38f;
          beta = 3.402823466e38f;
          if (n.opset < 11) {
            alpha = attr_float(n, "min", alpha);
            beta = attr_float(n, "max", beta);
          } else {
            for (size_t j = 1; j < n.inputs.size() && j < 3; ++j) {
              if (n.inputs[j] == kNoValue) continue;
              const auto v = constant_float_scalar(g_, rdp_, n.inputs[j]);
              if (!v) return refuse(FusionRefusal::kUnsupportedEpilogueOp, at);
              (j == 1 ? alpha : beta) = *v;
            }
          }
        }
      } else {
        return refuse(activation.empty() ? FusionRefusal::kUnsupportedEpilogueOp
                                         : FusionRefusal::kSecondActivation,
                      at);
      }
      cur = n.outputs[0];
    }
    if (cur != grp.outputs[0]) return refuse(FusionRefusal::kNotAChain, grp.nodes.back());
    k.output = cur;
    // The anchor's attributes, then the epilogue's.
    for (const Attribute& a : anchor.attributes) copy_attribute(a, &k.info.attrs);
    set_string(&k.info.attrs, "activation", activation);
    set_float(&k.info.attrs, "alpha", alpha);
    set_float(&k.info.attrs, "beta", beta);
    set_int(&k.info.attrs, "bias_input", bias);
    set_int(&k.info.attrs, "residual_input", residual);
    set_int(&k.info.attrs, "residual_before_activation", before);
    return verdict(std::move(k), to_rt_dtype(precision));
  }

 private:
  FusionRole fusion_role(NodeId x) const { return opt::fusion_role(g_.node(x)); }

  // A float32 tensor held by a constant value (initializer or Constant node).
  const Tensor* constant_tensor(ValueId v) const { return package::constant_tensor(g_, v); }
  // Per-tensor (one value) or, with `per_channel` > 0, that many values along DequantizeLinear's
  // axis 0.
  // A parameter of q: absent, one value, or with per_channel > 0 that many along axis
  // channel_axis of q's input (the attribute's default is 1; negative counts from the end).
  bool quant_param_fits(const Node& q, ValueId v, int64_t per_channel,
                        int64_t channel_axis = 0) const {
    if (v == kNoValue) return true;
    const TensorFact& f = rdp_.fact(g_, v);
    const auto dims = constant_dims(f);
    if (!dims) return false;
    int64_t numel = 1;
    for (int64_t d : *dims) numel *= d;
    if (numel == 1 && dims->size() <= 1) return true;
    if (per_channel <= 0 || dims->size() != 1 || numel != per_channel) return false;
    int64_t axis = attr_int(q, "axis", 1);
    const auto& in_dims = rdp_.fact(g_, q.inputs[0]).dims;
    if (axis < 0 && in_dims) axis += static_cast<int64_t>(in_dims->size());
    return axis == channel_axis;
  }
  static bool is_8bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

  // The end of a QDQ group from nodes[i] on, reading `cur`: an optional Relu or constant Clip
  // (or, with allow_float_activation, another epilogue activation of the op table), then a
  // per-tensor 8-bit QuantizeLinear whose output is the group's one output. Without that
  // QuantizeLinear (a float result, e.g. read by a float Mul), `float_end` is the value the
  // activation leaves when it is the group's one output: a contraction may end there.
  struct QuantizedTail {
    float lo = -std::numeric_limits<float>::infinity();
    float hi = std::numeric_limits<float>::infinity();
    // Another epilogue activation (HardSwish, Sigmoid...): applied in float before quantizing.
    std::string activation;
    float alpha = 0, beta = 0;
    const Node* q = nullptr;
    ValueId float_end = kNoValue;
    size_t failed_at = 0;  // where matching stopped, when it did
  };
  bool match_quantized_tail(const opt::FusionGroup& grp, size_t i, ValueId cur,
                            bool allow_float_activation, QuantizedTail* t) const {
    const auto sole_reader = [&](ValueId v, NodeId reader) {
      const Value& value = g_.value(v);
      return value.consumers.size() == 1 && value.consumers[0] == reader &&
             std::find(g_.outputs().begin(), g_.outputs().end(), v) == g_.outputs().end();
    };
    t->failed_at = i;
    if (i < grp.nodes.size() && sole_reader(cur, grp.nodes[i])) {
      const Node& act = g_.node(grp.nodes[i]);
      if (act.domain.empty() && act.op_type == "Relu" && act.inputs[0] == cur) {
        t->lo = 0;
        cur = act.outputs[0];
        ++i;
      } else if (act.domain.empty() && act.op_type == "Clip" && act.inputs[0] == cur) {
        if (act.opset < 11) {
          t->lo = attr_float(act, "min", t->lo);
          t->hi = attr_float(act, "max", t->hi);
        } else {
          for (size_t j = 1; j < act.inputs.size() && j < 3; ++j) {
            if (act.inputs[j] == kNoValue) continue;
            const auto v = constant_float_scalar(g_, rdp_, act.inputs[j]);
            if (!v) return false;
            (j == 1 ? t->lo : t->hi) = *v;
          }
        }
        cur = act.outputs[0];
        ++i;
      } else if (act.domain.empty() && act.inputs.size() == 1 && act.inputs[0] == cur &&
                 act.outputs.size() == 1 && allow_float_activation) {
        const OpSupport* row = find_op_support(act.op_type);
        if (row && row->epilogue_activation) {
          t->activation = act.op_type;
          if (act.op_type == "LeakyRelu") {
            t->alpha = attr_float(act, "alpha", 0.01f);
          } else if (act.op_type == "HardSigmoid") {
            t->alpha = attr_float(act, "alpha", 0.2f);
            t->beta = attr_float(act, "beta", 0.5f);
          }
          cur = act.outputs[0];
          ++i;
        }
      }
    }
    t->failed_at = i;
    if (i == grp.nodes.size() && grp.outputs.size() == 1 && grp.outputs[0] == cur &&
        rdp_.fact(g_, cur).dtype == DataType::kFloat)
      t->float_end = cur;
    if (i + 1 != grp.nodes.size()) return false;
    const Node& q = g_.node(grp.nodes[i]);
    const ValueId q_zp = q.inputs.size() > 2 ? q.inputs[2] : kNoValue;
    if (q.op_type != "QuantizeLinear" || q.inputs.size() < 2 || q.inputs[0] != cur ||
        !sole_reader(cur, grp.nodes[i]) || attr_int(q, "block_size", 0) != 0 ||
        rdp_.fact(g_, q.inputs[1]).dtype != DataType::kFloat ||
        !quant_param_fits(q, q.inputs[1], 0) || !quant_param_fits(q, q_zp, 0) ||
        q.outputs.size() != 1 || q.outputs[0] != grp.outputs[0] ||
        !is_8bit(rdp_.fact(g_, q.outputs[0]).dtype))
      return false;
    t->q = &q;
    return true;
  }

  // An 8-bit DequantizeLinear with a float32 scale, per tensor or, with `per_channel` > 0, that
  // many parameters along axis 0 (no blocks).
  bool plain_dequantize(const Node& n, int64_t per_channel = 0, int64_t channel_axis = 0) const {
    if (n.op_type != "DequantizeLinear" || n.inputs.size() < 2 || n.outputs.size() != 1 ||
        n.inputs[0] == kNoValue || n.inputs[1] == kNoValue || attr_int(n, "block_size", 0) != 0)
      return false;
    const ValueId zp = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    // A float32 result (not opset 23's float16/bfloat16 output_dtype, whose rounding the int8
    // kernels would skip).
    return is_8bit(rdp_.fact(g_, n.inputs[0]).dtype) &&
           rdp_.fact(g_, n.inputs[1]).dtype == DataType::kFloat &&
           rdp_.fact(g_, n.outputs[0]).dtype == DataType::kFloat &&
           quant_param_fits(n, n.inputs[1], per_channel, channel_axis) &&
           quant_param_fits(n, zp, per_channel, channel_axis);
  }

  // A constant per-tensor parameter's value, as a double (absent zero point: 0).
  std::optional<double> scalar_param(ValueId v, double absent) const {
    if (v == kNoValue) return absent;
    const Tensor* t = constant_tensor(v);
    if (!t || t->numel() != 1) return std::nullopt;
    return t->double_at(0);
  }

  // DequantizeLinear → MaxPool → QuantizeLinear with the same constant parameters (scale > 0):
  // the MaxPool of the 8-bit values, exactly (the conversions are monotone and undo each
  // other), as the standard MaxPool on them.
  FusionVerdict match_qdq_max_pool(const opt::FusionGroup& grp) {
    auto refuse_here = [&](NodeId at) {
      return refuse(FusionRefusal::kUnsupportedQuantization, at);
    };
    if (grp.nodes.size() != 3) return refuse_here(grp.nodes.front());
    const Node& dq = g_.node(grp.nodes[0]);
    const Node& pool = g_.node(grp.nodes[1]);
    const Node& q = g_.node(grp.nodes[2]);
    if (!plain_dequantize(dq) || pool.op_type != "MaxPool" || pool.outputs.size() != 1 ||
        pool.inputs.empty() || pool.inputs[0] != dq.outputs[0])
      return refuse_here(grp.nodes[1]);
    QuantizedTail tail;
    if (!match_quantized_tail(grp, 2, pool.outputs[0], false, &tail) || tail.lo > 0 ||
        tail.hi < std::numeric_limits<float>::infinity())
      return refuse_here(grp.nodes[2]);
    const auto ds = scalar_param(in(&dq, 1), 1), qs = scalar_param(in(&q, 1), 1);
    const auto dz = scalar_param(in(&dq, 2), 0), qz = scalar_param(in(&q, 2), 0);
    const DataType x_type = rdp_.fact(g_, dq.inputs[0]).dtype;
    if (!ds || !qs || !dz || !qz || !(*ds > 0) ||
        static_cast<float>(*ds) != static_cast<float>(*qs) || *dz != *qz ||
        rdp_.fact(g_, q.outputs[0]).dtype != x_type)
      return refuse_here(grp.nodes[2]);
    FusedKernel k;
    k.info.name = pool.name;
    k.info.op_type = "MaxPool";
    k.info.opset = static_cast<int>(pool.opset);
    k.inputs = {dq.inputs[0]};
    k.output = q.outputs[0];
    for (const Attribute& at : pool.attributes) copy_attribute(at, &k.info.attrs);
    return verdict(std::move(k), to_rt_dtype(x_type));
  }

  // DequantizeLinear(a), DequantizeLinear(b) → Add (same shapes) (+ Relu or constant Clip) →
  // QuantizeLinear, or a float end, as one sod2:QAdd: the same float arithmetic as the nodes one
  // by one (so the same bits), without materialising the float operands.
  FusionVerdict match_qdq_add(const opt::FusionGroup& grp) {
    auto refuse_here = [&](NodeId at) {
      return refuse(FusionRefusal::kUnsupportedQuantization, at);
    };
    size_t a = 0;
    while (a < grp.nodes.size() && g_.node(grp.nodes[a]).op_type == "DequantizeLinear") ++a;
    if (a == 0 || a == grp.nodes.size()) return refuse_here(grp.nodes.front());
    const Node& add = g_.node(grp.nodes[a]);
    if (!add.domain.empty() || add.op_type != "Add" || add.inputs.size() != 2 ||
        add.outputs.size() != 1)
      return refuse_here(grp.nodes[a]);
    const Node* dq[2] = {nullptr, nullptr};
    for (size_t i = 0; i < a; ++i) {
      const Node& n = g_.node(grp.nodes[i]);
      if (!plain_dequantize(n)) return refuse_here(grp.nodes[i]);
      for (int s = 0; s < 2; ++s)
        if (add.inputs[static_cast<size_t>(s)] == n.outputs[0]) dq[s] = &n;
    }
    const TensorFact& out = rdp_.fact(g_, add.outputs[0]);
    for (const Node* n : dq) {
      if (!n || !opt::same_shape(rdp_.fact(g_, n->inputs[0]), out, rdp_.ranges()))
        return refuse_here(grp.nodes[a]);
    }
    QuantizedTail tail;
    if (!match_quantized_tail(grp, a + 1, add.outputs[0], false, &tail) &&
        tail.float_end == kNoValue)
      return refuse_here(grp.nodes[std::min(tail.failed_at, grp.nodes.size() - 1)]);
    FusedKernel k;
    k.info.name = add.name;
    k.info.op_type = "QAdd";
    k.info.domain = "sod2";
    k.info.opset = 1;
    // Without a QuantizeLinear (the last block before a float head), no y_scale/y_zero_point
    // and a float result.
    k.inputs = {in(dq[0], 0), in(dq[0], 1), in(dq[0], 2),  in(dq[1], 0),
                in(dq[1], 1), in(dq[1], 2), in(tail.q, 1), in(tail.q, 2)};
    k.output = tail.q ? tail.q->outputs[0] : tail.float_end;
    set_float(&k.info.attrs, "clip_min", tail.lo);
    set_float(&k.info.attrs, "clip_max", tail.hi);
    const rt::DType y_type = to_rt_dtype(rdp_.fact(g_, k.output).dtype);
    return verdict(std::move(k), y_type);
  }

  // DequantizeLinear → Conv (+ its int32 bias) (+ Relu or a constant Clip) → QuantizeLinear, as
  // one sod2:QFusedConv. Its arithmetic is QLinearConv's (exact int32 sums, one requantisation),
  // which is what the QDQ form means and what ONNX Runtime runs for it; the bias's scale must
  // then be x_scale * w_scale, as QLinearConv assumes. A bias the quantiser left float ([M]
  // values, not behind a DequantizeLinear) is added to the dequantized sums, in float, as the
  // float Conv adds it. Without the QuantizeLinear (a float result, as a squeeze-excite's or a
  // classifier head's) the kernel writes the dequantized sums, activated, as float: QFusedConv
  // without y_scale and y_zero_point.
  FusionVerdict match_qdq(const opt::FusionGroup& grp) {
    if (auto sides = opt::quantized_join_sides(g_, grp)) return match_qdq_join(*sides);
    auto refuse_here = [&](NodeId at) {
      return refuse(FusionRefusal::kUnsupportedQuantization, at);
    };
    size_t a = 0;
    while (a < grp.nodes.size() && fusion_role(grp.nodes[a]) == FusionRole::kQuantization) ++a;
    if (a == grp.nodes.size()) return refuse_here(grp.nodes.front());
    const Node& conv = g_.node(grp.nodes[a]);
    if (conv.domain.empty() && (conv.op_type == "MatMul" || conv.op_type == "Gemm"))
      return match_qdq_matmul(grp, a);
    if (conv.op_type != "Conv" || conv.inputs.size() < 2 || conv.outputs.size() != 1)
      return refuse_here(grp.nodes[a]);
    const auto w_dims = constant_dims(rdp_.fact(g_, conv.inputs[1]));
    if (!w_dims || w_dims->size() < 3) return refuse_here(grp.nodes[a]);
    const int64_t m = (*w_dims)[0];
    const Node* dq[3] = {nullptr, nullptr, nullptr};
    if (NodeId bad = prologue(grp, a, dq); bad != kNoNode) return refuse_here(bad);
    // x per tensor; w per tensor or per output channel.
    if (!plain_dequantize(*dq[0]) || !plain_dequantize(*dq[1], m)) return refuse_here(grp.nodes[0]);
    ValueId bias = kNoValue;
    if (conv.inputs.size() > 2 && conv.inputs[2] != kNoValue) {
      if (dq[2] ? !int32_bias_fits(dq, m) : !float_bias_fits(conv.inputs[2], m))
        return refuse_here(grp.nodes[a]);
      bias = dq[2] ? in(dq[2], 0) : conv.inputs[2];
    }
    QuantizedTail tail;
    if (!match_quantized_tail(grp, a + 1, conv.outputs[0], true, &tail) &&
        tail.float_end == kNoValue)
      return refuse_here(grp.nodes[std::min(tail.failed_at, grp.nodes.size() - 1)]);
    FusedKernel k = quantized_contraction(conv.name, "QFusedConv", dq, bias, tail);
    for (const Attribute& at : conv.attributes) copy_attribute(at, &k.info.attrs);
    const rt::DType y_type = to_rt_dtype(rdp_.fact(g_, k.output).dtype);
    return verdict(std::move(k), y_type);
  }

  // A QDQ Conv group and the quantized residual join after it (opt::fuse joins them): one
  // sod2:QFusedConv that runs QAdd's arithmetic on its own 8-bit result and the residual, in its
  // store where it can, so the result is never written and read back. The same bytes as the
  // QFusedConv and the QAdd one after the other: the result is the same 8-bit values either way.
  // Inputs 9-15: the residual, its scale and zero point, the parameters that dequantize the
  // convolution's result in the join, and the join's output scale and zero point; the join's
  // clamp as join_clip_min / join_clip_max.
  FusionVerdict match_qdq_join(const std::array<opt::FusionGroup, 2>& sides) {
    FusionVerdict conv = match_qdq(sides[0]);
    if (!conv.kernel) return conv;
    FusionVerdict join = match_qdq_add(sides[1]);
    if (!join.kernel) return join;
    FusedKernel k = std::move(*conv.kernel);
    const FusedKernel& j = *join.kernel;
    const ValueId result = k.output;
    // QAdd's inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
    // Addition is commutative, in float too: which operand the convolution's is does not matter.
    const size_t own = j.inputs[0] == result ? 0 : 3, other = 3 - own;
    if (k.info.op_type != "QFusedConv" || j.inputs[own] != result || j.inputs[other] == result)
      return refuse(FusionRefusal::kUnsupportedQuantization, sides[1].nodes.front());
    k.inputs.resize(9, kNoValue);
    for (size_t i : {other, other + 1, other + 2, own + 1, own + 2, size_t{6}, size_t{7}})
      k.inputs.push_back(j.inputs[i]);
    k.output = j.output;
    if (const rt::AttrValue* lo = j.info.attrs.find("clip_min"))
      set_float(&k.info.attrs, "join_clip_min", lo->f);
    if (const rt::AttrValue* hi = j.info.attrs.find("clip_max"))
      set_float(&k.info.attrs, "join_clip_max", hi->f);
    k.info.input_present.clear();
    k.info.input_dtypes.clear();
    return verdict(std::move(k), j.info.output_dtypes.at(0));
  }

  static ValueId in(const Node* n, size_t i) {
    return n && i < n->inputs.size() ? n->inputs[i] : kNoValue;
  }

  // A QDQ contraction group's prologue, nodes [0, a) of grp: which DequantizeLinear feeds which
  // of the contraction's first three operands (dq[0] and dq[1] required). kNoNode, or the node
  // where it does not fit.
  NodeId prologue(const opt::FusionGroup& grp, size_t a, const Node* dq[3]) const {
    const Node& anchor = g_.node(grp.nodes[a]);
    for (size_t i = 0; i < a; ++i) {
      const Node& n = g_.node(grp.nodes[i]);
      size_t slot = 3;
      for (size_t s = 0; s < 3 && s < anchor.inputs.size(); ++s)
        if (n.op_type == "DequantizeLinear" && n.outputs.size() == 1 &&
            anchor.inputs[s] == n.outputs[0])
          slot = s;
      if (slot == 3 || n.inputs.empty() || attr_int(n, "block_size", 0) != 0) return grp.nodes[i];
      dq[slot] = &n;
    }
    return dq[0] && dq[1] ? kNoNode : grp.nodes[a];
  }

  // The fused kernel of a QDQ contraction: QLinearConv's / QLinearMatMul's input slots (x,
  // x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B), the tail's clamp
  // and activation; without a QuantizeLinear, no y_scale/y_zero_point and a float output.
  static FusedKernel quantized_contraction(const std::string& name, const char* op,
                                           const Node* const dq[3], ValueId bias,
                                           const QuantizedTail& tail) {
    FusedKernel k;
    k.info.name = name;
    k.info.op_type = op;
    k.info.domain = "sod2";
    k.info.opset = 1;
    k.inputs = {in(dq[0], 0), in(dq[0], 1),  in(dq[0], 2),  in(dq[1], 0), in(dq[1], 1),
                in(dq[1], 2), in(tail.q, 1), in(tail.q, 2), bias};
    k.output = tail.q ? tail.q->outputs[0] : tail.float_end;
    set_float(&k.info.attrs, "clip_min", tail.lo);
    set_float(&k.info.attrs, "clip_max", tail.hi);
    if (!tail.activation.empty()) {
      set_string(&k.info.attrs, "activation", tail.activation);
      set_float(&k.info.attrs, "alpha", tail.alpha);
      set_float(&k.info.attrs, "beta", tail.beta);
    }
    return k;
  }

  // The contraction's int32 bias behind dq[2]: zero point 0 and scale x_scale * w_scale (dq[0]'s
  // and dq[1]'s), m values or one, all constants, as QLinearConv's B assumes.
  bool int32_bias_fits(const Node* const dq[3], int64_t m) const {
    if (!dq[2] || rdp_.fact(g_, in(dq[2], 0)).dtype != DataType::kInt32) return false;
    const Tensor* bz = constant_tensor(in(dq[2], 2));
    if (bz) {
      for (int64_t i = 0; i < bz->numel(); ++i)
        if (bz->double_at(i).value_or(1) != 0) return false;
    }
    const Tensor* bs = constant_tensor(in(dq[2], 1));
    const Tensor* xs = constant_tensor(in(dq[0], 1));
    const Tensor* ws = constant_tensor(in(dq[1], 1));
    if (!bs || !xs || !ws || xs->numel() != 1 || (ws->numel() != 1 && ws->numel() != m) ||
        (bs->numel() != 1 && bs->numel() != m) || !quant_param_fits(*dq[2], in(dq[2], 1), m))
      return false;
    const auto b_dims = constant_dims(rdp_.fact(g_, in(dq[2], 0)));
    if (!b_dims || b_dims->size() != 1 || (*b_dims)[0] != m) return false;
    const float x_scale = static_cast<float>(xs->double_at(0).value_or(0));
    for (int64_t c = 0; c < m; ++c) {
      const float want =
          x_scale * static_cast<float>(ws->double_at(ws->numel() == 1 ? 0 : c).value_or(0));
      const float got = static_cast<float>(bs->double_at(bs->numel() == 1 ? 0 : c).value_or(-1));
      // QuantizeLinear's writers compute the product in float or double: allow its last bit.
      if (!(std::fabs(got - want) <= std::fabs(want) * 1e-6f)) return false;
    }
    return true;
  }

  // A float bias of a QDQ Conv: float32, [m].
  bool float_bias_fits(ValueId b, int64_t m) const {
    const auto dims = constant_dims(rdp_.fact(g_, b));
    return rdp_.fact(g_, b).dtype == DataType::kFloat && dims && dims->size() == 1 &&
           (*dims)[0] == m;
  }

  // DequantizeLinear → MatMul, or Gemm (+ its int32 bias) (+ an activation) → QuantizeLinear (or
  // a float end), as one sod2:QFusedMatMul: QLinearMatMul's inputs and exact int32 sums, plus
  // the bias and the epilogue of QFusedConv. A per tensor; B a constant 2-D int8 matrix with
  // zero point 0, per tensor or per output column (Gemm's B may be transposed: trans_b).
  FusionVerdict match_qdq_matmul(const opt::FusionGroup& grp, size_t a) {
    auto refuse_here = [&](NodeId at) {
      return refuse(FusionRefusal::kUnsupportedQuantization, at);
    };
    const Node& mm = g_.node(grp.nodes[a]);
    const bool gemm = mm.op_type == "Gemm";
    if (mm.inputs.size() < 2 || mm.outputs.size() != 1) return refuse_here(grp.nodes[a]);
    const int64_t trans_b = gemm ? attr_int(mm, "transB", 0) : 0;
    if (gemm && (attr_int(mm, "transA", 0) != 0 || attr_float(mm, "alpha", 1) != 1.0f ||
                 attr_float(mm, "beta", 1) != 1.0f))
      return refuse_here(grp.nodes[a]);
    const auto b_dims = constant_dims(rdp_.fact(g_, mm.inputs[1]));
    const auto& a_dims = rdp_.fact(g_, mm.inputs[0]).dims;
    if (!b_dims || b_dims->size() != 2 || !a_dims || a_dims->size() < 2 ||
        (gemm && a_dims->size() != 2))
      return refuse_here(grp.nodes[a]);
    const int64_t n = (*b_dims)[trans_b ? 0 : 1];
    const Node* dq[3] = {nullptr, nullptr, nullptr};
    if (NodeId bad = prologue(grp, a, dq); bad != kNoNode) return refuse_here(bad);
    if (!plain_dequantize(*dq[0]) || !plain_dequantize(*dq[1], n, trans_b ? 0 : 1))
      return refuse_here(grp.nodes[a]);
    // int8 weights with zero point 0: what the int8 GEMM multiplies directly.
    if (rdp_.fact(g_, in(dq[1], 0)).dtype != DataType::kInt8 || !constant_tensor(in(dq[1], 0)))
      return refuse_here(grp.nodes[a]);
    if (const ValueId wz = in(dq[1], 2); wz != kNoValue) {
      const Tensor* t = constant_tensor(wz);
      if (!t) return refuse_here(grp.nodes[a]);
      for (int64_t i = 0; i < t->numel(); ++i)
        if (t->double_at(i).value_or(1) != 0) return refuse_here(grp.nodes[a]);
    }
    ValueId bias = kNoValue;
    if (gemm && mm.inputs.size() > 2 && mm.inputs[2] != kNoValue) {
      if (!int32_bias_fits(dq, n)) return refuse_here(grp.nodes[a]);
      bias = in(dq[2], 0);
    }
    QuantizedTail tail;
    if (!match_quantized_tail(grp, a + 1, mm.outputs[0], true, &tail) && tail.float_end == kNoValue)
      return refuse_here(grp.nodes[std::min(tail.failed_at, grp.nodes.size() - 1)]);
    FusedKernel k = quantized_contraction(mm.name, "QFusedMatMul", dq, bias, tail);
    set_int(&k.info.attrs, "trans_b", trans_b);
    const rt::DType y_type = to_rt_dtype(rdp_.fact(g_, k.output).dtype);
    return verdict(std::move(k), y_type);
  }

  // A [C] bias, or [1,C,1,1]-like for Conv (ones around the channel axis, aligned to the output's
  // rank); [C] or [1,C] for MatMul/Gemm.
  static bool fits_channel(const std::vector<int64_t>& dims, bool channel_dim1, size_t out_rank) {
    if (dims.size() > out_rank) return false;
    if (!channel_dim1) {
      for (size_t i = 0; i + 1 < dims.size(); ++i)
        if (dims[i] != 1) return false;
      return true;
    }
    // Aligned right against the output: the channel axis is out_rank - 1 - (out_rank - 2) = 1.
    const size_t offset = out_rank - dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      if (offset + i == 1) continue;
      if (dims[i] != 1) return false;
    }
    return offset <= 1;
  }
  // The verdict that runs `k`: its input slots' presence and types from RDP, one output of type
  // `out`.
  FusionVerdict verdict(FusedKernel k, rt::DType out) const {
    for (ValueId v : k.inputs) {
      k.info.input_present.push_back(v != kNoValue);
      k.info.input_dtypes.push_back(v == kNoValue ? rt::DType::kUndefined
                                                  : to_rt_dtype(rdp_.fact(g_, v).dtype));
    }
    k.info.output_dtypes = {out};
    k.info.num_outputs = 1;
    FusionVerdict v;
    v.kernel = std::move(k);
    return v;
  }
  FusionVerdict refuse(FusionRefusal why, NodeId at) const { return refused(g_, why, at); }
  static void set_string(rt::Attrs* a, const char* name, const std::string& v) {
    rt::AttrValue x;
    x.kind = rt::AttrValue::Kind::kString;
    x.s = v;
    a->set(name, std::move(x));
  }
  static void set_float(rt::Attrs* a, const char* name, float v) {
    rt::AttrValue x;
    x.kind = rt::AttrValue::Kind::kFloat;
    x.f = v;
    a->set(name, std::move(x));
  }
  static void set_ints(rt::Attrs* a, const char* name, std::vector<int64_t> v) {
    rt::AttrValue x;
    x.kind = rt::AttrValue::Kind::kInts;
    x.ints = std::move(v);
    a->set(name, std::move(x));
  }
  static void set_int(rt::Attrs* a, const char* name, int64_t v) {
    rt::AttrValue x;
    x.kind = rt::AttrValue::Kind::kInt;
    x.i = v;
    a->set(name, std::move(x));
  }
  static void copy_attribute(const Attribute& a, rt::Attrs* out) {
    rt::AttrValue x;
    switch (a.type) {
      case AttributeType::kInt:
        x.kind = rt::AttrValue::Kind::kInt;
        x.i = a.i;
        break;
      case AttributeType::kFloat:
        x.kind = rt::AttrValue::Kind::kFloat;
        x.f = a.f;
        break;
      case AttributeType::kString:
        x.kind = rt::AttrValue::Kind::kString;
        x.s = a.s;
        break;
      case AttributeType::kInts:
        x.kind = rt::AttrValue::Kind::kInts;
        x.ints = a.ints;
        break;
      case AttributeType::kFloats:
        x.kind = rt::AttrValue::Kind::kFloats;
        x.floats = a.floats;
        break;
      default: return;  // Conv/MatMul/Gemm have no other kinds
    }
    out->set(a.name, std::move(x));
  }

  const Graph& g_;
  const RdpResult& rdp_;
  Target target_;
};

}  // namespace

FusionVerdict refused(const Graph& graph, FusionRefusal why, NodeId at) {
  FusionVerdict v;
  v.refusal = why;
  v.at_node = graph.node(at).name;
  return v;
}

const Tensor* constant_tensor(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  if (const Tensor* t = g.initializer_of(v)) return t;
  const Value& value = g.value(v);
  if (value.producer == kNoNode || !is_constant_value(g, v)) return nullptr;
  const Attribute* a = g.node(value.producer).attribute("value");
  return a ? &a->t : nullptr;
}

std::optional<float> constant_float_scalar(const Graph& g, const RdpResult& rdp, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const TensorFact& f = rdp.fact(g, v);
  const Tensor* t = g.initializer_of(v);
  if (!t && g.value(v).producer != kNoNode) {
    const Attribute* a = g.node(g.value(v).producer).attribute("value");
    if (a) t = &a->t;
  }
  if (!t || t->numel() != 1 || f.dtype != DataType::kFloat) return std::nullopt;
  const auto d = t->double_at(0);
  return d ? std::optional<float>(static_cast<float>(*d)) : std::nullopt;
}

std::vector<FusionVerdict> match_fused_kernels(const Graph& graph, const RdpResult& rdp,
                                               const opt::FusionPlan& plan, Target target) {
  Matcher m(graph, rdp, target);
  std::vector<FusionVerdict> out;
  out.reserve(plan.groups.size());
  for (const opt::FusionGroup& grp : plan.groups) {
    const bool elementwise =
        grp.nodes.size() > 1 && std::all_of(grp.nodes.begin(), grp.nodes.end(), [&](NodeId n) {
          return opt::fusion_role(graph.node(n)) == FusionRole::kElementwise;
        });
    // Elementwise ops then the Softmax that reads them (joined after a peel): a FusedSoftmax.
    const bool softmax_prologue =
        grp.nodes.size() > 1 && graph.node(grp.nodes.back()).op_type == "Softmax" &&
        std::all_of(grp.nodes.begin(), grp.nodes.end() - 1, [&](NodeId n) {
          return opt::fusion_role(graph.node(n)) == FusionRole::kElementwise;
        });
    out.push_back(elementwise        ? match_elementwise_group(graph, rdp, grp, target)
                  : softmax_prologue ? match_softmax_group(graph, rdp, grp, target)
                                     : m.match(grp));
  }
  return out;
}

}  // namespace sod2::package
