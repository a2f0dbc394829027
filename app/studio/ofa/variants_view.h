// The studio's Dynamic-OFA view (DESIGN §8): a family's variants as a table and as points of
// latency against MACs (or accuracy) with their Pareto front; "Measure" profiles every variant on
// the device panel's device (recorded in the profile store); "Run demo" runs the family here
// under a latency budget, optionally with a competing CPU load, and draws the live timeline.
// Long work (compiling a family file, measuring, the demo) runs off the GUI thread and can be
// stopped; the *Now variants run on the calling thread for tests and --screenshot.
#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "app/studio/ofa/variants_model.h"
#include "runtime/family/family_demo.h"
#include "runtime/family/family_session.h"

class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QCheckBox;
class QPushButton;
class QTableView;

namespace sod2::studio {

class DemoTimeline;
class VariantsChart;

class VariantsView : public QWidget {
  Q_OBJECT

 public:
  explicit VariantsView(QWidget* parent = nullptr);
  ~VariantsView() override;

  // A family package or family file (compiled first, on this thread). Returns the error text.
  std::optional<QString> openFamily(const QString& path);
  // "batch=1,height=224,width=224"; symbols left out take their lowest value.
  std::optional<QString> setBindings(const QString& text);
  void setDatabase(const std::string& path) { db_path_ = path; }
  // Which device "Measure" profiles on (the device panel's choice); "local" when unset.
  void setDeviceSource(std::function<QString()> source) { device_source_ = std::move(source); }

  // On the calling thread; the error text on failure.
  std::optional<QString> measureNow(const QString& device);
  // `device`: "local" runs the family in this process; another device (adb:SERIAL) runs it on
  // the device's agent, the load too.
  std::optional<QString> runDemoNow(double budget_ms, double duration_s,
                                    std::optional<rt::LoadSchedule> load,
                                    const QString& device = QStringLiteral("local"));

  const VariantsModel* model() const { return &model_; }
  const DemoTimeline* timeline() const { return timeline_; }
  QString summaryText() const;
  bool hasFamily() const { return session_ != nullptr; }

 private:
  void browse();
  void measure();
  void toggleDemo();
  struct MeasuredLatencies {
    std::vector<double> ms;  // per row
    std::vector<QString> sources;
  };
  // Profiles every variant on `device`; safe off the GUI thread (reads the session's programs).
  std::optional<QString> measureLatencies(const QString& device, MeasuredLatencies* out);
  void adoptLatencies(const std::vector<double>& ms, const std::vector<QString>& sources);
  // Latencies the profile store has for the current bindings on "local", if every variant has one.
  void loadStoredLatencies();
  std::optional<QString> prepareInputs();
  std::optional<rt::LoadSchedule> loadSchedule(QString* error) const;
  void showDemoSummary(const rt::DemoResult& r);
  void startTimeline(double budget_ms, double duration_s, std::optional<rt::LoadSchedule> load);
  // Warm-up latencies shown until the variants are measured.
  void adoptWarmUp(const std::vector<double>& expected);
  // Sets the budget, warms up and runs the demo here or on `device`; safe off the GUI thread
  // (touches only the session or the device connection), the callbacks saying what to show.
  Expected<rt::DemoResult> runDemo(
      const QString& device, double budget_ms, double duration_s,
      std::optional<rt::LoadSchedule> load,
      const std::function<void(const std::vector<double>&)>& on_warm,
      const std::function<void(const rt::DemoPoint&, int current)>& on_point);
  void setBusy(bool busy, const QString& what);

  std::unique_ptr<rt::FamilySession> session_;
  std::shared_ptr<const std::vector<uint8_t>> package_;  // the family package's bytes
  std::string family_name_;
  std::map<std::string, int64_t> bind_;
  std::string bindings_text_;
  std::vector<rt::HostTensor> inputs_;
  std::string db_path_;
  std::function<QString()> device_source_;

  VariantsModel model_;
  VariantsChart* chart_ = nullptr;
  DemoTimeline* timeline_ = nullptr;
  QTableView* table_ = nullptr;
  QLabel* title_ = nullptr;
  QLabel* summary_ = nullptr;
  QLineEdit* bindings_ = nullptr;
  QDoubleSpinBox* budget_ = nullptr;
  QDoubleSpinBox* duration_ = nullptr;
  QCheckBox* load_on_ = nullptr;
  QLineEdit* load_ = nullptr;
  QPushButton* measure_button_ = nullptr;
  QPushButton* demo_button_ = nullptr;

  std::atomic<bool> cancel_{false};
  QFutureWatcher<QString> job_;  // "" on success, else the error text
  std::optional<rt::DemoResult> last_demo_;
};

}  // namespace sod2::studio
