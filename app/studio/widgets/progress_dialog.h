// The progress dialog of the studio's long jobs (opening a model, Export & profile): made once per
// job kind, fed from worker threads.
#pragma once

#include <QPointer>
#include <QProgressDialog>
#include <string>

namespace sod2::studio {

// Shown after `show_after_ms`; never closes or resets by itself (the job decides).
QProgressDialog* make_progress_dialog(QWidget* parent, const QString& title, int show_after_ms);

// Reports progress from a worker thread into `dialog` on the GUI thread (the dialog may be gone
// by then).
void report_progress(const QPointer<QProgressDialog>& dialog, double fraction,
                     const std::string& stage);

}  // namespace sod2::studio
