#include "core/ops/op_work.h"

#include <map>
#include <set>
#include <string>

namespace sod2 {

using sym::SymExpr;
using MaybeExpr = std::optional<SymExpr>;

namespace {

const TensorFact* fact_at(const std::vector<const TensorFact*>& facts, size_t i) {
  return i < facts.size() ? facts[i] : nullptr;
}

Dim dim_of(const TensorFact* f, int64_t d) {
  if (!f || !f->dims) return Dim();
  const auto rank = static_cast<int64_t>(f->dims->size());
  if (d < 0) d += rank;
  if (d < 0 || d >= rank) return Dim();
  return (*f->dims)[static_cast<size_t>(d)];
}

MaybeExpr times(const MaybeExpr& a, const MaybeExpr& b) {
  if (!a || !b) return std::nullopt;
  return *a * *b;
}

MaybeExpr scaled(const MaybeExpr& a, int64_t k) { return a ? MaybeExpr(*a * k) : std::nullopt; }

// --- the rule families ---

MaybeExpr no_arithmetic(const WorkView&) { return SymExpr(0); }

// One op per output element: unary and binary elementwise ops, comparisons, Where, Clip...
MaybeExpr per_output_element(const WorkView& w) { return w.output_numel(0); }

// Sum/Mean/Max/Min of n inputs: n-1 ops per output element (Mean's division adds one).
MaybeExpr variadic_elementwise(const WorkView& w) {
  size_t present = 0;
  for (const TensorFact* f : w.inputs) present += f != nullptr;
  const int64_t ops = static_cast<int64_t>(present) - 1 + (w.node.op_type == "Mean" ? 1 : 0);
  return scaled(w.output_numel(0), std::max<int64_t>(ops, 0));
}

// Reductions, ArgMax/ArgMin, CumSum, TopK: one op per input element.
MaybeExpr per_input_element(const WorkView& w) { return w.input_numel(0); }

// Softmax family: max, subtract-and-exp, sum, divide: 4 ops per element.
MaybeExpr softmax_work(const WorkView& w) { return scaled(w.input_numel(0), 4); }

// RotaryEmbedding: x * cos + rotate(x) * sin, 3 ops per element.
MaybeExpr rotary_work(const WorkView& w) { return scaled(w.output_numel(0), 3); }

// BatchNormalization at inference is a scale and a shift per element.
MaybeExpr batch_norm_work(const WorkView& w) { return scaled(w.input_numel(0), 2); }

// Layer/Instance/Group/RMS normalisation: mean, variance (2), normalise (2), scale and shift (2).
MaybeExpr normalization_work(const WorkView& w) { return scaled(w.input_numel(0), 7); }

// Conv (and its integer and quantised forms, DeformConv's sampling aside): each output element
// is a dot product of C_in/group * prod(kernel) multiply-adds. The weight is input 1 for Conv,
// ConvInteger and DeformConv, input 3 for QLinearConv.
MaybeExpr conv_work(const WorkView& w) {
  const size_t weight = w.node.op_type == "QLinearConv" ? 3 : 1;
  const MaybeExpr per_output = [&]() -> MaybeExpr {
    const TensorFact* f = fact_at(w.inputs, weight);
    if (!f || !f->dims || f->dims->size() < 2) return std::nullopt;
    MaybeExpr p = SymExpr(1);
    for (size_t d = 1; d < f->dims->size(); ++d) p = times(p, (*f->dims)[d]);
    return p;  // C_in/group * kernel
  }();
  return scaled(times(w.output_numel(0), per_output), 2);
}

// ConvTranspose scatters each input element through C_out/group * prod(kernel) multiply-adds:
// the weight is [C_in, C_out/group, k...].
MaybeExpr conv_transpose_work(const WorkView& w) {
  const TensorFact* f = fact_at(w.inputs, 1);
  if (!f || !f->dims || f->dims->size() < 2) return std::nullopt;
  MaybeExpr per_input = SymExpr(1);
  for (size_t d = 1; d < f->dims->size(); ++d) per_input = times(per_input, (*f->dims)[d]);
  return scaled(times(w.input_numel(0), per_input), 2);
}

// MatMul and its integer/quantised forms: every output element is a K-long dot product. K is
// A's last dim (A is input 0 for MatMul/MatMulInteger, input 0 of QLinearMatMul too).
MaybeExpr matmul_work(const WorkView& w) {
  const Dim k = w.input_rank(0) == 1 ? w.input_dim(0, 0) : w.input_dim(0, -1);
  return scaled(times(w.output_numel(0), k), 2);
}

// Gemm: M*N dot products of length K, plus alpha/beta/C per output element.
MaybeExpr gemm_work(const WorkView& w) {
  const Dim k = w.attr_int("transA", 0) ? w.input_dim(0, 0) : w.input_dim(0, 1);
  const MaybeExpr out = w.output_numel(0);
  const MaybeExpr dots = scaled(times(out, k), 2);
  if (!dots || !out) return std::nullopt;
  return w.inputs.size() > 2 && w.inputs[2] ? *dots + *out : *dots;
}

// Einsum: every output element sums the products over the contracted labels (those not in the
// output): one multiply-add per operand pair and combination. Labels are read from the equation;
// an ellipsis's dims are in the output's numel, so it needs no label.
MaybeExpr einsum_work(const WorkView& w) {
  const Attribute* eq_attr = w.node.attribute("equation");
  if (!eq_attr || eq_attr->type != AttributeType::kString) return std::nullopt;
  std::string eq;
  for (char c : eq_attr->s)
    if (c != ' ') eq.push_back(c);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back().push_back(c);
  }
  if (terms.size() != w.inputs.size()) return std::nullopt;
  std::map<char, int> count;
  std::map<char, Dim> size;
  for (size_t t = 0; t < terms.size(); ++t) {
    const TensorFact* f = w.inputs[t];
    if (!f || !f->dims) return std::nullopt;
    const std::string& term = terms[t];
    const size_t ell = term.find("...");
    const auto rank = static_cast<int64_t>(f->dims->size());
    const int64_t labels = static_cast<int64_t>(term.size()) - (ell == std::string::npos ? 0 : 3);
    const int64_t ell_rank = rank - labels;
    if (ell_rank < 0 || (ell == std::string::npos && ell_rank != 0)) return std::nullopt;
    int64_t d = 0;
    for (size_t i = 0; i < term.size(); ++i) {
      if (term[i] == '.') {
        if (i == ell) d += ell_rank;
        continue;
      }
      ++count[term[i]];
      if (!size[term[i]]) size[term[i]] = (*f->dims)[static_cast<size_t>(d)];
      ++d;
    }
  }
  std::set<char> output_labels;
  if (arrow != std::string::npos) {
    for (char c : eq.substr(arrow + 2))
      if (c != '.') output_labels.insert(c);
  } else {
    for (const auto& [c, n] : count)
      if (n == 1) output_labels.insert(c);
  }
  MaybeExpr contracted = SymExpr(1);
  for (const auto& [c, n] : count)
    if (!output_labels.count(c)) contracted = times(contracted, size[c]);
  const int64_t per_combination = terms.size() > 1 ? 2 * static_cast<int64_t>(terms.size() - 1) : 1;
  return scaled(times(w.output_numel(0), contracted), per_combination);
}

// Attention-23: scores Q·K^T and the weighted sum with V, 2 multiply-adds... per pair, plus the
// softmax over the scores. Shapes: 4-D [B, H, S, D]; 3-D [B, S, H*D] with the head counts as
// attributes.
MaybeExpr attention_work(const WorkView& w) {
  const int64_t rank = w.input_rank(0);
  MaybeExpr bhq_sq, skv, dqk, dv;
  if (rank == 4) {
    bhq_sq = times(times(w.input_dim(0, 0), w.input_dim(0, 1)), w.input_dim(0, 2));
    skv = w.input_dim(1, 2);
    dqk = w.input_dim(0, 3);
    dv = w.input_dim(2, 3);
  } else if (rank == 3) {
    const int64_t hq = w.attr_int("q_num_heads", 0), hkv = w.attr_int("kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0) return std::nullopt;
    bhq_sq = scaled(times(w.input_dim(0, 0), w.input_dim(0, 1)), hq);
    skv = w.input_dim(1, 1);
    const Dim q_hidden = w.input_dim(0, 2), v_hidden = w.input_dim(2, 2);
    if (!q_hidden || !v_hidden) return std::nullopt;
    dqk = sym::floordiv(*q_hidden, hq);
    dv = sym::floordiv(*v_hidden, hkv);
  } else {
    return std::nullopt;
  }
  // A past key/value lengthens the sequence the queries attend to.
  if (const Dim past = w.input_dim(4, 2); past && skv) skv = *skv + *past;
  const MaybeExpr pairs = times(bhq_sq, skv);
  if (!pairs || !dqk || !dv) return std::nullopt;
  return *pairs * (2 * *dqk + 2 * *dv + 4);
}

// LSTM/GRU/RNN: per step and batch row, the input and recurrent projections (W and R are
// [dirs, gates*hidden, input|hidden]) as multiply-adds, plus 3 ops per gate element (two bias
// adds and the activation) for the cell arithmetic.
MaybeExpr recurrent_work(const WorkView& w) {
  const MaybeExpr steps_rows = times(w.input_dim(0, 0), w.input_dim(0, 1));  // either layout
  const MaybeExpr gate_elements = [&]() -> MaybeExpr {
    const TensorFact* r = fact_at(w.inputs, 2);
    if (!r || !r->dims || r->dims->size() != 3) return std::nullopt;
    return times((*r->dims)[0], (*r->dims)[1]);
  }();
  const MaybeExpr weights = [&]() -> MaybeExpr {
    const MaybeExpr wn = w.input_numel(1), rn = w.input_numel(2);
    if (!wn || !rn) return std::nullopt;
    return 2 * (*wn + *rn);
  }();
  if (!weights || !gate_elements) return std::nullopt;
  return times(steps_rows, MaybeExpr(*weights + 3 * *gate_elements));
}

// Max/Average/Lp pooling: one op per window element per output element.
MaybeExpr pool_work(const WorkView& w) {
  const auto kernel = w.attr_ints("kernel_shape");
  if (!kernel) return std::nullopt;
  int64_t window = 1;
  for (int64_t k : *kernel) {
    if (k <= 0 || window > (int64_t{1} << 40) / k) return std::nullopt;
    window *= k;
  }
  return scaled(w.output_numel(0), window);
}

// Resize/Upsample, GridSample, AffineGrid, RoiAlign, MaxRoiPool: a few ops per output element
// (bilinear interpolation: 4 taps, 2 ops each).
MaybeExpr interpolation_work(const WorkView& w) { return scaled(w.output_numel(0), 8); }

// NonMaxSuppression compares boxes pairwise within each batch and class: at most
// B * C * N * N IoU tests (boxes [B, N, 4], scores [B, C, N]), about 10 ops each.
MaybeExpr nms_work(const WorkView& w) {
  const MaybeExpr bc = times(w.input_dim(1, 0), w.input_dim(1, 1));
  const Dim n = w.input_dim(0, 1);
  return scaled(times(bc, times(n, n)), 10);
}

// Det: LU elimination, about (2/3) n^3 per matrix: counted n^3.
MaybeExpr det_work(const WorkView& w) {
  const Dim n = w.input_dim(0, -1);
  const MaybeExpr matrices = [&]() -> MaybeExpr {
    const TensorFact* f = fact_at(w.inputs, 0);
    if (!f || !f->dims || f->dims->size() < 2) return std::nullopt;
    MaybeExpr m = SymExpr(1);
    for (size_t d = 0; d + 2 < f->dims->size(); ++d) m = times(m, (*f->dims)[d]);
    return m;
  }();
  return times(matrices, times(n, times(n, n)));
}

// DFT/STFT: a direct transform is, per complex output element, N complex multiply-adds (8 real
// ops) over the N samples it sums; an FFT needs fewer, but this is the op's definition, like the
// direct convolution's. The output holds (re, im) pairs, so numel(out) * N * 4.
MaybeExpr dft_work(const WorkView& w) {
  Dim n;
  if (w.node.op_type == "STFT") {
    const TensorFact* frame = fact_at(w.inputs, 3);
    if (frame && frame->value && frame->value->size() == 1)
      n = (*frame->value)[0];
    else
      n = w.input_dim(2, 0);  // the window's length is the frame's
  } else {
    int64_t axis = w.node.opset < 20 ? w.attr_int("axis", 1) : -2;
    if (w.node.opset >= 20) {
      const TensorFact* a = fact_at(w.inputs, 2);
      if (a) {
        const auto v = a->int_values();
        if (!v || v->size() != 1) return std::nullopt;
        axis = (*v)[0];
      }
    }
    n = w.input_dim(0, axis);
  }
  return scaled(times(w.output_numel(0), n), 4);
}

// A body run once per element of a sequence whose length RDP does not track.
MaybeExpr not_countable(const WorkView&) { return std::nullopt; }

// QuantizeLinear/DequantizeLinear, DynamicQuantizeLinear: a scale and a shift (and a round) per
// element.
MaybeExpr quantize_work(const WorkView& w) { return scaled(w.input_numel(0), 2); }

// If runs one branch: the larger of the two. Loop runs its body once per iteration when the
// trip count is known and no condition can end it early; Scan once per element of the scanned
// axis.
MaybeExpr if_work(const WorkView& w) {
  std::vector<SymExpr> branches;
  for (const Graph* g : w.node.subgraphs()) {
    MaybeExpr b = w.subgraph_work(*g);
    if (!b) return std::nullopt;
    branches.push_back(*b);
  }
  if (branches.empty()) return SymExpr(0);
  return sym::max(branches);
}

MaybeExpr loop_work(const WorkView& w) {
  const std::vector<const Graph*> bodies = w.node.subgraphs();
  if (bodies.size() != 1) return std::nullopt;
  const TensorFact* trip = fact_at(w.inputs, 0);
  if (!trip || !trip->value || trip->value->size() != 1) return std::nullopt;
  // A condition input that is not a constant true may end the loop before the trip count. The
  // body's own condition output may too: the count is then the most the loop does (exporters
  // write `for` loops with a constant-true condition, which runs exactly the trip count).
  if (const TensorFact* cond = fact_at(w.inputs, 1)) {
    const auto v = cond->int_values();
    if (!v || v->size() != 1 || (*v)[0] == 0) return std::nullopt;
  }
  return times((*trip->value)[0], w.subgraph_work(*bodies[0]));
}

MaybeExpr scan_work(const WorkView& w) {
  const std::vector<const Graph*> bodies = w.node.subgraphs();
  const int64_t scans = w.attr_int("num_scan_inputs", 0);
  if (bodies.size() != 1 || scans <= 0 || static_cast<size_t>(scans) > w.inputs.size())
    return std::nullopt;
  const size_t first_scan = w.inputs.size() - static_cast<size_t>(scans);
  // Scan-8 has a batch dim first and a sequence_lens input; from 9 the axis is an attribute.
  Dim length;
  if (w.node.opset < 9) {
    length = times(w.input_dim(first_scan, 0), w.input_dim(first_scan, 1));
  } else {
    const auto axes = w.attr_ints("scan_input_axes");
    length = w.input_dim(first_scan, axes && !axes->empty() ? (*axes)[0] : 0);
  }
  return times(length, w.subgraph_work(*bodies[0]));
}

}  // namespace

Dim WorkView::input_dim(size_t i, int64_t d) const { return dim_of(fact_at(inputs, i), d); }
Dim WorkView::output_dim(size_t i, int64_t d) const { return dim_of(fact_at(outputs, i), d); }

std::optional<SymExpr> WorkView::input_numel(size_t i) const {
  const TensorFact* f = fact_at(inputs, i);
  return f ? f->numel() : std::nullopt;
}

std::optional<SymExpr> WorkView::output_numel(size_t i) const {
  const TensorFact* f = fact_at(outputs, i);
  return f ? f->numel() : std::nullopt;
}

int64_t WorkView::input_rank(size_t i) const {
  const TensorFact* f = fact_at(inputs, i);
  return f ? f->rank() : -1;
}

int64_t WorkView::attr_int(std::string_view name, int64_t fallback) const {
  const Attribute* a = node.attribute(name);
  return a && a->type == AttributeType::kInt ? a->i : fallback;
}

std::optional<std::vector<int64_t>> WorkView::attr_ints(std::string_view name) const {
  const Attribute* a = node.attribute(name);
  if (!a || a->type != AttributeType::kInts) return std::nullopt;
  return a->ints;
}

const std::vector<std::pair<const char*, WorkRule>>& op_work_table() {
  static const std::vector<std::pair<const char*, WorkRule>> table = [] {
    std::vector<std::pair<const char*, WorkRule>> t;
    auto each = [&](std::initializer_list<const char*> ops, WorkRule rule) {
      for (const char* op : ops) t.emplace_back(op, rule);
    };
    each({"Abs",
          "Acos",
          "Acosh",
          "Add",
          "And",
          "Asin",
          "Asinh",
          "Atan",
          "Atanh",
          "BitShift",
          "BitwiseAnd",
          "BitwiseNot",
          "BitwiseOr",
          "BitwiseXor",
          "Ceil",
          "Celu",
          "Clip",
          "Cos",
          "Cosh",
          "Div",
          "Elu",
          "Equal",
          "Erf",
          "Exp",
          "Floor",
          "Gelu",
          "Greater",
          "GreaterOrEqual",
          "HardSigmoid",
          "HardSwish",
          "IsInf",
          "IsNaN",
          "LeakyRelu",
          "Less",
          "LessOrEqual",
          "Log",
          "Mish",
          "Mod",
          "Mul",
          "Neg",
          "Not",
          "Or",
          "PRelu",
          "Pow",
          "Reciprocal",
          "Relu",
          "Round",
          "Selu",
          "Shrink",
          "Sigmoid",
          "Sign",
          "Sin",
          "Sinh",
          "Softplus",
          "Softsign",
          "Sqrt",
          "Sub",
          "Tan",
          "Tanh",
          "ThresholdedRelu",
          "Where",
          "Xor",
          "Bernoulli",
          "RandomNormal",
          "RandomNormalLike",
          "RandomUniform",
          "RandomUniformLike",
          "EyeLike",
          "BlackmanWindow",
          "HammingWindow",
          "HannWindow",
          "MelWeightMatrix",
          "Multinomial",
          "AffineGrid",
          "Col2Im"},
         per_output_element);
    each({"Sum", "Mean", "Max", "Min"}, variadic_elementwise);
    each({"ArgMax",
          "ArgMin",
          "CumSum",
          "TopK",
          "ReduceSum",
          "ReduceMean",
          "ReduceMax",
          "ReduceMin",
          "ReduceProd",
          "ReduceL1",
          "ReduceL2",
          "ReduceLogSum",
          "ReduceLogSumExp",
          "ReduceSumSquare",
          "GlobalAveragePool",
          "GlobalMaxPool",
          "GlobalLpPool",
          "Unique",
          "LpNormalization",
          "MeanVarianceNormalization",
          "LRN",
          "NegativeLogLikelihoodLoss"},
         per_input_element);
    each({"Softmax", "LogSoftmax", "Hardmax", "SoftmaxCrossEntropyLoss"}, softmax_work);
    each({"RotaryEmbedding"}, rotary_work);
    each({"BatchNormalization"}, batch_norm_work);
    each({"LayerNormalization", "InstanceNormalization", "GroupNormalization", "RMSNormalization"},
         normalization_work);
    each({"Conv", "ConvInteger", "QLinearConv", "DeformConv"}, conv_work);
    each({"ConvTranspose"}, conv_transpose_work);
    each({"MatMul", "MatMulInteger", "QLinearMatMul"}, matmul_work);
    each({"Gemm"}, gemm_work);
    each({"Einsum"}, einsum_work);
    each({"Attention"}, attention_work);
    each({"LSTM", "GRU", "RNN"}, recurrent_work);
    each({"MaxPool", "AveragePool", "LpPool"}, pool_work);
    each({"Resize", "Upsample", "GridSample", "RoiAlign", "MaxRoiPool"}, interpolation_work);
    each({"NonMaxSuppression"}, nms_work);
    each({"Det"}, det_work);
    each({"DFT", "STFT"}, dft_work);
    each({"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"}, quantize_work);
    each({"SequenceMap"}, not_countable);
    each({"If"}, if_work);
    each({"Loop"}, loop_work);
    each({"Scan"}, scan_work);
    // Data movement, shape arithmetic, casts and string ops: nothing a roofline counts.
    each({"Cast",
          "CastLike",
          "CenterCropPad",
          "Compress",
          "Concat",
          "Constant",
          "ConstantOfShape",
          "DepthToSpace",
          "Dropout",
          "Expand",
          "Flatten",
          "Gather",
          "GatherElements",
          "GatherND",
          "Identity",
          "MaxUnpool",
          "NonZero",
          "OneHot",
          "Pad",
          "Range",
          "Reshape",
          "ReverseSequence",
          "Scatter",
          "ScatterElements",
          "ScatterND",
          "Shape",
          "Size",
          "Slice",
          "SpaceToDepth",
          "Split",
          "Squeeze",
          "Tile",
          "Transpose",
          "Trilu",
          "Unsqueeze",
          "StringNormalizer",
          "TfIdfVectorizer",
          "StringConcat",
          "RegexFullMatch",
          "StringSplit",
          "Optional",
          "OptionalGetElement",
          "OptionalHasElement",
          "SequenceAt",
          "SequenceConstruct",
          "SequenceEmpty",
          "SequenceErase",
          "SequenceInsert",
          "SequenceLength",
          "SplitToSequence",
          "ConcatFromSequence"},
         no_arithmetic);
    return t;
  }();
  return table;
}

}  // namespace sod2
