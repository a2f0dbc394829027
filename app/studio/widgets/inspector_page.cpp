#include "app/studio/widgets/inspector_page.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "core/ops/op_registry.h"

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

InspectorPage::InspectorPage(QWidget* parent) : ReportView(parent) {
  setPlaceholderText(
      tr("Select a node in the graph, a row in the shapes table or a tensor in the memory "
         "timeline."));
}

void InspectorPage::documentChanged(const std::shared_ptr<const OpenDocument>& doc,
                                    const std::shared_ptr<const BoundDocument>& bound,
                                    const TimelineModel*) {
  doc_ = doc;
  bound_ = bound;
  selected_.reset();
  hierarchy_.reset();
  clear();
}

void InspectorPage::bindingChanged(const std::shared_ptr<const BoundDocument>& bound,
                                   const TimelineModel*) {
  bound_ = bound;
  if (selected_) show();
}

void InspectorPage::selectionChanged(const PageSelection& selection) {
  if (!selection.display) return;
  selected_ = *selection.display;
  hierarchy_ = selection.hierarchy;
  show();
}

void InspectorPage::show() {
  const QString t = text();
  if (!t.isEmpty()) setPlainText(t);
}

QString InspectorPage::text() const {
  if (!selected_ || !bound_) return {};
  const DisplayNode& n = *selected_;
  const bool box = n.kind == DisplayNodeKind::kScope || n.kind == DisplayNodeKind::kShapes;
  const QString report = box && doc_ ? boxSummary(n) : qs(bound_->node_report(n));
  return report + bodiesHint(n);
}

QString InspectorPage::bodiesHint(const DisplayNode& n) const {
  if (!n.has_subgraphs || n.is_group_box) return {};
  return n.body_expanded
             ? tr("\n(double-click or Enter closes its bodies)\n")
             : tr("\n(double-click or Enter opens its %1 body nodes)\n").arg(n.subgraph_nodes);
}

QString InspectorPage::boxSummary(const DisplayNode& n) const {
  // A model's nodes or a package's compiled nodes, whichever is open.
  const OpenDocument& doc = *doc_;
  QString text;
  if (n.kind == DisplayNodeKind::kScope && hierarchy_ && n.scope > 0 &&
      static_cast<size_t>(n.scope) < hierarchy_->scopes.size()) {
    const NameScope& s = hierarchy_->scopes[static_cast<size_t>(n.scope)];
    text = tr("name scope %1\n%2 nodes, %3 inner scopes (double-click or Enter opens it)\n")
               .arg(qs(s.path))
               .arg(n.members.size())
               .arg(s.children.size());
  } else {
    text = tr("shape computation\n%1 nodes computing small integer tensors (dims, shapes, "
              "indices) from tensor shapes and constants, never from a tensor's contents "
              "(double-click or Enter opens it)\n")
               .arg(n.members.size());
  }
  std::map<std::string, int> ops, classes;
  std::vector<NodeId> members;  // those of this document (a box from another is not read)
  for (NodeId m : n.members)
    if (m >= 0 && static_cast<size_t>(m) < doc.num_nodes()) members.push_back(m);
  for (NodeId m : members) {
    ++ops[doc.node_op(m)];
    ++classes[op_class_name(doc.node_class(m))];
  }
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [op, count] : ops) by_count.push_back({-count, op});
  std::sort(by_count.begin(), by_count.end());
  text += tr("ops     ");
  for (const auto& [count, op] : by_count)
    text += QStringLiteral(" %1 x%2").arg(qs(op)).arg(-count);
  text += tr("\nclasses ");
  for (const auto& [cls, count] : classes) text += QStringLiteral(" %1 %2").arg(qs(cls)).arg(count);
  text += tr("\nnodes\n");
  constexpr size_t kListed = 40;
  for (size_t i = 0; i < members.size() && i < kListed; ++i)
    text += QStringLiteral("  %1  (%2)\n")
                .arg(qs(doc.node_name(members[i])), qs(doc.node_op(members[i])));
  if (members.size() > kListed) text += tr("  ... and %1 more\n").arg(members.size() - kListed);
  return text;
}

}  // namespace sod2::studio
