#include "app/studio/widgets/progress_dialog.h"

#include <QApplication>

namespace sod2::studio {
namespace {

// Set on a dialog whose job has ended: a report still queued must not show it again.
constexpr char kEnded[] = "sod2_job_ended";

}  // namespace

QProgressDialog* start_progress_dialog(QWidget* parent, const QString& title, const QString& label,
                                       int show_after_ms,
                                       std::shared_ptr<std::atomic<bool>> cancel) {
  auto* d = new QProgressDialog(parent);
  d->setWindowTitle(title);
  d->setLabelText(label);
  d->setRange(0, 100);
  d->setMinimumDuration(show_after_ms);
  // The job closes it (end_progress_dialog): 100% is not the end when a stage follows.
  d->setAutoClose(false);
  d->setAutoReset(false);
  // QProgressDialog's own canceled -> cancel() connection stays: Cancel hides it at once.
  QObject::connect(d, &QProgressDialog::canceled, d, [cancel] {
    if (cancel) *cancel = true;
  });
  d->setValue(0);  // starts the delay
  return d;
}

void end_progress_dialog(QProgressDialog* dialog) {
  if (!dialog) return;
  dialog->setProperty(kEnded, true);
  dialog->disconnect(dialog);  // no canceled() for a job that is over
  // reset() stops the timer that would show it after the delay; it hides only with autoClose.
  dialog->reset();
  dialog->hide();
  dialog->deleteLater();
}

void report_progress(const QPointer<QProgressDialog>& dialog, double fraction,
                     const std::string& stage) {
  QMetaObject::invokeMethod(
      qApp,
      [dialog, fraction, stage] {
        if (!dialog || dialog->property(kEnded).toBool()) return;
        dialog->setValue(static_cast<int>(fraction * 100));
        dialog->setLabelText(QString::fromStdString(stage));
      },
      Qt::QueuedConnection);
}

}  // namespace sod2::studio
