#include "app/studio/widgets/find_bar.h"

#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <set>
#include <utility>

#include "app/studio/graph/graph_view.h"

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// The main graph, which group boxes' member ids and edges' values index: the graph of any op
// drawn outside an expanded body. Null when every node sits in a collapsed box.
const Graph* main_graph_of(const DisplayGraph& graph) {
  for (const DisplayNode& n : graph.nodes)
    if (n.kind == DisplayNodeKind::kOp && n.graph && !n.body_of) return n.graph;
  return nullptr;
}

// The rows are short enough to scan: about six, then the list scrolls.
constexpr int kResultRowsShown = 6;

}  // namespace

const char* find_match_kind_name(FindMatchKind kind) {
  switch (kind) {
    case FindMatchKind::kNode: return "node";
    case FindMatchKind::kOp: return "op";
    case FindMatchKind::kTensor: return "tensor";
    case FindMatchKind::kShape: return "shape";
  }
  return "node";
}

GraphFindIndex::GraphFindIndex(const DisplayGraph& graph) {
  const Graph* main = main_graph_of(graph);
  std::set<std::pair<int, QString>> seen;  // (node, kind and text): a value read twice is one row
  auto add = [&](int node, FindMatchKind kind, const std::string& text) {
    if (node < 0 || text.empty()) return;
    QString t = qs(text);
    if (!seen.emplace(node, QString::number(static_cast<int>(kind)) + t).second) return;
    entries_.push_back({node, kind, t, t.toLower()});
  };
  auto add_outputs = [&](int node, const Graph& g, const Node& n) {
    for (ValueId v : n.outputs)
      if (v != kNoValue) add(node, FindMatchKind::kTensor, g.value(v).name);
  };
  for (const DisplayNode& n : graph.nodes) {
    add(n.id, FindMatchKind::kNode, n.label);
    const bool io =
        n.kind == DisplayNodeKind::kGraphInput || n.kind == DisplayNodeKind::kGraphOutput;
    if (!io) add(n.id, FindMatchKind::kOp, n.op);
    if (n.kind == DisplayNodeKind::kOp && n.node && n.graph) add_outputs(n.id, *n.graph, *n.node);
    if (!is_box(n)) continue;
    // A box is labelled by its ops; its members' own names and ops are still found, on it.
    if (main) {
      for (NodeId m : n.members) {
        const Node& member = main->node(m);
        add(n.id, FindMatchKind::kNode, member.name);
        add(n.id, FindMatchKind::kOp, member.op_type);
        add_outputs(n.id, *main, member);
      }
    } else if (const CoreNodeNames* names = graph.core_names.get()) {  // a package's
      for (NodeId m : n.members) {
        if (m < 0 || static_cast<size_t>(m) >= names->names.size()) continue;
        add(n.id, FindMatchKind::kNode, names->names[static_cast<size_t>(m)]);
        add(n.id, FindMatchKind::kOp, names->ops[static_cast<size_t>(m)]);
      }
    }
  }
  for (const DisplayEdge& e : graph.edges) {
    if (e.from < 0 || static_cast<size_t>(e.from) >= graph.nodes.size()) continue;
    const DisplayNode& from = graph.nodes[static_cast<size_t>(e.from)];
    if (from.kind == DisplayNodeKind::kGraphInput) add(e.to, FindMatchKind::kTensor, from.label);
    add(e.from, FindMatchKind::kShape, e.label);
  }
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::pair(a.node, a.kind) < std::pair(b.node, b.kind);
  });
}

std::vector<FindMatch> GraphFindIndex::find(const QString& query) const {
  std::vector<FindMatch> found;
  const QString needle = query.trimmed().toLower();
  if (needle.isEmpty()) return found;
  for (const Entry& e : entries_) {
    if (!found.empty() && found.back().node == e.node) continue;  // its best match is in
    if (e.lower.contains(needle)) found.push_back({e.node, e.kind, e.text});
  }
  return found;
}

FindBar::FindBar(GraphView* view, QWidget* parent) : QWidget(parent), view_(view) {
  edit_ = new QLineEdit(this);
  edit_->setPlaceholderText(tr("Find a node, op, tensor or shape (e.g. floordiv(height,4))"));
  edit_->setClearButtonEnabled(true);
  edit_->installEventFilter(this);
  count_ = new QLabel(this);
  count_->setMinimumWidth(count_->fontMetrics().horizontalAdvance(QStringLiteral("888 of 888")));
  previous_ = new QToolButton(this);
  previous_->setArrowType(Qt::UpArrow);
  previous_->setToolTip(tr("Previous match (Shift+Enter, Shift+F3)"));
  next_ = new QToolButton(this);
  next_->setArrowType(Qt::DownArrow);
  next_->setToolTip(tr("Next match (Enter, F3)"));
  auto* close_button = new QToolButton(this);
  close_button->setText(QStringLiteral("\u2715"));
  close_button->setToolTip(tr("Close (Escape)"));
  close_button->setAutoRaise(true);
  results_ = new QListWidget(this);
  results_->setUniformItemSizes(true);
  results_->setFocusPolicy(Qt::NoFocus);  // the query keeps the keyboard
  results_->hide();
  // As tall as its rows, never more: the graph below takes the rest.
  setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Maximum);

  auto* row = new QHBoxLayout;
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Find:"), this));
  row->addWidget(edit_, 1);
  row->addWidget(count_);
  row->addWidget(previous_);
  row->addWidget(next_);
  row->addWidget(close_button);
  auto* column = new QVBoxLayout(this);
  column->setContentsMargins(4, 4, 4, 4);
  column->setSpacing(2);
  column->addLayout(row);
  column->addWidget(results_);

  connect(edit_, &QLineEdit::textChanged, this, &FindBar::search);
  connect(previous_, &QToolButton::clicked, this, &FindBar::findPrevious);
  connect(next_, &QToolButton::clicked, this, &FindBar::findNext);
  connect(close_button, &QToolButton::clicked, this, &FindBar::dismiss);
  connect(results_, &QListWidget::itemClicked, this,
          [this](QListWidgetItem* item) { goTo(results_->row(item)); });
  refreshCount();
}

void FindBar::setGraph(std::shared_ptr<const DisplayGraph> graph) {
  graph_ = std::move(graph);
  index_ = graph_ ? GraphFindIndex(*graph_) : GraphFindIndex();
  // Ids change when a group opens: the rows are remade, but the selection the user has (or the
  // view's start) is not moved until they step.
  refreshMatches();
  refreshCount();
}

void FindBar::activate() {
  show();
  edit_->setFocus(Qt::ShortcutFocusReason);
  edit_->selectAll();
}

QString FindBar::countText() const { return count_->text(); }

void FindBar::findNext() {
  if (matches_.empty()) return;
  goTo(current_ < 0 ? 0 : (current_ + 1) % static_cast<int>(matches_.size()));
}

void FindBar::findPrevious() {
  if (matches_.empty()) return;
  const int n = static_cast<int>(matches_.size());
  goTo(current_ < 0 ? n - 1 : (current_ + n - 1) % n);
}

void FindBar::dismiss() {
  hide();
  if (view_) view_->setFocus(Qt::OtherFocusReason);
}

bool FindBar::eventFilter(QObject* watched, QEvent* e) {
  if (watched != edit_ || e->type() != QEvent::KeyPress) return QWidget::eventFilter(watched, e);
  const auto* key = static_cast<QKeyEvent*>(e);
  const bool shift = key->modifiers() & Qt::ShiftModifier;
  switch (key->key()) {
    case Qt::Key_Return:
    case Qt::Key_Enter:
    case Qt::Key_F3: shift ? findPrevious() : findNext(); return true;
    case Qt::Key_Escape: dismiss(); return true;
    default: return QWidget::eventFilter(watched, e);
  }
}

void FindBar::search() {
  refreshMatches();
  // Incremental: the first match is shown as soon as there is one.
  if (!matches_.empty())
    goTo(0);
  else
    refreshCount();
}

void FindBar::refreshMatches() {
  matches_ = index_.find(edit_->text());
  current_ = -1;
  results_->clear();
  for (const FindMatch& m : matches_) {
    QString row = QStringLiteral("%1  %2").arg(tr(find_match_kind_name(m.kind)), m.text);
    const std::string& label = graph_->nodes[static_cast<size_t>(m.node)].label;
    if (m.kind != FindMatchKind::kNode || m.text != qs(label))
      row += QStringLiteral("  \u2014 %1").arg(qs(label));
    results_->addItem(row);
  }
  results_->setVisible(!matches_.empty());
  if (!matches_.empty()) {
    const int rows = std::min<int>(static_cast<int>(matches_.size()), kResultRowsShown);
    results_->setFixedHeight(rows * results_->sizeHintForRow(0) + 2 * results_->frameWidth());
  }
}

void FindBar::goTo(int index) {
  if (index < 0 || static_cast<size_t>(index) >= matches_.size()) return;
  current_ = index;
  results_->setCurrentRow(index);
  if (view_) view_->selectNode(matches_[static_cast<size_t>(index)].node, true);
  refreshCount();
}

void FindBar::refreshCount() {
  const bool any = !matches_.empty();
  previous_->setEnabled(any);
  next_->setEnabled(any);
  if (edit_->text().trimmed().isEmpty())
    count_->clear();
  else if (!any)
    count_->setText(tr("no match"));
  else if (current_ < 0)
    count_->setText(tr("%1 matches").arg(matches_.size()));
  else
    count_->setText(tr("%1 of %2").arg(current_ + 1).arg(matches_.size()));
}

}  // namespace sod2::studio
