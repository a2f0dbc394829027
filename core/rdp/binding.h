// Binding symbols to integers: what a user (or the runtime) does once input sizes are known.
// The binding is validated against RDP's result before anything uses it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/rdp/rdp.h"
#include "core/sym/evaluate.h"

namespace sod2 {

// Checks that every input symbol is bound, every bound name is a symbol of the model, every value
// lies in the symbol's range (and on its multiple), and no assumption is broken; execution
// symbols may be bound too (to see a plan at a chosen data-dependent size), but not above their
// bound at the binding (execution_limit). Errors name the symbol and the limit, or the
// assumption and the node that needs it.
Expected<sym::Binding> make_binding(const RdpResult& result,
                                    const std::map<std::string, int64_t>& values);

// The most execution symbol `s` can be under `binding`: its bound (the rule's own, else the one
// over input symbols) evaluated there. nullopt when it has no bound or the bound needs symbols
// `binding` lacks (or overflows).
std::optional<int64_t> execution_limit(const RdpResult& result, const sym::Symbol& s,
                                       const sym::Binding& binding);

// A dim under a binding: nullopt when it is unknown or involves an unbound (execution) symbol.
std::optional<int64_t> dim_at(const Dim& dim, const sym::Binding& binding);

}  // namespace sod2
