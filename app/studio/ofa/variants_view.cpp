#include "app/studio/ofa/variants_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrent>
#include <thread>

#include "app/ofa/family_profile.h"
#include "app/ofa/family_source.h"
#include "app/ofa/remote_family.h"
#include "app/ofa/variant_latencies.h"
#include "app/profiling/run_inputs.h"
#include "app/studio/ofa/demo_timeline.h"
#include "app/studio/ofa/variants_chart.h"
#include "core/rdp/symbol_text.h"
#include "core/store/profile_store.h"
#include "runtime/kernels/kernel_registry.h"

namespace sod2::studio {

VariantsView::VariantsView(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  auto* open = new QPushButton(tr("Open family…"), this);
  title_ = new QLabel(tr("No family open"), this);
  bindings_ = new QLineEdit(this);
  bindings_->setPlaceholderText(tr("bindings, e.g. batch=1,height=224,width=224"));
  top->addWidget(open);
  top->addWidget(title_, 1);
  top->addWidget(new QLabel(tr("Inputs:"), this));
  top->addWidget(bindings_, 1);
  layout->addLayout(top);

  auto* controls = new QHBoxLayout;
  budget_ = new QDoubleSpinBox(this);
  budget_->setRange(0.1, 100000);
  budget_->setDecimals(1);
  budget_->setValue(10);
  budget_->setSuffix(tr(" ms"));
  duration_ = new QDoubleSpinBox(this);
  duration_->setRange(0.1, 3600);
  duration_->setDecimals(1);
  duration_->setValue(10);
  duration_->setSuffix(tr(" s"));
  load_on_ = new QCheckBox(tr("CPU load"), this);
  load_ = new QLineEdit(QStringLiteral("3:7"), this);
  load_->setToolTip(tr("T0:T1[:THREADS]: busy processes from T0 to T1 seconds into the demo"));
  load_->setMaximumWidth(90);
  measure_button_ = new QPushButton(tr("Measure variants"), this);
  measure_button_->setToolTip(tr("Profile every variant on the device chosen in the Devices dock"));
  demo_button_ = new QPushButton(tr("Run demo"), this);
  demo_button_->setToolTip(
      tr("Run the family under the budget on the device chosen in the Devices dock (this "
         "machine when none is), with the CPU load when checked"));
  controls->addWidget(new QLabel(tr("Budget"), this));
  controls->addWidget(budget_);
  controls->addWidget(new QLabel(tr("for"), this));
  controls->addWidget(duration_);
  controls->addWidget(load_on_);
  controls->addWidget(load_);
  controls->addStretch(1);
  controls->addWidget(measure_button_);
  controls->addWidget(demo_button_);
  layout->addLayout(controls);

  auto* split = new QSplitter(Qt::Vertical, this);
  auto* upper = new QSplitter(Qt::Horizontal, split);
  chart_ = new VariantsChart(&model_, upper);
  table_ = new QTableView(upper);
  table_->setModel(&model_);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  timeline_ = new DemoTimeline(split);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  layout->addWidget(split, 1);
  summary_ = new QLabel(this);
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(summary_);

  connect(open, &QPushButton::clicked, this, &VariantsView::browse);
  connect(measure_button_, &QPushButton::clicked, this, &VariantsView::measure);
  connect(demo_button_, &QPushButton::clicked, this, &VariantsView::toggleDemo);
  connect(budget_, &QDoubleSpinBox::valueChanged, chart_, &VariantsChart::setBudget);
  connect(bindings_, &QLineEdit::editingFinished, this, [this] {
    if (auto err = setBindings(bindings_->text())) summary_->setText(*err);
  });
  connect(&job_, &QFutureWatcher<QString>::finished, this, [this] {
    const QString err = job_.result();
    setBusy(false, {});
    if (!err.isEmpty()) summary_->setText(err);
  });
  chart_->setBudget(budget_->value());
  setBusy(false, {});
}

VariantsView::~VariantsView() {
  cancel_ = true;
  job_.waitForFinished();
}

void VariantsView::setBusy(bool busy, const QString& what) {
  measure_button_->setEnabled(!busy && session_);
  demo_button_->setEnabled(session_ != nullptr);
  demo_button_->setText(busy && what == "demo" ? tr("Stop") : tr("Run demo"));
  if (busy && what != "demo") demo_button_->setEnabled(false);
}

void VariantsView::browse() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open a family"), QString(),
                                   tr("Families (*.sod2 variants.json *.json);;All files (*)"));
  if (path.isEmpty()) return;
  QApplication::setOverrideCursor(Qt::WaitCursor);
  const auto err = openFamily(path);
  QApplication::restoreOverrideCursor();
  if (err) summary_->setText(*err);
}

std::optional<QString> VariantsView::openFamily(const QString& path) {
  if (job_.isRunning()) return tr("Stop the running job first");
  // The bytes are kept: a demo on a device sends them to its agent.
  auto bytes = ofa::family_package_bytes(path.toStdString(), {}, {});
  if (!bytes.ok()) return QString::fromStdString(bytes.status().message());
  Expected<rt::FamilyProgram> family = rt::load_family_package(**bytes, *bytes);
  if (!family.ok())
    return QString::fromStdString(family.status().with_context(path.toStdString()).message());
  package_ = *bytes;
  family_name_ = family->name;
  rt::FamilySessionOptions options;
  auto session =
      rt::FamilySession::create(std::move(*family), rt::KernelRegistry::standard(), options);
  if (!session.ok()) return QString::fromStdString(session.status().message());
  session_ = std::move(*session);
  std::vector<VariantRow> rows;
  for (int i = 0; i < session_->variants(); ++i) {
    const rt::VariantDesc& v = session_->variant(i);
    VariantRow r;
    r.name = QString::fromStdString(v.name);
    r.macs = v.macs;
    r.params = v.params;
    r.has_accuracy = v.has_accuracy;
    r.accuracy = v.accuracy;
    rows.push_back(r);
  }
  model_.setVariants(std::move(rows));
  const rt::FamilyLoadStats& st = session_->load_stats();
  title_->setText(tr("<b>%1</b>: %2 variants, %3 weights stored, %4 views")
                      .arg(QString::fromStdString(family_name_))
                      .arg(session_->variants())
                      .arg(st.stored)
                      .arg(st.views_in_place + st.views_built));
  timeline_->start(1, 0, std::nullopt, {});
  last_demo_.reset();
  setBusy(false, {});
  return setBindings(bindings_->text());
}

std::optional<QString> VariantsView::setBindings(const QString& text) {
  auto bind = parse_bindings(text.trimmed().toStdString());
  if (!bind.ok()) return QString::fromStdString(bind.status().message());
  bind_ = *bind;
  bindings_->setText(text.trimmed());
  if (!session_) return std::nullopt;
  if (auto err = prepareInputs()) return err;
  loadStoredLatencies();
  return std::nullopt;
}

std::optional<QString> VariantsView::prepareInputs() {
  std::map<std::string, int64_t> bind = bind_;
  auto inputs = ofa::family_inputs(session_->family(), &bind);
  if (!inputs.ok()) return QString::fromStdString(inputs.status().message());
  inputs_ = std::move(*inputs);
  bind_ = bind;
  bindings_text_ = profiling::bindings_text(bind);
  bindings_->setText(QString::fromStdString(bindings_text_));
  return std::nullopt;
}

void VariantsView::loadStoredLatencies() {
  const std::string db = db_path_.empty() ? store::ProfileStore::default_path() : db_path_;
  auto stored = ofa::stored_latencies(db, session_->family(), "local", bindings_text_);
  if (!stored.ok() || !*stored) return;
  // Stored latencies are in the package's order; rows are small to large.
  std::vector<std::string> rows;
  for (int i = 0; i < session_->variants(); ++i) rows.push_back(session_->variant(i).name);
  const ofa::StoredLatencies in_rows = (*stored)->reordered(rows);
  std::vector<QString> sources;
  for (int64_t id : in_rows.run_ids) sources.push_back(tr("profile #%1").arg(id));
  adoptLatencies(in_rows.expected_ms, sources);
}

void VariantsView::adoptLatencies(const std::vector<double>& ms,
                                  const std::vector<QString>& sources) {
  model_.setLatencies(ms, sources);
}

std::optional<QString> VariantsView::measureLatencies(const QString& device,
                                                      MeasuredLatencies* out) {
  if (!session_) return tr("Open a family first");
  profiling::ProfileRequest req;
  req.device = device.toStdString();
  req.bind = bind_;
  req.settings.runs = 10;
  req.settings.warmup = 2;
  req.db_path = db_path_.empty() ? std::optional<std::string>() : db_path_;
  profiling::ProfileProgress progress;
  progress.cancel = &cancel_;
  auto profiles = ofa::profile_family(session_->family(), req, progress);
  if (!profiles.ok()) return QString::fromStdString(profiles.status().message());
  out->ms.assign(static_cast<size_t>(session_->variants()), std::nan(""));
  out->sources.assign(out->ms.size(), QString());
  for (const ofa::VariantProfile& p : *profiles) {
    for (int i = 0; i < session_->variants(); ++i) {
      if (session_->variant(i).name != p.name) continue;
      out->ms[static_cast<size_t>(i)] = p.result.stats.avg_ms;
      out->sources[static_cast<size_t>(i)] =
          p.result.run_id ? tr("profile #%1").arg(p.result.run_id) : tr("profile");
    }
  }
  return std::nullopt;
}

std::optional<QString> VariantsView::measureNow(const QString& device) {
  MeasuredLatencies m;
  if (auto err = measureLatencies(device, &m)) return err;
  adoptLatencies(m.ms, m.sources);
  return std::nullopt;
}

void VariantsView::measure() {
  if (!session_ || job_.isRunning()) return;
  const QString device = device_source_ ? device_source_() : QStringLiteral("local");
  cancel_ = false;
  setBusy(true, "measure");
  summary_->setText(tr("Measuring every variant on %1…").arg(device));
  // The job only reads the session's programs; the results are adopted on the GUI thread.
  job_.setFuture(QtConcurrent::run([this, device] {
    auto m = std::make_shared<MeasuredLatencies>();
    if (auto err = measureLatencies(device, m.get())) return *err;
    QMetaObject::invokeMethod(this, [this, m, device] {
      adoptLatencies(m->ms, m->sources);
      summary_->setText(tr("Measured on %1 and recorded in the profile store.").arg(device));
    });
    return QString();
  }));
}

std::optional<rt::LoadSchedule> VariantsView::loadSchedule(QString* error) const {
  if (!load_on_->isChecked()) return std::nullopt;
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto s = rt::parse_load_schedule(load_->text().toStdString(), cores);
  if (!s.ok()) {
    *error = QString::fromStdString(s.status().message());
    return std::nullopt;
  }
  return *s;
}

QString VariantsView::summaryText() const { return summary_->text(); }

void VariantsView::showDemoSummary(const rt::DemoResult& r) {
  const rt::DemoSummary& s = r.summary;
  model_.setDemoRuns(s.runs_per_variant);
  QString text =
      tr("%1 runs, %2% within budget").arg(s.runs).arg(100 * s.fraction_within(), 0, 'f', 1);
  if (s.runs_under_load) {
    text += tr(" (%1% under load)").arg(100 * s.fraction_within_under_load(), 0, 'f', 1);
  }
  text += tr(", %1 switches, mean %2 MMACs, p90 %3 ms")
              .arg(s.switches)
              .arg(s.mean_macs / 1e6, 0, 'f', 1)
              .arg(s.p90_ms, 0, 'f', 2);
  if (r.cancelled) text += tr(" — stopped");
  summary_->setText(text);
}

void VariantsView::startTimeline(double budget_ms, double duration_s,
                                 std::optional<rt::LoadSchedule> load) {
  QStringList names;
  for (int i = 0; i < session_->variants(); ++i)
    names << QString::fromStdString(session_->variant(i).name);
  timeline_->start(duration_s, budget_ms, load, names);
  chart_->setBudget(budget_ms);
}

void VariantsView::adoptWarmUp(const std::vector<double>& expected) {
  if (!model_.rows().empty() && std::isnan(model_.rows().front().latency_ms))
    adoptLatencies(expected, std::vector<QString>(expected.size(), tr("warm-up")));
}

Expected<rt::DemoResult> VariantsView::runDemo(
    const QString& device, double budget_ms, double duration_s,
    std::optional<rt::LoadSchedule> load,
    const std::function<void(const std::vector<double>&)>& on_warm,
    const std::function<void(const rt::DemoPoint&, int current)>& on_point) {
  if (device != QStringLiteral("local")) {
    // On the device: its agent warms up, runs the manager (and the load) and streams the runs.
    SOD2_ASSIGN_OR_RETURN(auto remote,
                          ofa::RemoteFamily::start(device.toStdString(), package_, &cancel_, {}));
    device::FamilyRunSettings fs;
    fs.budget_ms = budget_ms;
    fs.duration_s = duration_s;
    fs.load = load;
    // The device says which variant each run used, not the next one's: the table follows runs.
    SOD2_ASSIGN_OR_RETURN(device::FamilyRunReport report,
                          remote->run(
                              inputs_, fs, [&](const rt::DemoPoint& p) { on_point(p, p.variant); },
                              [&](const device::FamilyRunReport& r) { on_warm(r.expected_ms); }));
    rt::DemoResult result;
    result.points = std::move(report.points);
    std::vector<uint64_t> macs;
    for (const device::FamilyVariantInfo& v : remote->variants()) macs.push_back(v.macs);
    result.summary = rt::summarize(macs, result.points);
    result.cancelled = cancel_;
    return result;
  }
  SOD2_RETURN_IF_ERROR(session_->set_budget(budget_ms));
  std::vector<rt::Tensor> views;
  for (const rt::HostTensor& h : inputs_) views.push_back(h.view());
  SOD2_RETURN_IF_ERROR(session_->warm_up(views, 3));
  on_warm(session_->expected_ms());
  rt::DemoOptions demo;
  demo.duration_s = duration_s;
  demo.load = load;
  demo.cancel = &cancel_;
  return rt::run_demo(*session_, views, demo,
                      [&](const rt::DemoPoint& p) { on_point(p, session_->current()); });
}

std::optional<QString> VariantsView::runDemoNow(double budget_ms, double duration_s,
                                                std::optional<rt::LoadSchedule> load,
                                                const QString& device) {
  if (!session_) return tr("Open a family first");
  budget_->setValue(budget_ms);
  duration_->setValue(duration_s);
  load_on_->setChecked(load.has_value());
  if (load)
    load_->setText(
        QStringLiteral("%1:%2:%3").arg(load->start_s).arg(load->stop_s).arg(load->threads));
  startTimeline(budget_ms, duration_s, load);
  cancel_ = false;
  auto result = runDemo(
      device, budget_ms, duration_s, load, [this](const std::vector<double>& e) { adoptWarmUp(e); },
      [this](const rt::DemoPoint& p, int current) {
        timeline_->add(p);
        model_.setCurrent(current);
      });
  if (!result.ok()) return QString::fromStdString(result.status().message());
  showDemoSummary(*result);
  last_demo_ = std::move(*result);
  return std::nullopt;
}

void VariantsView::toggleDemo() {
  if (job_.isRunning()) {
    cancel_ = true;
    return;
  }
  if (!session_) return;
  QString error;
  const auto load = loadSchedule(&error);
  if (!error.isEmpty()) {
    summary_->setText(error);
    return;
  }
  const double budget = budget_->value(), duration = duration_->value();
  const QString device = device_source_ ? device_source_() : QStringLiteral("local");
  cancel_ = false;
  setBusy(true, "demo");
  summary_->setText(
      tr("Running on %1 for %2 s with a budget of %3 ms…").arg(device).arg(duration).arg(budget));
  startTimeline(budget, duration, load);
  // The session (or the device connection) works on the worker; the GUI sees what it is sent.
  job_.setFuture(QtConcurrent::run([this, device, budget, duration, load] {
    auto result = runDemo(
        device, budget, duration, load,
        [this](const std::vector<double>& e) {
          QMetaObject::invokeMethod(this, [this, e] { adoptWarmUp(e); });
        },
        [this](const rt::DemoPoint& p, int current) {
          QMetaObject::invokeMethod(this, [this, p, current] {
            timeline_->add(p);
            model_.setCurrent(current);
          });
        });
    if (!result.ok()) return QString::fromStdString(result.status().message());
    auto shared = std::make_shared<rt::DemoResult>(std::move(*result));
    QMetaObject::invokeMethod(this, [this, shared] {
      showDemoSummary(*shared);
      last_demo_ = std::move(*shared);
    });
    return QString();
  }));
}

}  // namespace sod2::studio
