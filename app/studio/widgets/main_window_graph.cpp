// MainWindow's graph navigation: what a selected node shows in the other docks, what is open
// (fused groups, bodies, name scopes, shape computations) with undo and redo, revealing a node
// hidden in a box, and exporting the drawing.
#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenu>
#include <QMessageBox>
#include <QModelIndex>
#include <QSettings>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QStatusBar>

#include "app/studio/backend/backend_view.h"
#include "app/studio/device/profile_view.h"
#include "app/studio/graph/graph_view.h"
#include "app/studio/plan/shapes_table_view.h"
#include "app/studio/plan/timeline_model.h"
#include "app/studio/plan/timeline_view.h"
#include "app/studio/widgets/main_window.h"

namespace sod2::studio {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

}  // namespace

PageSelection MainWindow::pageSelection(const DisplayNode& n) const {
  PageSelection selection;
  selection.display = &n;
  selection.hierarchy = hierarchy_;
  // The main graph's nodes by name and id; a package's drawing is its compiled nodes.
  if (doc_) {
    selection.nodes = n.members;
    for (NodeId m : n.members) selection.names.push_back(doc_->graph().node(m).name);
  }
  return selection;
}

void MainWindow::showDisplayNode(int id) {
  if (!bound_ || !display_ || id < 0 || static_cast<size_t>(id) >= display_->nodes.size()) return;
  // The pages follow (the inspector's report, the group that ran the node, the row that runs
  // it, its output's shape).
  const PageSelection selection = pageSelection(display_->nodes[static_cast<size_t>(id)]);
  for (StudioPage* page : pages_) page->selectionChanged(selection);
  inspector_dock_->raise();
}

void MainWindow::showTensor(int tensor, NodeId producer) {
  if (producer != kNoNode) selectCoreNode(producer);
  (void)tensor;
}

void MainWindow::selectCoreNode(NodeId node) {
  if (!display_) return;
  const int id = display_->display_node_of(node);
  if (id >= 0) graph_view_->selectNode(id, true);
}

void MainWindow::toggleBodies(const Node* control, bool now) {
  if (!doc_ || !control) return;
  // The control-flow node stays where it was (a body's own node when it is in one).
  NodeId anchor = kNoNode;
  if (display_)
    for (const DisplayNode& n : display_->nodes)
      if (n.node == control) anchor = anchorOf(n.id);
  changeDisplay(
      [control](DisplayState& s) {
        if (!s.expanded_bodies.erase(control)) s.expanded_bodies.insert(control);
      },
      anchor, now);
}

void MainWindow::toggleScope(int scope, bool now) {
  if (!open_ || !hierarchy_ || scope <= 0 ||
      static_cast<size_t>(scope) >= hierarchy_->scopes.size())
    return;
  // The scope's first node (in the file's order) stays where the box or frame was.
  NodeId anchor = kNoNode;
  for (size_t i = 0; i < hierarchy_->scope_of_node.size() && anchor == kNoNode; ++i)
    for (int s = hierarchy_->scope_of_node[i]; s > 0 && anchor == kNoNode;
         s = hierarchy_->scopes[static_cast<size_t>(s)].parent)
      if (s == scope && !hierarchy_->folded_constant[i]) anchor = static_cast<NodeId>(i);
  changeDisplay(
      [scope](DisplayState& s) {
        if (!s.expanded_scopes.erase(scope)) s.expanded_scopes.insert(scope);
      },
      anchor, now);
}

void MainWindow::toggleShapes(int cluster, bool now) {
  if (!open_ || !hierarchy_ || cluster < 0 ||
      static_cast<size_t>(cluster) >= hierarchy_->shape_clusters.size())
    return;
  changeDisplay(
      [cluster](DisplayState& s) {
        if (!s.expanded_shapes.erase(cluster)) s.expanded_shapes.insert(cluster);
      },
      hierarchy_->shape_clusters[static_cast<size_t>(cluster)].front(), now);
}

void MainWindow::revealCoreNode(NodeId node, bool now) {
  if (!open_ || node < 0 || static_cast<size_t>(node) >= open_->num_nodes()) return;
  bool closed = false;
  if (hierarchy_) {
    const size_t i = static_cast<size_t>(node);
    closed = hierarchy_->closed_ancestor(hierarchy_->scope_of_node[i],
                                         display_state_.expanded_scopes) >= 0 ||
             (hierarchy_->shape_cluster_of[i] >= 0 &&
              !display_state_.expanded_shapes.count(hierarchy_->shape_cluster_of[i]));
  }
  if (!closed) {
    selectCoreNode(node);
    return;
  }
  const GraphHierarchy& h = *hierarchy_;
  changeDisplay(
      [&h, node](DisplayState& s) {
        for (int sc = h.scope_of_node[static_cast<size_t>(node)]; sc > 0;
             sc = h.scopes[static_cast<size_t>(sc)].parent)
          s.expanded_scopes.insert(sc);
        if (const int c = h.shape_cluster_of[static_cast<size_t>(node)]; c >= 0)
          s.expanded_shapes.insert(c);
      },
      node, now);
  pending_reveal_ = node;
  if (now) {
    selectCoreNode(node);
    pending_reveal_ = kNoNode;
  }
}

QList<NodeId> MainWindow::coreNodesMatching(const QString& text) const {
  QList<NodeId> out;
  const QString needle = text.trimmed();
  if (!open_ || needle.isEmpty()) return out;
  for (size_t i = 0; i < open_->num_nodes(); ++i) {
    const NodeId id = static_cast<NodeId>(i);
    if (qs(open_->node_name(id)).contains(needle, Qt::CaseInsensitive) ||
        qs(open_->node_op(id)).contains(needle, Qt::CaseInsensitive))
      out.append(id);
  }
  return out;
}

NodeId MainWindow::anchorOf(int display_id) const {
  if (!display_ || display_id < 0 || static_cast<size_t>(display_id) >= display_->nodes.size())
    return kNoNode;
  const DisplayNode& n = display_->nodes[static_cast<size_t>(display_id)];
  if (!n.members.empty()) return n.members.front();
  // A node of an open body: the main-graph node holding the body, at any depth.
  const Node* control = n.body_of;
  for (int guard = 0; control && guard < 64; ++guard) {
    for (const DisplayNode& d : display_->nodes) {
      if (d.node != control) continue;
      if (!d.members.empty()) return d.members.front();
      control = d.body_of;
      break;
    }
  }
  return kNoNode;
}

void MainWindow::changeDisplay(const std::function<void(DisplayState&)>& change, NodeId anchor,
                               bool now) {
  if (!open_) return;
  undo_states_.push_back(display_state_);
  if (undo_states_.size() > kMaxUndo) undo_states_.erase(undo_states_.begin());
  redo_states_.clear();
  change(display_state_);
  relayoutKeeping(anchor, now);
}

void MainWindow::relayoutKeeping(NodeId anchor, bool now) {
  updateUndoActions();
  anchor_.reset();
  if (anchor == kNoNode) anchor = anchorOf(graph_view_->nodeNearestViewCentre());
  if (anchor != kNoNode)
    if (const auto at = graph_view_->viewPositionOf(anchor)) anchor_ = Anchor{anchor, *at};
  // Back to what was open before (undo, or closing what was just opened): its drawing again.
  const auto kept = std::find_if(drawings_.begin(), drawings_.end(), [this](const LayoutResult& d) {
    return d.doc == open_ && d.state == display_state_;
  });
  if (kept != drawings_.end() && !lay_out_afresh_) {
    if (layout_cancel_) *layout_cancel_ = true;  // a layout still running is for another state
    LayoutResult again = *kept;
    again.incremental = true;
    adoptLayout(again);
  } else if (now) {
    adoptLayout(computeLayout(open_, hierarchy_, display_state_, shownDrawing(), nullptr));
  } else {
    startLayout();
    return;
  }
  if (now) graph_view_->finishPopulating();
}

void MainWindow::layOutAgain(bool now) {
  if (!open_) return;
  lay_out_afresh_ = true;
  relayoutKeeping(kNoNode, now);
}

void MainWindow::undoView(bool now) {
  if (!open_ || undo_states_.empty()) return;
  redo_states_.push_back(display_state_);
  display_state_ = std::move(undo_states_.back());
  undo_states_.pop_back();
  relayoutKeeping(kNoNode, now);
}

void MainWindow::redoView(bool now) {
  if (!open_ || redo_states_.empty()) return;
  undo_states_.push_back(display_state_);
  display_state_ = std::move(redo_states_.back());
  redo_states_.pop_back();
  relayoutKeeping(kNoNode, now);
}

void MainWindow::updateUndoActions() {
  if (undo_action_) undo_action_->setEnabled(!undo_states_.empty());
  if (redo_action_) redo_action_->setEnabled(!redo_states_.empty());
}

std::optional<QString> MainWindow::exportGraph(const QString& path, bool whole) {
  if (!display_) return tr("nothing to export: no graph is shown");
  return graph_view_->exportImage(path, whole);
}

void MainWindow::addGraphActions(QMenu* file, QMenu* edit, QMenu* help) {
  auto export_dialog = [this](bool whole) {
    if (!display_) return;
    QSettings settings;
    const QString base =
        open_ ? QFileInfo(qs(open_->path())).completeBaseName() : QStringLiteral("graph");
    const QString path = QFileDialog::getSaveFileName(
        this, whole ? tr("Export the whole graph") : tr("Export the graph in view"),
        QFileInfo(settings.value("files/last_dir").toString(), base + ".svg").filePath(),
        tr("SVG (*.svg);;PNG (*.png)"));
    if (path.isEmpty()) return;
    if (auto error = exportGraph(path, whole))
      showError(tr("Cannot export the graph"), *error);
    else
      status_->setText(tr("Wrote %1").arg(path));
  };
  QAction* whole = file->addAction(tr("&Export graph as SVG or PNG..."), this,
                                   [export_dialog] { export_dialog(true); });
  whole->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  file->addAction(tr("Export the graph in &view..."), this,
                  [export_dialog] { export_dialog(false); });

  undo_action_ = edit->addAction(tr("&Undo view change"), this, [this] { undoView(); });
  undo_action_->setShortcut(QKeySequence::Undo);
  redo_action_ = edit->addAction(tr("&Redo view change"), this, [this] { redoView(); });
  redo_action_->setShortcut(QKeySequence::Redo);
  updateUndoActions();
  edit->addAction(tr("&Lay out the graph again"), this, [this] { layOutAgain(); })
      ->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));

  QAction* keys = help->addAction(tr("&Keyboard shortcuts"), this, [this] {
    QMessageBox box(this);
    box.setWindowTitle(tr("Keyboard shortcuts"));
    box.setTextFormat(Qt::RichText);
    box.setText(keyboardShortcutsHtml());
    box.exec();
  });
  keys->setShortcut(QKeySequence::HelpContents);
}

QString MainWindow::keyboardShortcutsHtml() {
  const std::pair<const char*, const char*> rows[] = {
      {"Ctrl+O", "open a model or package"},
      {"Ctrl+E", "export the whole graph as SVG or PNG"},
      {"Ctrl+F", "find a node, op, tensor or shape"},
      {"F3 / Shift+F3", "next / previous match"},
      {"Enter", "open or close the selected box, body or the box it is in"},
      {"double-click", "open a box (fused group, scope, shape computation); on a frame: close it"},
      {"right-click", "open, close, copy the name, show in the shapes table or timeline"},
      {"Ctrl+Z / Ctrl+Shift+Z", "undo / redo opening and closing"},
      {"Ctrl+L", "lay the graph out again, closing the gaps left by opening and closing"},
      {"arrows", "walk to the neighbouring node"},
      {"+ / - / Ctrl+wheel", "zoom"},
      {"0, F, Ctrl+0", "fit the graph"},
      {"Escape", "clear the selection, close the find bar"},
      {"Ctrl+P", "export and profile on the chosen device"},
  };
  QString html = QStringLiteral("<table cellspacing='4'>");
  for (const auto& [key, what] : rows)
    html += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                .arg(QString::fromLatin1(key).toHtmlEscaped(), tr(what));
  return html + QStringLiteral("</table>");
}

}  // namespace sod2::studio
