#include "app/studio/widgets/bindings_bar.h"

#include <QCheckBox>
#include <QFont>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QWidget>
#include <algorithm>
#include <limits>

namespace sod2::studio {
namespace {

// Spin boxes hold ints; symbol ranges beyond that are shown clamped.
int to_int(int64_t v) {
  return static_cast<int>(std::clamp<int64_t>(v, 0, std::numeric_limits<int>::max()));
}

int64_t step_of(const SymbolControl& s) { return std::max<int64_t>(s.multiple, 1); }

QString execution_label(const SymbolControl& s) {
  return QStringLiteral("%1 \u2264 %2 (exec)").arg(QString::fromStdString(s.name)).arg(s.hi);
}

QString execution_tip(const SymbolControl& s) {
  QString tip = QString::fromStdString(s.origin) +
                BindingsBar::tr("\nAn execution symbol: known only while running.");
  tip += s.bound.empty() ? BindingsBar::tr("\nIts op knows no bound: a report takes %1.").arg(s.hi)
                         : BindingsBar::tr("\nAt most %1 (%2 at these inputs).")
                               .arg(QString::fromStdString(s.bound))
                               .arg(s.hi);
  tip += BindingsBar::tr("\n'bound' checked: it follows its bound as the inputs move.");
  return tip;
}

}  // namespace

BindingsBar::BindingsBar(QWidget* parent) : QToolBar(tr("Bindings"), parent) {
  setObjectName("bindings");
  coalesce_.setSingleShot(true);
  coalesce_.setInterval(0);
  connect(&coalesce_, &QTimer::timeout, this, &BindingsBar::bindingChanged);
}

int64_t BindingsBar::snap(const SymbolControl& s, int64_t v) const {
  v = std::clamp(v, s.lo, std::max(s.lo, s.hi));
  if (s.multiple > 1) v = std::max(s.lo, v / s.multiple * s.multiple);
  return v;
}

BindingsBar::Control* BindingsBar::find(const std::string& name) {
  for (Control& c : controls_)
    if (c.symbol.name == name) return &c;
  return nullptr;
}

const BindingsBar::Control* BindingsBar::find(const std::string& name) const {
  for (const Control& c : controls_)
    if (c.symbol.name == name) return &c;
  return nullptr;
}

void BindingsBar::show(Control& c, int64_t v) {
  const QSignalBlocker block_spin(c.spin), block_slider(c.slider);
  const SymbolControl& s = c.symbol;
  c.slider->setRange(0, to_int((std::max(s.lo, s.hi) - s.lo) / step_of(s)));
  c.spin->setRange(to_int(s.lo), to_int(std::max(s.lo, s.hi)));
  c.spin->setValue(to_int(v));
  c.slider->setValue(to_int((v - s.lo) / step_of(s)));
  if (c.at_bound) {
    const QSignalBlocker block_box(c.at_bound);
    c.at_bound->setChecked(c.follows);
    c.label->setText(execution_label(s));
    c.label->setToolTip(execution_tip(s));
  }
}

void BindingsBar::setSymbols(const std::vector<SymbolControl>& symbols,
                             const std::map<std::string, int64_t>& values, UpperFn upper) {
  coalesce_.stop();
  for (QAction* a : actions_) {
    removeAction(a);
    delete a;
  }
  actions_.clear();
  controls_.clear();
  upper_ = std::move(upper);
  controls_.reserve(symbols.size());
  bool separated = false;
  for (const SymbolControl& s : symbols) {
    if (s.execution && !separated && !controls_.empty()) actions_.push_back(addSeparator());
    separated |= s.execution;
    auto* box = new QWidget(this);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(6, 0, 6, 0);
    Control c;
    c.symbol = s;
    c.label = new QLabel(QString::fromStdString(s.name), box);
    c.label->setToolTip(QString::fromStdString(s.origin));
    // The slider moves in steps of the multiple: position k means lo + k * multiple (snapped).
    c.slider = new QSlider(Qt::Horizontal, box);
    c.slider->setMinimumWidth(120);
    c.spin = new QSpinBox(box);
    c.spin->setSingleStep(to_int(step_of(s)));
    c.spin->setAccessibleName(QString::fromStdString(s.name));
    layout->addWidget(c.label);
    layout->addWidget(c.slider);
    layout->addWidget(c.spin);
    const auto it = values.find(s.name);
    if (s.execution) {
      QFont italic = c.label->font();
      italic.setItalic(true);
      c.label->setFont(italic);
      c.at_bound = new QCheckBox(tr("bound"), box);
      c.at_bound->setToolTip(tr("Follow the bound as the inputs move (not bound by you)"));
      c.at_bound->setAccessibleName(QString::fromStdString(s.name + " at its bound"));
      layout->addWidget(c.at_bound);
      c.follows = it == values.end();
    }
    show(c, snap(s, it != values.end() ? it->second : (s.execution ? s.hi : s.initial)));
    const size_t i = controls_.size();
    connect(c.slider, &QSlider::valueChanged, this, [this, i](int pos) {
      Control& c = controls_[i];
      const int64_t v = snap(c.symbol, c.symbol.lo + pos * step_of(c.symbol));
      if (c.spin->value() != to_int(v)) c.spin->setValue(to_int(v));
    });
    connect(c.spin, &QSpinBox::valueChanged, this, [this, i](int value) { onSpin(i, value); });
    if (c.at_bound) {
      connect(c.at_bound, &QCheckBox::toggled, this,
              [this, i](bool checked) { setFollowsBound(controls_[i].symbol.name, checked); });
    }
    actions_.push_back(addWidget(box));
    controls_.push_back(c);
  }
  reRange();
}

void BindingsBar::onSpin(size_t i, int value) {
  Control& c = controls_[i];
  const int64_t v = snap(c.symbol, value);
  if (v != value) {
    c.spin->setValue(to_int(v));  // re-enters with the snapped value
    return;
  }
  // A value set by hand binds an execution symbol explicitly.
  c.follows = false;
  show(c, v);
  reRange();
  coalesce_.start();
}

void BindingsBar::reRange() {
  if (!upper_) return;
  std::map<std::string, int64_t> current = values();
  for (Control& c : controls_) {
    if (!c.symbol.execution) continue;
    const std::optional<int64_t> hi = upper_(c.symbol.name, current);
    if (!hi) continue;
    c.symbol.hi = std::max(*hi, c.symbol.lo);
    const int64_t v = c.follows ? snap(c.symbol, c.symbol.hi) : snap(c.symbol, c.spin->value());
    show(c, v);
    // Later execution symbols may be bounded by this one (TopK's k by NonZero's count).
    if (!c.follows) current[c.symbol.name] = v;
  }
}

std::map<std::string, int64_t> BindingsBar::values() const {
  std::map<std::string, int64_t> v;
  for (const Control& c : controls_)
    if (!c.follows) v[c.symbol.name] = c.spin->value();
  return v;
}

void BindingsBar::setValue(const std::string& name, int64_t value) {
  Control* c = find(name);
  if (!c) return;
  const int v = to_int(snap(c->symbol, value));
  if (c->spin->value() != v) {
    c->spin->setValue(v);  // onSpin: an execution symbol becomes explicit
  } else if (c->follows) {
    c->follows = false;
    show(*c, v);
    coalesce_.start();
  }
}

void BindingsBar::setValues(const std::map<std::string, int64_t>& values) {
  // Inputs first: they set the bounds the execution symbols' values are checked against.
  for (const bool execution : {false, true}) {
    for (size_t i = 0; i < controls_.size(); ++i) {
      const SymbolControl& s = controls_[i].symbol;
      if (s.execution != execution) continue;
      const auto it = values.find(s.name);
      if (it != values.end())
        setValue(s.name, it->second);
      else if (execution)
        setFollowsBound(s.name, true);
    }
  }
}

void BindingsBar::setFollowsBound(const std::string& name, bool follows) {
  Control* c = find(name);
  if (!c || !c->symbol.execution || c->follows == follows) return;
  c->follows = follows;
  show(*c, follows ? snap(c->symbol, c->symbol.hi) : c->spin->value());
  reRange();
  coalesce_.start();
}

bool BindingsBar::followsBound(const std::string& name) const {
  const Control* c = find(name);
  return c && c->follows;
}

int64_t BindingsBar::maximum(const std::string& name) const {
  const Control* c = find(name);
  return c ? std::max(c->symbol.lo, c->symbol.hi) : -1;
}

int64_t BindingsBar::value(const std::string& name) const {
  const Control* c = find(name);
  return c ? c->spin->value() : -1;
}

namespace {
template <typename Document>
BindingsBar::UpperFn upper_of(const std::shared_ptr<const Document>& doc) {
  return [weak = std::weak_ptr<const Document>(doc)](
             const std::string& name,
             const std::map<std::string, int64_t>& values) -> std::optional<int64_t> {
    const auto d = weak.lock();
    if (!d) return std::nullopt;
    auto upper = d->execution_upper(name, values);
    return upper.ok() ? std::optional<int64_t>(*upper) : std::nullopt;
  };
}
}  // namespace

BindingsBar::UpperFn execution_upper_of(const std::shared_ptr<const StudioDocument>& doc) {
  return upper_of(doc);
}

BindingsBar::UpperFn execution_upper_of(const std::shared_ptr<const OpenDocument>& doc) {
  return upper_of(doc);
}

}  // namespace sod2::studio
