// Matrix products: MatMul (numpy semantics), its quantized forms, Gemm and Einsum. All ISDOS: the
// output shape is the operands' batch dims broadcast plus the free dims; the contracted dims only
// add equalities the model needs.
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include "core/ops/dim_math.h"
#include "core/ops/op_registry.h"

namespace sod2 {
namespace {

using sym::SymExpr;

// The dims of a (batched) matrix product a @ b; nullopt in *out when a rank is unknown (the output
// rank depends on both).
Status matmul_dims(InferContext& ctx, const TensorFact& a, const TensorFact& b, std::string_view op,
                   std::optional<DimList>* out) {
  out->reset();
  if (!a.dims || !b.dims) return {};
  if (a.dims->empty() || b.dims->empty())
    return invalid_model(std::string(op) + " operands must have rank >= 1");
  DimList ad = *a.dims, bd = *b.dims;
  // numpy: a vector operand is promoted to a matrix, and the promoted dim is dropped again.
  const bool a_vec = ad.size() == 1, b_vec = bd.size() == 1;
  if (a_vec) ad.insert(ad.begin(), SymExpr(1));
  if (b_vec) bd.push_back(SymExpr(1));
  const Dim& ka = ad[ad.size() - 1];
  const Dim& kb = bd[bd.size() - 2];
  if (ka && kb && *ka != *kb)
    ctx.require_equal(*ka, *kb, std::string(op) + " inner dimensions must match");
  const TensorFact a_batch = TensorFact::shaped(a.dtype, DimList(ad.begin(), ad.end() - 2));
  const TensorFact b_batch = TensorFact::shaped(b.dtype, DimList(bd.begin(), bd.end() - 2));
  auto dims = broadcast_shapes(ctx, {&a_batch, &b_batch});
  if (!dims) return {};
  if (!a_vec) dims->push_back(simplified(ctx, ad[ad.size() - 2]));
  if (!b_vec) dims->push_back(simplified(ctx, bd[bd.size() - 1]));
  *out = std::move(dims);
  return {};
}

Status matmul_to_output(InferContext& ctx, size_t ia, size_t ib, DataType dtype,
                        std::string_view op) {
  std::optional<DimList> dims;
  SOD2_RETURN_IF_ERROR(matmul_dims(ctx, ctx.input(ia), ctx.input(ib), op, &dims));
  ctx.set_output(0, dims ? TensorFact::shaped(dtype, *dims) : TensorFact::unknown(dtype));
  return {};
}

Status matmul_rule(InferContext& ctx) {
  const TensorFact& a = ctx.input(0);
  const TensorFact& b = ctx.input(1);
  SOD2_RETURN_IF_ERROR(matmul_to_output(ctx, 0, 1, a.dtype, "MatMul"));
  // A dot product of two small integer vectors is a scalar shape computation worth carrying.
  if (is_integer_type(a.dtype) && a.rank() == 1 && b.rank() == 1 && a.value && b.value &&
      a.value->size() == b.value->size()) {
    SymExpr dot(int64_t{0});
    for (size_t i = 0; i < a.value->size(); ++i) dot = dot + (*a.value)[i] * (*b.value)[i];
    ctx.set_output(0, TensorFact::with_value(a.dtype, {ctx.simplify(dot)}, true));
  }
  return {};
}

Status matmul_integer_rule(InferContext& ctx) {
  return matmul_to_output(ctx, 0, 1, DataType::kInt32, "MatMulInteger");
}

// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point; the output
// takes y_zero_point's element type.
Status qlinear_matmul_rule(InferContext& ctx) {
  return matmul_to_output(ctx, 0, 3, ctx.input(7).dtype, "QLinearMatMul");
}

Status gemm_rule(InferContext& ctx) {
  const TensorFact& a = ctx.input(0);
  const TensorFact& b = ctx.input(1);
  if ((a.dims && a.rank() != 2) || (b.dims && b.rank() != 2))
    return invalid_model("Gemm operands A and B must be 2-D");
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  Dim m, ka, kb, n;
  if (a.dims) {
    m = (*a.dims)[ta ? 1 : 0];
    ka = (*a.dims)[ta ? 0 : 1];
  }
  if (b.dims) {
    kb = (*b.dims)[tb ? 1 : 0];
    n = (*b.dims)[tb ? 0 : 1];
  }
  if (ka && kb && *ka != *kb) ctx.require_equal(*ka, *kb, "Gemm inner dimensions must match");
  // C broadcasts unidirectionally to [M, N]: a C dim that cannot be 1 is the output dim.
  if (ctx.has_input(2) && ctx.input(2).dims) {
    const DimList& c = *ctx.input(2).dims;
    if (c.size() > 2) return invalid_model("Gemm input C must have rank <= 2");
    std::array<Dim*, 2> targets{&m, &n};
    for (size_t i = 0; i < c.size(); ++i) {
      Dim& target = *targets[2 - c.size() + i];
      const Dim& cd = c[i];
      if (!cd || cd->constant_value() == 1 || ctx.prove_le(2, *cd) != Tri::kTrue) continue;
      if (!target)
        target = cd;
      else if (*target != *cd)
        ctx.require_equal(*target, *cd, "Gemm C must broadcast to [M, N]");
    }
  }
  ctx.set_output(0, TensorFact::shaped(a.dtype, {simplified(ctx, m), simplified(ctx, n)}));
  return {};
}

// ---- Einsum ----

struct EinsumTerm {
  std::string labels;    // letters only
  int ellipsis_at = -1;  // index into labels where "..." stands, or -1
};

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Expected<EinsumTerm> parse_term(std::string_view t) {
  EinsumTerm term;
  for (size_t i = 0; i < t.size();) {
    if (is_label(t[i])) {
      term.labels += t[i++];
    } else if (t.substr(i, 3) == "...") {
      if (term.ellipsis_at >= 0)
        return invalid_model("Einsum equation: more than one '...' in a term");
      term.ellipsis_at = static_cast<int>(term.labels.size());
      i += 3;
    } else {
      return invalid_model(std::string("Einsum equation: unexpected character '") + t[i] + "'");
    }
  }
  return term;
}

Status einsum_rule(InferContext& ctx) {
  const DataType dtype = ctx.input(0).dtype;
  const auto eq_attr = ctx.attr_string("equation");
  if (!eq_attr) return invalid_model("Einsum needs the 'equation' attribute");
  std::string eq;
  for (char c : *eq_attr)
    if (c != ' ' && c != '\t') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<EinsumTerm> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    auto term = parse_term(std::string_view(lhs).substr(start, comma - start));
    if (!term) return term.status();
    terms.push_back(std::move(*term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return invalid_model("Einsum 'equation' has " + std::to_string(terms.size()) +
                         " operand terms for " + std::to_string(ctx.num_inputs()) + " inputs");

  std::map<char, Dim> label_dim;
  std::map<char, int> label_count;
  std::vector<const TensorFact*> ellipsis_parts;
  std::vector<TensorFact> ellipsis_facts;
  ellipsis_facts.reserve(terms.size());
  bool ellipsis_rank_known = true, any_ellipsis = false;
  for (size_t i = 0; i < terms.size(); ++i) {
    const EinsumTerm& t = terms[i];
    const TensorFact& in = ctx.input(i);
    const auto nl = static_cast<int64_t>(t.labels.size());
    int64_t ell_rank = 0;
    if (in.dims) {
      if (t.ellipsis_at < 0 && in.rank() != nl)
        return invalid_model("Einsum 'equation' term " + std::to_string(i) + " has " +
                             std::to_string(nl) + " labels for an input of rank " +
                             std::to_string(in.rank()));
      if (t.ellipsis_at >= 0 && in.rank() < nl)
        return invalid_model("Einsum 'equation' term " + std::to_string(i) +
                             " has more labels than its input has dims");
      ell_rank = in.rank() - nl;
    }
    if (t.ellipsis_at >= 0) {
      any_ellipsis = true;
      if (!in.dims) {
        ellipsis_rank_known = false;
      } else {
        const auto from = in.dims->begin() + t.ellipsis_at;
        ellipsis_facts.push_back(TensorFact::shaped(dtype, DimList(from, from + ell_rank)));
        ellipsis_parts.push_back(&ellipsis_facts.back());
      }
    }
    std::map<char, Dim> in_term;
    for (int64_t j = 0; j < nl; ++j) {
      const char c = t.labels[static_cast<size_t>(j)];
      ++label_count[c];
      Dim d;
      if (in.dims)
        d = (*in.dims)[static_cast<size_t>(j < t.ellipsis_at || t.ellipsis_at < 0 ? j
                                                                                  : j + ell_rank)];
      auto it = in_term.find(c);
      if (it != in_term.end()) {
        // A label repeated inside one term takes a diagonal: both dims must match exactly.
        if (it->second && d && *it->second != *d)
          ctx.require_equal(*it->second, *d, "Einsum repeated label dims must match");
        if (!it->second) it->second = d;
        continue;
      }
      in_term[c] = d;
    }
    for (const auto& [c, d] : in_term) {
      auto it = label_dim.find(c);
      if (it == label_dim.end())
        label_dim[c] = d;
      else
        it->second = broadcast_dim(ctx, it->second, d);
    }
  }

  EinsumTerm out_term;
  bool mixed_case = false;
  if (arrow != std::string::npos) {
    auto t = parse_term(std::string_view(eq).substr(arrow + 2));
    if (!t) return t.status();
    out_term = std::move(*t);
    for (size_t j = 0; j < out_term.labels.size(); ++j) {
      const char c = out_term.labels[j];
      if (!label_count.count(c))
        return invalid_model(std::string("Einsum output label '") + c + "' is in no input term");
      if (out_term.labels.find(c) != j)
        return invalid_model(std::string("Einsum output label '") + c + "' is repeated");
    }
  } else {
    // Implicit output: labels seen exactly once, sorted, after the broadcast dims. numpy sorts by
    // character code (upper case first) and ONNX Runtime lower case first, so a mix has no one
    // order and its dims stay unknown.
    bool upper = false, lower = false;
    for (const auto& [c, count] : label_count) {
      if (count != 1) continue;
      out_term.labels += c;
      (c >= 'a' ? lower : upper) = true;
    }
    mixed_case = upper && lower;
    if (any_ellipsis) out_term.ellipsis_at = 0;
  }

  DimList out;
  std::optional<DimList> ell;
  if (out_term.ellipsis_at >= 0) {
    if (!ellipsis_rank_known) {
      ctx.set_output(0, TensorFact::unknown(dtype));
      return {};
    }
    ell = ellipsis_parts.empty() ? DimList{} : broadcast_shapes(ctx, ellipsis_parts);
  }
  for (size_t j = 0; j <= out_term.labels.size(); ++j) {
    if (ell && static_cast<int>(j) == out_term.ellipsis_at)
      for (const Dim& d : *ell) out.push_back(simplified(ctx, d));
    if (j == out_term.labels.size()) break;
    out.push_back(mixed_case ? Dim() : simplified(ctx, label_dim[out_term.labels[j]]));
  }
  ctx.set_output(0, TensorFact::shaped(dtype, std::move(out)));
  return {};
}

// Attention-23: Y has Q's batch, heads and sequence with V's head size (3-D: [B, Sq, Hq * Dv]);
// present_key/present_value are the past (if any) with K/V appended along the sequence, and
// qk_matmul_output the [B, Hq, Sq, P + Skv] scores.
Status attention_rule(InferContext& ctx) {
  const TensorFact &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  const auto hq = ctx.attr_int("q_num_heads"), hkv = ctx.attr_int("kv_num_heads");
  auto head_size = [&](const Dim& hidden) -> Dim {
    if (!hidden || !hkv || *hkv <= 0) return Dim();
    return ctx.simplify(sym::floordiv(*hidden, *hkv));
  };
  TensorFact y = TensorFact::unknown(q.dtype);
  if (q.dims && v.dims && q.dims->size() == 4 && v.dims->size() == 4) {
    y.dims = DimList{(*q.dims)[0], (*q.dims)[1], (*q.dims)[2], (*v.dims)[3]};
  } else if (q.dims && v.dims && q.dims->size() == 3 && v.dims->size() == 3) {
    const Dim dv = head_size((*v.dims)[2]);
    y.dims = DimList{(*q.dims)[0], (*q.dims)[1], dv && hq ? Dim(ctx.simplify(*dv * *hq)) : Dim()};
  }
  ctx.set_output(0, std::move(y));
  for (size_t o = 1; o <= 2; ++o) {
    if (!ctx.has_output(o)) continue;
    const TensorFact& cur = o == 1 ? k : v;
    TensorFact p = TensorFact::unknown(cur.dtype);
    const TensorFact* past = ctx.has_input(o + 3) ? &ctx.input(o + 3) : nullptr;
    if (cur.dims && (cur.dims->size() == 4 || cur.dims->size() == 3)) {
      const bool four = cur.dims->size() == 4;
      Dim seq = four ? (*cur.dims)[2] : (*cur.dims)[1];
      if (past) {
        const Dim prev = past->dims && past->dims->size() == 4 ? (*past->dims)[2] : Dim();
        seq = seq && prev ? Dim(ctx.simplify(*prev + *seq)) : Dim();
      }
      p.dims = four ? DimList{(*cur.dims)[0], (*cur.dims)[1], seq, (*cur.dims)[3]}
                    : DimList{(*cur.dims)[0], hkv ? Dim(SymExpr(*hkv)) : Dim(), seq,
                              head_size((*cur.dims)[2])};
    }
    ctx.set_output(o, std::move(p));
  }
  if (ctx.has_output(3)) {
    // qk_matmul_output is the scores [B, Hq, Sq, P + Skv], 4-D whatever Q's rank.
    TensorFact qk = TensorFact::unknown(q.dtype);
    const TensorFact* past = ctx.has_input(4) ? &ctx.input(4) : nullptr;
    if (q.dims && k.dims && q.dims->size() == k.dims->size() &&
        (q.dims->size() == 4 || q.dims->size() == 3)) {
      const bool four = q.dims->size() == 4;
      Dim total = four ? (*k.dims)[2] : (*k.dims)[1];
      if (past) {
        const Dim prev = past->dims && past->dims->size() == 4 ? (*past->dims)[2] : Dim();
        total = total && prev ? Dim(ctx.simplify(*prev + *total)) : Dim();
      }
      const Dim heads = four ? (*q.dims)[1] : hq ? Dim(SymExpr(*hq)) : Dim();
      qk.dims = DimList{(*q.dims)[0], heads, four ? (*q.dims)[2] : (*q.dims)[1], total};
    }
    ctx.set_output(3, std::move(qk));
  }
  return {};
}

}  // namespace

void register_linalg_ops(OpRegistry& registry) {
  registry.add({"MatMul", 1, OpClass::kISDOS, {}, matmul_rule});
  registry.add({"MatMulInteger", 10, OpClass::kISDOS, {}, matmul_integer_rule});
  registry.add({"QLinearMatMul", 10, OpClass::kISDOS, {}, qlinear_matmul_rule});
  registry.add({"Gemm", 1, OpClass::kISDOS, {}, gemm_rule});
  registry.add({"Einsum", 12, OpClass::kISDOS, {}, einsum_rule});
  registry.add({"Attention", 23, OpClass::kISDOS, {}, attention_rule});
}

}  // namespace sod2
