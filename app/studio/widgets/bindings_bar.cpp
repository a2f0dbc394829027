#include "app/studio/widgets/bindings_bar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QWidget>
#include <algorithm>

namespace sod2::studio {
namespace {

// Spin boxes hold ints; symbol ranges beyond that are shown clamped.
int to_int(int64_t v) {
  return static_cast<int>(std::clamp<int64_t>(v, 0, std::numeric_limits<int>::max()));
}

}  // namespace

BindingsBar::BindingsBar(QWidget* parent) : QToolBar(tr("Bindings"), parent) {
  setObjectName("bindings");
  coalesce_.setSingleShot(true);
  coalesce_.setInterval(0);
  connect(&coalesce_, &QTimer::timeout, this, &BindingsBar::bindingChanged);
}

int64_t BindingsBar::snap(const SymbolControl& s, int64_t v) const {
  v = std::clamp(v, s.lo, s.hi);
  if (s.multiple > 1) v = std::max(s.lo, v / s.multiple * s.multiple);
  return v;
}

void BindingsBar::setSymbols(const std::vector<SymbolControl>& symbols,
                             const std::map<std::string, int64_t>& values) {
  for (QAction* a : actions_) {
    removeAction(a);
    delete a;
  }
  actions_.clear();
  controls_.clear();
  for (const SymbolControl& s : symbols) {
    auto* box = new QWidget(this);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(6, 0, 6, 0);
    auto* label = new QLabel(QString::fromStdString(s.name), box);
    label->setToolTip(QString::fromStdString(s.origin));
    Control c;
    c.symbol = s;
    // The slider moves in steps of the multiple: position k means lo + k * multiple (snapped).
    const int64_t step = std::max<int64_t>(s.multiple, 1);
    c.slider = new QSlider(Qt::Horizontal, box);
    c.slider->setRange(0, to_int((s.hi - s.lo) / step));
    c.slider->setMinimumWidth(120);
    c.spin = new QSpinBox(box);
    c.spin->setRange(to_int(s.lo), to_int(s.hi));
    c.spin->setSingleStep(to_int(step));
    c.spin->setAccessibleName(QString::fromStdString(s.name));
    layout->addWidget(label);
    layout->addWidget(c.slider);
    layout->addWidget(c.spin);
    const auto it = values.find(s.name);
    const int64_t v = snap(s, it != values.end() ? it->second : s.initial);
    c.spin->setValue(to_int(v));
    c.slider->setValue(to_int((v - s.lo) / step));
    QSlider* slider = c.slider;
    QSpinBox* spin = c.spin;
    connect(slider, &QSlider::valueChanged, this, [this, s, spin, step](int pos) {
      const int64_t v = snap(s, s.lo + pos * step);
      if (spin->value() != to_int(v)) spin->setValue(to_int(v));
    });
    connect(spin, &QSpinBox::valueChanged, this, [this, s, slider, spin, step](int value) {
      const int64_t v = snap(s, value);
      if (v != value) {
        spin->setValue(to_int(v));  // re-enters with the snapped value
        return;
      }
      const QSignalBlocker block(slider);
      slider->setValue(to_int((v - s.lo) / step));
      coalesce_.start();
    });
    actions_.push_back(addWidget(box));
    controls_.push_back(c);
  }
}

std::map<std::string, int64_t> BindingsBar::values() const {
  std::map<std::string, int64_t> v;
  for (const Control& c : controls_) v[c.symbol.name] = c.spin->value();
  return v;
}

void BindingsBar::setValue(const std::string& name, int64_t value) {
  for (Control& c : controls_)
    if (c.symbol.name == name) c.spin->setValue(to_int(snap(c.symbol, value)));
}

}  // namespace sod2::studio
