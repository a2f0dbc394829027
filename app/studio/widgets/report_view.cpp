#include "app/studio/widgets/report_view.h"

#include <QFontDatabase>

namespace sod2::studio {

ReportView::ReportView(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
}

}  // namespace sod2::studio
