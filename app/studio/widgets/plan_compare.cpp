#include "app/studio/widgets/plan_compare.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/studio/plan/timeline_view.h"
#include "app/studio/widgets/bindings_bar.h"
#include "app/studio/widgets/on_screen.h"

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString binding_text(const sym::Binding& b, const std::vector<SymbolControl>& symbols) {
  QStringList parts;
  for (const SymbolControl& c : symbols)
    for (const auto& [symbol, value] : b)
      if (symbol.name() == c.name) parts << qs(c.name) + "=" + QString::number(value);
  return parts.join(", ");
}

QString caption(const QString& what, const TimelineModel* m) {
  if (!m) return what;
  return QObject::tr("%1: arena %2, lower bound %3, %4 steps")
      .arg(what, qs(human_bytes(m->arena_bytes())), qs(human_bytes(m->lower_bound_bytes())))
      .arg(m->num_steps());
}

}  // namespace

PlanCompare::PlanCompare(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* top = new QHBoxLayout();
  mode_box_ = new QComboBox(this);
  mode_box_->addItem(tr("Same plan at another binding"));
  mode_box_->addItem(tr("Plan without fusion, same binding"));
  top->addWidget(new QLabel(tr("Right:"), this));
  top->addWidget(mode_box_);
  other_bar_ = new BindingsBar(this);
  top->addWidget(other_bar_, 1);
  layout->addLayout(top);

  auto* split = new QSplitter(Qt::Horizontal, this);
  auto column = [&](QLabel*& caption_label, TimelineView*& view) {
    auto* box = new QWidget(split);
    auto* v = new QVBoxLayout(box);
    v->setContentsMargins(0, 0, 0, 0);
    caption_label = new QLabel(box);
    caption_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Wrapped: unwrapped, two long captions side by side made the dock, and with it the whole
    // window, at least 1774 px wide on a model with two symbols.
    caption_label->setWordWrap(true);
    view = new TimelineView(box);
    v->addWidget(caption_label);
    v->addWidget(view, 1);
    split->addWidget(box);
  };
  column(left_caption_, left_);
  column(right_caption_, right_);
  layout->addWidget(split, 1);

  connect(&unfused_watcher_, &QFutureWatcher<Unfused>::finished, this,
          [this] { adoptUnfused(unfused_watcher_.result()); });
  connect(mode_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setMode(index == 0 ? Mode::kOtherBinding : Mode::kWithoutFusion); });
  connect(other_bar_, &BindingsBar::bindingChanged, this,
          [this] { setOtherBinding(other_bar_->values()); });
}

PlanCompare::~PlanCompare() { unfused_watcher_.waitForFinished(); }

void PlanCompare::finishPlanning() {
  if (!unfused_watcher_.isRunning()) return;
  unfused_watcher_.waitForFinished();
  // The finished signal is queued: adopt now, so the caller sees the plan on return.
  adoptUnfused(unfused_watcher_.result());
}

void PlanCompare::adoptUnfused(const Unfused& r) {
  if (r.doc != doc_ || unfused_plan_) return;  // another document since, or adopted already
  unfused_plan_ = r.plan;
  unfused_error_ = r.error;
  if (mode_ == Mode::kWithoutFusion) refreshRight();
}

void PlanCompare::setDocument(std::shared_ptr<const StudioDocument> doc,
                              const TimelineModel* current, const sym::Binding& binding) {
  right_->setModel(nullptr);
  right_model_.reset();
  // A plan still being made for the previous document is dropped when it arrives.
  unfused_plan_.reset();
  unfused_error_.clear();
  doc_ = std::move(doc);
  // The right side starts at the input symbols' lower bounds (the other end of what the model
  // serves), its execution symbols at their bound there.
  other_values_.clear();
  if (doc_)
    for (const SymbolControl& c : doc_->symbols())
      if (!c.execution) other_values_[c.name] = c.lo;
  {
    const QSignalBlocker block(other_bar_);
    other_bar_->setSymbols(doc_ ? doc_->symbols() : std::vector<SymbolControl>{}, other_values_,
                           doc_ ? execution_upper_of(doc_) : BindingsBar::UpperFn{});
  }
  setCurrent(current, binding);
}

void PlanCompare::setCurrent(const TimelineModel* current, const sym::Binding& binding) {
  current_ = current;
  binding_ = binding;
  left_->setModel(current_);
  // The other binding's plan does not move with the main binding: only the scale and captions.
  if (mode_ == Mode::kWithoutFusion || !right_model_) {
    refreshRight();
  } else {
    shareScale();
    refreshCaptions();
  }
}

void PlanCompare::setMode(Mode mode) {
  mode_ = mode;
  {
    const QSignalBlocker block(mode_box_);
    mode_box_->setCurrentIndex(mode == Mode::kOtherBinding ? 0 : 1);
  }
  other_bar_->setEnabled(mode == Mode::kOtherBinding);
  refreshRight();
}

bool PlanCompare::setOtherBinding(const std::map<std::string, int64_t>& values, QString* error) {
  if (!doc_) return false;
  auto b = doc_->binding(values);
  if (!b.ok()) {
    right_error_ = qs(b.status().message());
    if (error) *error = right_error_;
    refreshCaptions();
    return false;
  }
  other_values_ = values;
  {
    const QSignalBlocker block(other_bar_);
    other_bar_->setValues(values);  // execution symbols absent from `values` follow their bound
  }
  refreshRight();
  if (error && !right_error_.isEmpty()) *error = right_error_;
  return right_error_.isEmpty();
}

const TimelineModel* PlanCompare::rightModel() {
  if (right_stale_) refreshRight(/*now=*/true);
  // Without fusion: the plan is on its way; its arrival asks for the model again.
  if (unfused_watcher_.isRunning()) finishPlanning();
  if (right_stale_) refreshRight(/*now=*/true);
  return right_model_.get();
}

void PlanCompare::showEvent(QShowEvent* e) {
  QWidget::showEvent(e);
  refreshIfStale();
}

void PlanCompare::refreshIfStale() {
  if (right_stale_ && on_screen(*this)) refreshRight();
}

void PlanCompare::refreshRight(bool now) {
  right_->setModel(nullptr);
  right_model_.reset();
  right_error_.clear();
  right_stale_ = false;
  if (!doc_) {
    refreshCaptions();
    return;
  }
  if (!now && !on_screen(*this)) {
    right_stale_ = true;
    refreshCaptions();
    return;
  }
  const opt::MemoryPlan* plan = &doc_->plan();
  sym::Binding binding = binding_;
  if (mode_ == Mode::kWithoutFusion) {
    if (!unfused_plan_ && unfused_error_.isEmpty()) {
      if (!unfused_watcher_.isRunning()) {
        auto doc = doc_;
        unfused_watcher_.setFuture(QtConcurrent::run([doc] {
          Unfused r{doc, nullptr, QString()};
          auto plan = doc->plan_without_fusion();
          if (plan.ok())
            r.plan = std::shared_ptr<opt::MemoryPlan>(std::move(*plan));
          else
            r.error = qs(plan.status().message());
          return r;
        }));
      }
      right_error_ = tr("planning without fusion...");
      refreshCaptions();
      return;
    }
    if (!unfused_plan_) {
      right_error_ = unfused_error_;
      refreshCaptions();
      return;
    }
    plan = unfused_plan_.get();
  } else {
    auto b = doc_->binding(other_values_);
    if (!b.ok()) {
      right_error_ = qs(b.status().message());
      refreshCaptions();
      return;
    }
    binding = std::move(*b);
  }
  auto at = doc_->instantiate(*plan, binding);
  if (!at.ok()) {
    right_error_ = qs(at.status().message());
    refreshCaptions();
    return;
  }
  auto model = TimelineModel::build(doc_->model(), doc_->rdp(), *plan, *at);
  if (!model.ok()) {
    right_error_ = qs(model.status().message());
    refreshCaptions();
    return;
  }
  right_model_ = std::make_unique<TimelineModel>(std::move(*model));
  right_->setModel(right_model_.get());
  shareScale();
  refreshCaptions();
}

void PlanCompare::shareScale() {
  int64_t bytes = 0;
  for (const TimelineModel* m : {current_, static_cast<const TimelineModel*>(right_model_.get())})
    if (m) bytes = std::max({bytes, m->arena_bytes(), m->peak_live_bytes()});
  left_->setFitBytes(bytes);
  right_->setFitBytes(bytes);
}

QString PlanCompare::rightCaption() {
  if (right_stale_) refreshRight(/*now=*/true);
  return right_caption_->text();
}

void PlanCompare::refreshCaptions() {
  const std::vector<SymbolControl> none;
  const auto& symbols = doc_ ? doc_->symbols() : none;
  left_caption_->setText(
      caption(tr("Left: the plan at %1").arg(binding_text(binding_, symbols)), current_));
  if (!right_error_.isEmpty()) {
    right_caption_->setText(tr("Right: %1").arg(right_error_));
  } else if (mode_ == Mode::kWithoutFusion) {
    right_caption_->setText(caption(tr("Right: without fusion"), right_model_.get()));
  } else {
    sym::Binding shown;
    if (doc_)
      if (auto b = doc_->binding(other_values_); b.ok()) shown = std::move(*b);
    right_caption_->setText(
        caption(tr("Right: the plan at %1").arg(binding_text(shown, symbols)), right_model_.get()));
  }
}

void PlanCompare::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                  const std::shared_ptr<const BoundDocument>& bound,
                                  const TimelineModel* timeline) {
  // It compares plans of a model (RDP's facts): a package has none to offer.
  setDocument(doc ? doc->model() : nullptr, timeline, bound ? bound->binding() : sym::Binding{});
}

void PlanCompare::bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                                 const TimelineModel* timeline) {
  setCurrent(timeline, bound->binding());
}

}  // namespace sod2::studio
