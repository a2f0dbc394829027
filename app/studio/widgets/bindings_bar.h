// One slider and spin box per input symbol, within its range and on its multiple (DESIGN §8:
// "every view re-instantiates live"). Changes are coalesced: dragging a slider emits at most one
// bindingChanged per event-loop turn.
#pragma once

#include <QTimer>
#include <QToolBar>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/studio/document/studio_document.h"

class QSlider;
class QSpinBox;

namespace sod2::studio {

class BindingsBar : public QToolBar {
  Q_OBJECT

 public:
  explicit BindingsBar(QWidget* parent = nullptr);

  // Rebuilds the controls for a newly opened document's symbols, at `values`.
  void setSymbols(const std::vector<SymbolControl>& symbols,
                  const std::map<std::string, int64_t>& values);
  std::map<std::string, int64_t> values() const;
  // Sets one symbol (clamped and snapped to its multiple); emits bindingChanged.
  void setValue(const std::string& name, int64_t value);

 signals:
  void bindingChanged();

 private:
  struct Control {
    SymbolControl symbol;
    QSlider* slider = nullptr;
    QSpinBox* spin = nullptr;
  };
  int64_t snap(const SymbolControl& s, int64_t v) const;
  std::vector<Control> controls_;
  std::vector<QAction*> actions_;
  QTimer coalesce_;
};

}  // namespace sod2::studio
