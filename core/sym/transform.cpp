// substitute() and free_symbols(): DAG walks with a memo, so shared subexpressions are visited
// once even when the tree they unfold to is exponential.
#include <algorithm>
#include <unordered_set>

#include "core/sym/canonical_internal.h"
#include "core/sym/transform.h"

namespace sod2::sym {
namespace {

class Substituter {
 public:
  explicit Substituter(const Substitution& map) : map_(map) {}

  SymExpr run(const SymExpr& e) {
    if (auto it = memo_.find(e.node()); it != memo_.end()) return it->second;
    SymExpr out = e;
    if (auto s = e.as_symbol()) {
      if (auto it = map_.find(*s); it != map_.end()) out = it->second;
    } else if (!e.operands().empty()) {
      std::vector<SymExpr> ops;
      ops.reserve(e.operands().size());
      bool changed = false;
      for (const SymExpr& op : e.operands()) {
        ops.push_back(run(op));
        changed |= ops.back() != op;
      }
      if (changed) out = detail::rebuild(e, ops);
    }
    memo_.emplace(e.node(), out);
    return out;
  }

 private:
  const Substitution& map_;
  std::unordered_map<const detail::Node*, SymExpr> memo_;
};

}  // namespace

SymExpr substitute(const SymExpr& e, const Substitution& map) {
  if (map.empty()) return e;
  return Substituter(map).run(e);
}

std::vector<Symbol> free_symbols(const SymExpr& e) {
  std::unordered_set<const detail::Node*> seen;
  std::vector<Symbol> out;
  std::vector<SymExpr> stack{e};
  while (!stack.empty()) {
    SymExpr x = stack.back();
    stack.pop_back();
    if (!seen.insert(x.node()).second) continue;
    if (auto s = x.as_symbol()) out.push_back(*s);
    for (const SymExpr& op : x.operands()) stack.push_back(op);
  }
  std::sort(out.begin(), out.end(),
            [](const Symbol& a, const Symbol& b) { return a.name() < b.name(); });
  return out;
}

}  // namespace sod2::sym
