// The graph's find bar (View > Find, Ctrl+F; issue #23): searches as the user types over node
// names, op types, tensor names and the symbolic shapes on the edges, shows "3 of 20" and a list
// of what matched, and steps through the matches (Enter/F3 next, Shift+Enter/Shift+F3 previous,
// wrapping), selecting and centring each node in the GraphView. Escape hides it.
//
// The matching is GraphFindIndex, which knows nothing of widgets and is tested headless.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <string>
#include <vector>

#include "app/studio/graph/display_graph.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QToolButton;

namespace sod2::studio {

class GraphView;

// What a query matched on a node, by priority: a node showing under its own name is found
// first by that, not by the shape of a tensor it happens to produce.
enum class FindMatchKind { kNode, kOp, kTensor, kShape };

// "node", "op", "tensor", "shape": the word a results row starts with.
const char* find_match_kind_name(FindMatchKind kind);

struct FindMatch {
  int node = -1;  // display node id to select
  FindMatchKind kind = FindMatchKind::kNode;
  QString text;  // what matched: the name, the op, the tensor's name or the shape label
};

// Everything a DisplayGraph lets one search, lower-cased once so that each keystroke is a scan.
// A tensor belongs to the node producing it; a graph input's tensor to each node reading it
// (the input's own box is found by its name). A shape belongs to the node producing the value
// the labelled edge carries.
class GraphFindIndex {
 public:
  GraphFindIndex() = default;
  explicit GraphFindIndex(const DisplayGraph& graph);

  // One match per display node, in display-id order, with its best kind; the query is trimmed
  // and matched as a case-insensitive substring. Empty for an empty query.
  std::vector<FindMatch> find(const QString& query) const;

 private:
  struct Entry {
    int node = -1;
    FindMatchKind kind = FindMatchKind::kNode;
    QString text;   // as shown
    QString lower;  // as searched
  };
  std::vector<Entry> entries_;  // by node, then by kind
};

class FindBar : public QWidget {
  Q_OBJECT

 public:
  explicit FindBar(GraphView* view, QWidget* parent = nullptr);

  // What is searched; null while nothing is shown. Re-runs the current query without moving the
  // selection.
  void setGraph(std::shared_ptr<const DisplayGraph> graph);
  // Shows the bar with the query selected, so that typing replaces it.
  void activate();

  // "3 of 20", "20 matches" before one is chosen, "no match", or empty for an empty query.
  QString countText() const;
  const std::vector<FindMatch>& matches() const { return matches_; }
  int currentMatch() const { return current_; }  // -1 when none
  QLineEdit* queryEdit() const { return edit_; }
  QListWidget* resultsList() const { return results_; }

 public slots:
  void findNext();
  void findPrevious();
  void dismiss();  // hides the bar and gives the keyboard back to the graph

 protected:
  bool eventFilter(QObject* watched, QEvent* e) override;

 private:
  // What the query matches, listed; nothing selected yet.
  void refreshMatches();
  // refreshMatches, then the first match selected: what typing does.
  void search();
  void goTo(int index);
  void refreshCount();

  GraphView* view_;
  std::shared_ptr<const DisplayGraph> graph_;
  GraphFindIndex index_;
  std::vector<FindMatch> matches_;
  int current_ = -1;
  QLineEdit* edit_ = nullptr;
  QLabel* count_ = nullptr;
  QToolButton* previous_ = nullptr;
  QToolButton* next_ = nullptr;
  QListWidget* results_ = nullptr;
};

}  // namespace sod2::studio
