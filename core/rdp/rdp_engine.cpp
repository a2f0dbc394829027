#include "core/rdp/rdp_engine.h"

#include <algorithm>

#include "core/ops/op_registry.h"
#include "core/rdp/node_context.h"
#include "core/sym/prover.h"
#include "core/sym/text.h"

namespace sod2 {
namespace {

// Each pass recomputes every fact from the inputs with the refinements known so far. A pass that
// adds no refinement is the fixed point. Termination: a refinement replaces one execution symbol
// by an expression of symbols created before it, so there are at most as many refining passes as
// execution symbols; facts themselves are pure functions of the refinements, so a pass without a
// new refinement reproduces the previous pass exactly. The cap only guards against a bug.
constexpr int kMaxPasses = 64;

bool mentions(const sym::SymExpr& e, const sym::Symbol& s) {
  for (const sym::Symbol& f : sym::free_symbols(e))
    if (f == s) return true;
  return false;
}

}  // namespace

sym::SymExpr RdpEngine::simplify(const sym::SymExpr& e) const {
  return sym::simplify(e, result_->ranges_);
}

namespace {
// Deeper expressions are no longer readable shapes, and the recursive passes over them (simplify,
// bounds, printing) must stay far from the stack's limit on hostile models.
constexpr uint32_t kMaxDimDepth = 128;

bool usable(const sym::SymExpr& e) { return !e.is_overflow() && e.depth() <= kMaxDimDepth; }
}  // namespace

TensorFact RdpEngine::refine(TensorFact f) const {
  // Overflowed or absurdly deep expressions become unknown rather than wrong or slow.
  if (f.dims)
    for (Dim& d : *f.dims)
      if (d && !usable(*d)) d.reset();
  if (f.value)
    for (const sym::SymExpr& v : *f.value)
      if (!usable(v)) {
        f.value.reset();
        break;
      }
  if (result_->refinements_.empty()) return f;
  auto apply = [&](const sym::SymExpr& e) {
    return simplify(sym::substitute(e, result_->refinements_));
  };
  if (f.dims)
    for (Dim& d : *f.dims)
      if (d) d = apply(*d);
  if (f.value)
    for (sym::SymExpr& v : *f.value) v = apply(v);
  return f;
}

void RdpEngine::diagnose(Severity severity, std::string message, const std::string& node) {
  if (muted_) return;
  for (const Diagnostic& d : pass_diagnostics_)
    if (d.message == message && d.node == node) return;
  pass_diagnostics_.push_back({severity, std::move(message), node});
}

std::string RdpEngine::symbol_name_for(const std::string& raw) {
  if (auto it = exec_names_.find(raw); it != exec_names_.end()) return it->second;
  // Exporters name nodes like "/blocks.0/conv/Conv"; symbols read better (and bind on a command
  // line without quoting) as identifiers: "blocks.0_conv_Conv.out0.d1".
  std::string name;
  for (char c : raw) {
    const bool ok = sym::is_identifier_char(c);
    if (name.empty() && !sym::is_identifier_start(c)) continue;
    name += ok ? c : '_';
  }
  if (name.empty()) name = "exec";
  std::string unique = name;
  for (int k = 2; taken_names_.count(unique); ++k) unique = name + "_" + std::to_string(k);
  taken_names_.insert(unique);
  exec_names_[raw] = unique;
  return unique;
}

sym::SymExpr RdpEngine::execution_symbol(const std::string& raw_name, int64_t lo, int64_t hi,
                                         const std::string& origin) {
  const sym::Symbol s = sym::symbol(symbol_name_for(raw_name));
  auto it = result_->symbol_index_.find(s.node());
  if (it == result_->symbol_index_.end()) {
    result_->symbol_index_[s.node()] = result_->symbols_.size();
    result_->symbols_.push_back({s, SymbolKind::kExecution, origin, false});
  }
  if (lo > hi) hi = lo;
  (void)result_->ranges_.set(s, {std::max<int64_t>(lo, 0), std::max<int64_t>(hi, 0), 1});
  // Like the range, the bound is the last call's (bound_execution follows when there is one).
  result_->direct_bounds_.erase(s.node());
  // A refined symbol reads as what it was refined to.
  auto r = result_->refinements_.find(s);
  if (r != result_->refinements_.end()) return simplify(sym::substitute(r->second, result_->refinements_));
  return s;
}

void RdpEngine::bound_execution(const sym::SymExpr& e, const sym::SymExpr& bound0) {
  const auto s = e.as_symbol();
  if (!s || !result_->is_execution_symbol(*s)) return;
  const sym::SymExpr bound = simplify(sym::substitute(bound0, result_->refinements_));
  // Only older symbols, so that evaluating one bound through the others terminates.
  bool ok = usable(bound);
  const size_t index = result_->symbol_index_.at(s->node());
  for (const sym::Symbol& f : sym::free_symbols(bound)) {
    auto it = result_->symbol_index_.find(f.node());
    ok = ok && it != result_->symbol_index_.end() && it->second < index;
  }
  if (!ok) {
    result_->direct_bounds_.erase(s->node());
    return;
  }
  result_->direct_bounds_.insert_or_assign(s->node(), bound);
}

namespace {

// Whether `e` never decreases when `y` grows inside the ranges (a sufficient syntactic test: sums
// with positive coefficients, products of non-negative factors, min/max, division by a positive
// constant). Replacing `y` by an upper bound of it then gives an upper bound of `e`.
bool grows_with(const sym::SymExpr& e, const sym::Symbol& y, const sym::RangeMap& ranges) {
  if (!mentions(e, y)) return true;
  switch (e.kind()) {
    case sym::Kind::kSymbol: return true;
    case sym::Kind::kSum:
      for (size_t i = 0; i < e.operands().size(); ++i) {
        if (!mentions(e.operands()[i], y)) continue;
        if (e.coefficients()[i] <= 0 || !grows_with(e.operands()[i], y, ranges)) return false;
      }
      return true;
    case sym::Kind::kProduct:
      for (const sym::SymExpr& f : e.operands())
        if (sym::bounds(f, ranges).lo < 0 || !grows_with(f, y, ranges)) return false;
      return true;
    case sym::Kind::kMin:
    case sym::Kind::kMax:
      for (const sym::SymExpr& a : e.operands())
        if (!grows_with(a, y, ranges)) return false;
      return true;
    case sym::Kind::kFloorDiv:
    case sym::Kind::kCeilDiv: {
      const auto d = e.operands()[1].constant_value();
      return d && *d > 0 && grows_with(e.operands()[0], y, ranges);
    }
    default: return false;
  }
}

}  // namespace

void RdpEngine::close_execution_bounds() {
  result_->closed_bounds_.clear();
  for (const SymbolInfo& info : result_->symbols_) {
    if (info.kind != SymbolKind::kExecution) continue;
    auto it = result_->direct_bounds_.find(info.symbol.node());
    if (it == result_->direct_bounds_.end()) continue;
    sym::SymExpr closed = simplify(sym::substitute(it->second, result_->refinements_));
    for (const sym::Symbol& y : sym::free_symbols(closed)) {
      if (!result_->is_execution_symbol(y)) continue;
      auto c = result_->closed_bounds_.find(y.node());
      if (c == result_->closed_bounds_.end() || !grows_with(closed, y, result_->ranges_)) continue;
      const sym::SymExpr next = simplify(sym::substitute(closed, {{y, c->second}}));
      if (usable(next)) closed = next;
    }
    if (usable(closed)) result_->closed_bounds_.insert_or_assign(info.symbol.node(), closed);
  }
}

void RdpEngine::add_refinement(const sym::Symbol& s, const sym::SymExpr& value) {
  // Keeps the map closed (no right side mentions a refined symbol), so one substitution suffices.
  const sym::Substitution one{{s, value}};
  for (auto& [k, v] : result_->refinements_) v = simplify(sym::substitute(v, one));
  result_->refinements_[s] = value;
  refined_this_pass_ = true;
}

void RdpEngine::require_equal(const sym::SymExpr& a0, const sym::SymExpr& b0, std::string_view why,
                              const Node& node) {
  if (muted_) return;
  const sym::SymExpr a = simplify(sym::substitute(a0, result_->refinements_));
  const sym::SymExpr b = simplify(sym::substitute(b0, result_->refinements_));
  if (a == b) return;
  const sym::Proof p = sym::prove_eq(a, b, result_->ranges_);
  if (p == sym::Proof::kTrue) return;
  if (p == sym::Proof::kFalse) {
    diagnose(Severity::kError,
             "contradiction: " + std::string(why) + ", but " + a.to_string() + " and " +
                 b.to_string() + " differ for every binding in the declared ranges",
             node.name);
    return;
  }
  // Refine the newest execution symbol on either side: the model needs the equality at run time,
  // so an execution symbol can only take that value.
  auto newest_execution = [&](const sym::SymExpr& side) -> std::optional<sym::Symbol> {
    auto s = side.as_symbol();
    if (!s || !result_->is_execution_symbol(*s)) return std::nullopt;
    return s;
  };
  std::optional<sym::Symbol> sa = newest_execution(a), sb = newest_execution(b);
  if (sa && sb) {
    // Keep the older one; symbols_ is in creation order.
    if (result_->symbol_index_[sa->node()] < result_->symbol_index_[sb->node()]) sa.reset();
    else sb.reset();
  }
  if (sa && !mentions(b, *sa)) {
    add_refinement(*sa, b);
    return;
  }
  if (sb && !mentions(a, *sb)) {
    add_refinement(*sb, a);
    return;
  }
  const bool swap = sym::compare(a, b) > 0;
  Assumption as{swap ? b : a, swap ? a : b, node.name, std::string(why)};
  if (assumption_keys_.insert(as.to_string()).second) pass_assumptions_.push_back(std::move(as));
}

Status RdpEngine::init_input_symbols() {
  std::vector<std::string> unranged;
  const Graph& g = *model_.graph;
  for (ValueId id : g.inputs()) {
    const Value& v = g.value(id);
    if (!v.shape) continue;
    for (size_t d = 0; d < v.shape->size(); ++d) {
      const DimDecl& decl = (*v.shape)[d];
      if (decl.is_constant()) continue;
      const std::string name = decl.is_param() ? decl.param() : v.name + ".d" + std::to_string(d);
      const sym::Symbol s = sym::symbol(name);
      taken_names_.insert(name);
      if (result_->symbol_index_.count(s.node())) continue;
      SymbolInfo info{s, SymbolKind::kInput, "input " + v.name + " dim " + std::to_string(d), false};
      sym::SymbolRange range = options_.default_range;
      if (auto it = options_.ranges.find(name); it != options_.ranges.end()) {
        range = it->second;
        info.has_declared_range = true;
      } else {
        unranged.push_back(name);
      }
      Status st = result_->ranges_.set(s, range);
      if (!st.ok()) return st.with_context("range of '" + name + "'");
      result_->symbol_index_[s.node()] = result_->symbols_.size();
      result_->symbols_.push_back(info);
    }
  }
  for (const auto& [name, range] : options_.ranges) {
    if (!result_->symbol_index_.count(sym::symbol(name).node()))
      result_->diagnostics_.push_back(
          {Severity::kWarning, "a range is given for '" + name + "', which is no input symbol", ""});
  }
  if (!unranged.empty()) {
    std::string list;
    for (const auto& n : unranged) list += (list.empty() ? "" : ", ") + n;
    result_->diagnostics_.push_back(
        {Severity::kWarning,
         "no range declared for " + list + "; assuming " +
             std::to_string(options_.default_range.lo) + ":" +
             std::to_string(options_.default_range.hi) + " (use --range or --ranges)",
         ""});
  }
  return {};
}

TensorFact RdpEngine::declared_fact(const Value& v, bool symbols_from_params) const {
  TensorFact f;
  f.category = v.category == TypeCategory::kUnknown ? TypeCategory::kTensor : v.category;
  f.dtype = v.dtype;
  if (!v.shape) return f;
  DimList dims;
  for (size_t d = 0; d < v.shape->size(); ++d) {
    const DimDecl& decl = (*v.shape)[d];
    if (decl.is_constant()) dims.push_back(sym::SymExpr(decl.value()));
    else if (symbols_from_params)
      dims.push_back(sym::symbol(decl.is_param() ? decl.param() : v.name + ".d" + std::to_string(d)));
    else dims.push_back(std::nullopt);
  }
  f.dims = std::move(dims);
  return f;
}

TensorFact RdpEngine::initializer_fact(const Tensor& t) const {
  DimList dims;
  for (int64_t d : t.dims()) dims.push_back(sym::SymExpr(d));
  TensorFact f = TensorFact::shaped(t.dtype(), dims);
  if (t.numel() <= kMaxTrackedElements && t.dtype() != DataType::kString) {
    std::vector<sym::SymExpr> values;
    for (int64_t i = 0; i < t.numel(); ++i) {
      auto v = t.int_at(i);
      if (!v) return f;
      values.push_back(*v);
    }
    f.value = std::move(values);
  }
  return f;
}

void RdpEngine::check_declared(const Graph& graph, const Value& v, const TensorFact& f) {
  if (!v.shape || !f.dims) return;
  if (v.shape->size() != f.dims->size()) {
    diagnose(Severity::kWarning,
             "'" + v.name + "' is declared with rank " + std::to_string(v.shape->size()) +
                 " but RDP derives rank " + std::to_string(f.dims->size()),
             v.producer != kNoNode ? graph.node(v.producer).name : "");
    return;
  }
  for (size_t d = 0; d < v.shape->size(); ++d) {
    const DimDecl& decl = (*v.shape)[d];
    const Dim& ours = (*f.dims)[d];
    if (!ours || decl.is_unknown()) continue;
    std::optional<sym::SymExpr> claimed;
    if (decl.is_constant()) {
      claimed = sym::SymExpr(decl.value());
    } else if (auto it = labels_.find(decl.param()); it != labels_.end()) {
      claimed = it->second;
    } else if (result_->symbol_index_.count(sym::symbol(decl.param()).node()) &&
               !result_->is_execution_symbol(sym::symbol(decl.param()))) {
      claimed = sym::symbol(decl.param());
    } else {
      labels_.emplace(decl.param(), *ours);
      continue;
    }
    if (sym::prove_eq(*ours, *claimed, result_->ranges_) == sym::Proof::kFalse) {
      diagnose(Severity::kWarning,
               "'" + v.name + "' dim " + std::to_string(d) + " is declared as " + decl.to_string() +
                   " but RDP derives " + ours->to_string(),
               v.producer != kNoNode ? graph.node(v.producer).name : "");
    }
  }
}

void RdpEngine::record_resolution(const Node& node, const std::vector<TensorFact>& facts) {
  const OpSpec* spec = find_op_spec(node);
  if (!spec || spec->op_class != OpClass::kISVDOS) return;
  bool resolved = true;
  for (int i : spec->value_inputs) {
    const auto idx = static_cast<size_t>(i);
    if (idx >= node.inputs.size() || node.inputs[idx] == kNoValue) continue;
    const TensorFact& f = facts[static_cast<size_t>(node.inputs[idx])];
    resolved = resolved && f.value.has_value();
  }
  result_->resolved_[&node] = resolved;
}

void RdpEngine::run_node(const Graph& graph, const Node& node, std::vector<TensorFact>& facts) {
  const OpSpec* spec = find_op_spec(node);
  NodeContext ctx(*this, graph, node, facts);
  if (!spec || !spec->rule) {
    const std::string op = (node.domain.empty() ? "" : node.domain + "::") + node.op_type;
    diagnose(Severity::kWarning,
             "op '" + op + "' is not a standard ONNX op this build knows; its outputs are unknown",
             node.name);
  } else {
    Status st = spec->rule(ctx);
    if (!st.ok()) diagnose(Severity::kError, st.message(), node.name);
  }
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    if (node.outputs[o] == kNoValue) continue;
    const Value& v = graph.value(node.outputs[o]);
    TensorFact f = refine(std::move(ctx.outputs()[o]));
    if (f.dtype == DataType::kUndefined) f.dtype = v.dtype;
    if (v.category != TypeCategory::kUnknown && v.category != TypeCategory::kTensor &&
        f.category == TypeCategory::kTensor && !f.dims)
      f.category = v.category;
    check_declared(graph, v, f);
    facts[static_cast<size_t>(node.outputs[o])] = std::move(f);
  }
  record_resolution(node, facts);
}

Expected<std::vector<TensorFact>> RdpEngine::propagate_graph(const Graph& graph,
                                                             const std::vector<TensorFact>* inputs) {
  std::vector<TensorFact>& facts = result_->facts_[&graph];
  facts.assign(graph.num_values(), TensorFact{});
  const bool is_main = inputs == nullptr;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const Value& v = graph.value(graph.inputs()[i]);
    TensorFact f;
    if (is_main) f = declared_fact(v, true);
    else if (i < inputs->size() && ((*inputs)[i].dims || !v.shape)) f = (*inputs)[i];
    else f = declared_fact(v, false);
    facts[static_cast<size_t>(graph.inputs()[i])] = refine(std::move(f));
  }
  for (size_t id = 0; id < graph.num_values(); ++id) {
    const Value& v = graph.value(static_cast<ValueId>(id));
    if (v.kind == ValueKind::kInitializer) {
      facts[id] = initializer_fact(*graph.initializer_of(static_cast<ValueId>(id)));
    } else if (v.kind == ValueKind::kOuterScope) {
      // Enclosing graphs are propagated up to the owning node, so their facts are current.
      auto it = result_->facts_.find(v.outer_graph);
      if (it != result_->facts_.end()) facts[id] = it->second[static_cast<size_t>(v.outer_value)];
    }
  }
  SOD2_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.topological_order());
  for (NodeId n : order) run_node(graph, graph.node(n), facts);
  std::vector<TensorFact> outs;
  for (ValueId id : graph.outputs()) outs.push_back(facts[static_cast<size_t>(id)]);
  return outs;
}

Status RdpEngine::run() {
  SOD2_RETURN_IF_ERROR(init_input_symbols());
  const Diagnostics setup = result_->diagnostics_;
  for (int pass = 1; pass <= kMaxPasses; ++pass) {
    refined_this_pass_ = false;
    pass_diagnostics_.clear();
    pass_assumptions_.clear();
    assumption_keys_.clear();
    labels_.clear();
    result_->resolved_.clear();
    result_->direct_bounds_.clear();
    result_->passes_ = pass;
    auto outs = propagate_graph(*model_.graph, nullptr);
    if (!outs.ok()) return outs.status();
    // Graph outputs that are not node outputs (inputs, initializers) are checked here.
    const Graph& g = *model_.graph;
    for (ValueId id : g.outputs())
      if (g.value(id).kind != ValueKind::kNodeOutput)
        check_declared(g, g.value(id), result_->facts_[&g][static_cast<size_t>(id)]);
    if (!refined_this_pass_) break;
  }
  result_->diagnostics_ = setup;
  result_->diagnostics_.insert(result_->diagnostics_.end(), pass_diagnostics_.begin(),
                               pass_diagnostics_.end());
  result_->assumptions_ = pass_assumptions_;
  close_execution_bounds();
  return {};
}

// ----- RdpResult -----

const TensorFact& RdpResult::fact(const Graph& graph, ValueId id) const {
  static const TensorFact kUnknown;
  auto it = facts_.find(&graph);
  if (it == facts_.end() || id < 0 || static_cast<size_t>(id) >= it->second.size()) return kUnknown;
  return it->second[static_cast<size_t>(id)];
}

const SymbolInfo* RdpResult::symbol_info(const sym::Symbol& s) const {
  auto it = symbol_index_.find(s.node());
  return it == symbol_index_.end() ? nullptr : &symbols_[it->second];
}

bool RdpResult::is_execution_symbol(const sym::Symbol& s) const {
  const SymbolInfo* info = symbol_info(s);
  return info && info->kind == SymbolKind::kExecution;
}

bool RdpResult::involves_execution(const sym::SymExpr& e) const {
  for (const sym::Symbol& s : sym::free_symbols(e))
    if (is_execution_symbol(s)) return true;
  return false;
}

std::optional<sym::SymExpr> RdpResult::execution_bound(const sym::Symbol& s) const {
  auto it = closed_bounds_.find(s.node());
  if (it == closed_bounds_.end()) return std::nullopt;
  return it->second;
}

std::optional<sym::SymExpr> RdpResult::direct_execution_bound(const sym::Symbol& s) const {
  auto it = direct_bounds_.find(s.node());
  if (it == direct_bounds_.end()) return std::nullopt;
  return it->second;
}

bool RdpResult::resolved(const Node& node) const {
  auto it = resolved_.find(&node);
  return it != resolved_.end() && it->second;
}

Expected<RdpResult> run_rdp(const Model& model, const RdpOptions& options) {
  if (!model.graph) return invalid_argument("the model has no graph");
  RdpResult result;
  RdpEngine engine(model, options, &result);
  SOD2_RETURN_IF_ERROR(engine.run());
  return result;
}

}  // namespace sod2
