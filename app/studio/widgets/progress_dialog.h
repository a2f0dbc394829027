// The progress dialog of one long job of the studio (opening a model, Export & profile): made
// when the job starts, fed from its worker thread, closed and deleted when the job ends.
//
// QProgressDialog shows itself from a timer that setValue(0) starts and hide() does not stop: a
// job that ended before the dialog's delay got, after its end, a dialog at 100% that nothing
// closed ("Opening - preparing the views", issue #23). A dialog kept across jobs also remembered
// it had been shown and never showed again. Hence one dialog per job, ended by
// end_progress_dialog.
#pragma once

#include <QPointer>
#include <QProgressDialog>
#include <atomic>
#include <memory>
#include <string>

namespace sod2::studio {

// Shows after `show_after_ms` unless ended first. Cancel (or Escape) sets `cancel` and hides the
// dialog; the job sees the flag and ends (as cancelled) soon after.
QProgressDialog* start_progress_dialog(QWidget* parent, const QString& title, const QString& label,
                                       int show_after_ms,
                                       std::shared_ptr<std::atomic<bool>> cancel);

// Closes the dialog of a job that has ended, however it ended (done, failed, cancelled), and
// deletes it later; reports still queued for it are dropped. Null: nothing.
void end_progress_dialog(QProgressDialog* dialog);

// Reports progress from a worker thread into `dialog` on the GUI thread (the dialog may have
// ended by then).
void report_progress(const QPointer<QProgressDialog>& dialog, double fraction,
                     const std::string& stage);

}  // namespace sod2::studio
