// One slider and spin box per symbol, within its range and on its multiple (DESIGN §8: "every
// view re-instantiates live"). Input symbols first; then, after a separator, the execution
// symbols (a NonZero's count, a TopK's k: known only while running), each up to its bound at the
// current input values, with a "bound" toggle: checked, the symbol follows its bound as the inputs
// move (what a report does when nothing binds it); moving its slider binds it explicitly, and an
// explicit value above a new bound is clamped to it. Changes are coalesced: dragging a slider
// emits at most one bindingChanged per event-loop turn.
#pragma once

#include <QTimer>
#include <QToolBar>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/studio/document/open_document.h"

class QCheckBox;
class QLabel;
class QSlider;
class QSpinBox;

namespace sod2::studio {

class BindingsBar : public QToolBar {
  Q_OBJECT

 public:
  // The most execution symbol `name` can be when the other symbols take `values` (input symbols
  // and the execution symbols bound explicitly); nullopt keeps its SymbolControl::hi.
  using UpperFn = std::function<std::optional<int64_t>(
      const std::string& name, const std::map<std::string, int64_t>& values)>;

  explicit BindingsBar(QWidget* parent = nullptr);

  // Rebuilds the controls for a newly opened document's symbols, at `values`: an execution
  // symbol in `values` is bound explicitly, one absent follows its bound. Without `upper`, an
  // execution symbol's maximum stays its SymbolControl::hi.
  void setSymbols(const std::vector<SymbolControl>& symbols,
                  const std::map<std::string, int64_t>& values, UpperFn upper = {});
  // The input symbols and the execution symbols bound explicitly (those following their bound
  // are left out: StudioDocument::binding sizes them at their bound).
  std::map<std::string, int64_t> values() const;
  // Sets one symbol (clamped and snapped to its multiple); an execution symbol is then bound
  // explicitly. Emits bindingChanged.
  void setValue(const std::string& name, int64_t value);
  // Shows a whole binding: the input symbols in `values` take their values, then each execution
  // symbol its value there, or follows its bound when absent (so the bar shows what
  // StudioDocument::binding(values) sizes). Emits bindingChanged when something changed.
  void setValues(const std::map<std::string, int64_t>& values);
  // An execution symbol back to following its bound (true) or bound at its current value (false).
  void setFollowsBound(const std::string& name, bool follows);
  bool followsBound(const std::string& name) const;
  // A symbol's current maximum (an execution symbol's bound at the current values); -1: no such
  // symbol.
  int64_t maximum(const std::string& name) const;
  // A symbol's current value as shown (an execution symbol following its bound: the bound).
  int64_t value(const std::string& name) const;

 signals:
  void bindingChanged();

 private:
  struct Control {
    SymbolControl symbol;  // an execution symbol's `hi` is its current maximum
    QSlider* slider = nullptr;
    QSpinBox* spin = nullptr;
    QLabel* label = nullptr;
    QCheckBox* at_bound = nullptr;  // execution symbols only
    bool follows = false;
  };
  int64_t snap(const SymbolControl& s, int64_t v) const;
  Control* find(const std::string& name);
  const Control* find(const std::string& name) const;
  // Shows `v` on control `c` without reacting to it.
  void show(Control& c, int64_t v);
  // Re-evaluates every execution symbol's maximum at the current values; one following its bound
  // shows the new maximum, an explicit one above it is clamped.
  void reRange();
  void onSpin(size_t i, int value);
  std::vector<Control> controls_;
  std::vector<QAction*> actions_;
  UpperFn upper_;
  QTimer coalesce_;
};

// The bar's maximum for a document's execution symbols: each one's bound at the other values
// (OpenDocument::execution_upper). Holds the document weakly.
BindingsBar::UpperFn execution_upper_of(const std::shared_ptr<const OpenDocument>& doc);
// The same over a model alone (the plan comparison's own binding).
BindingsBar::UpperFn execution_upper_of(const std::shared_ptr<const StudioDocument>& doc);

}  // namespace sod2::studio
