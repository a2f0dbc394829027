#include "core/rdp/binding.h"

#include <algorithm>
#include <utility>

namespace sod2 {
namespace {

// execution_limit and the bound it evaluated.
std::optional<std::pair<int64_t, sym::SymExpr>> limit_of(const RdpResult& result,
                                                         const sym::Symbol& s,
                                                         const sym::Binding& binding) {
  for (const auto& bound : {result.direct_execution_bound(s), result.execution_bound(s)}) {
    if (!bound) continue;
    auto v = sym::evaluate(*bound, binding);
    if (v.ok()) return std::pair{*v, *bound};
  }
  return std::nullopt;
}

}  // namespace

Expected<sym::Binding> make_binding(const RdpResult& result,
                                    const std::map<std::string, int64_t>& values) {
  sym::Binding binding;
  for (const auto& [name, value] : values) {
    const sym::Symbol s = sym::symbol(name);
    const SymbolInfo* info = result.symbol_info(s);
    if (!info) {
      std::string known;
      for (const SymbolInfo& i : result.symbols())
        if (i.kind == SymbolKind::kInput) known += (known.empty() ? "" : ", ") + i.symbol.name();
      return invalid_argument("'" + name + "' is not a symbol of this model (input symbols: " +
                              (known.empty() ? "none" : known) + ")");
    }
    if (!result.ranges().admits(s, value)) {
      const sym::SymbolRange r = result.ranges().get(s);
      return invalid_argument(name + "=" + std::to_string(value) + " is outside its range " +
                              std::to_string(r.lo) + ":" + std::to_string(r.hi) +
                              (r.multiple > 1 ? ":" + std::to_string(r.multiple) : ""));
    }
    binding[s] = value;
  }
  std::string missing;
  for (const SymbolInfo& i : result.symbols())
    if (i.kind == SymbolKind::kInput && !binding.count(i.symbol))
      missing += (missing.empty() ? "" : ", ") + i.symbol.name();
  if (!missing.empty()) return invalid_argument("unbound input symbols: " + missing);
  for (const SymbolInfo& info : result.symbols()) {
    const sym::Symbol& s = info.symbol;
    auto it = binding.find(s);
    if (info.kind != SymbolKind::kExecution || it == binding.end()) continue;
    const int64_t value = it->second;
    const auto limit = limit_of(result, s, binding);
    if (!limit || value <= std::max(limit->first, result.ranges().get(s).lo)) continue;
    return invalid_argument(s.name() + "=" + std::to_string(value) + " is above its bound " +
                            std::to_string(limit->first) + " at this binding (" +
                            limit->second.to_string() + ", the most " + info.origin + " can be)");
  }
  for (const Assumption& a : result.assumptions()) {
    auto l = sym::evaluate(a.lhs, binding), r = sym::evaluate(a.rhs, binding);
    if (l.ok() && r.ok() && *l != *r) {
      return invalid_argument("the binding breaks the assumption " + a.to_string() + " (" +
                              std::to_string(*l) + " vs " + std::to_string(*r) + ") that node '" +
                              a.node + "' needs: " + a.why);
    }
  }
  return binding;
}

std::optional<int64_t> execution_limit(const RdpResult& result, const sym::Symbol& s,
                                       const sym::Binding& binding) {
  auto l = limit_of(result, s, binding);
  return l ? std::optional<int64_t>(l->first) : std::nullopt;
}

std::optional<int64_t> dim_at(const Dim& dim, const sym::Binding& binding) {
  if (!dim) return std::nullopt;
  auto v = sym::evaluate(*dim, binding);
  if (!v.ok()) return std::nullopt;
  return *v;
}

}  // namespace sod2
