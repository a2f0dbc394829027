#include "core/rdp/binding.h"

namespace sod2 {

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
  for (const Assumption& a : result.assumptions()) {
    auto l = sym::evaluate(a.lhs, binding), r = sym::evaluate(a.rhs, binding);
    if (l.ok() && r.ok() && *l != *r) {
      return invalid_argument("the binding breaks the assumption " + a.to_string() + " (" +
                              std::to_string(*l) + " vs " + std::to_string(*r) +
                              ") that node '" + a.node + "' needs: " + a.why);
    }
  }
  return binding;
}

std::optional<int64_t> dim_at(const Dim& dim, const sym::Binding& binding) {
  if (!dim) return std::nullopt;
  auto v = sym::evaluate(*dim, binding);
  if (!v.ok()) return std::nullopt;
  return *v;
}

}  // namespace sod2
