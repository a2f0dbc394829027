// A read-only monospace text view for the studio's reports (inspector, summary): their lines
// line up in columns and are not wrapped.
#pragma once

#include <QPlainTextEdit>

namespace sod2::studio {

class ReportView : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit ReportView(QWidget* parent = nullptr);
};

}  // namespace sod2::studio
