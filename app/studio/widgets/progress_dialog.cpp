#include "app/studio/widgets/progress_dialog.h"

#include <QApplication>

namespace sod2::studio {

QProgressDialog* make_progress_dialog(QWidget* parent, const QString& title, int show_after_ms) {
  auto* d = new QProgressDialog(parent);
  d->setWindowTitle(title);
  d->setRange(0, 100);
  d->setMinimumDuration(show_after_ms);
  d->setAutoClose(false);
  d->setAutoReset(false);
  return d;
}

void report_progress(const QPointer<QProgressDialog>& dialog, double fraction,
                     const std::string& stage) {
  QMetaObject::invokeMethod(
      qApp,
      [dialog, fraction, stage] {
        if (!dialog) return;
        dialog->setValue(static_cast<int>(fraction * 100));
        dialog->setLabelText(QString::fromStdString(stage));
      },
      Qt::QueuedConnection);
}

}  // namespace sod2::studio
