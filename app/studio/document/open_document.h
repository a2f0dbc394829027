// What the studio window shows and runs, whichever kind of file is open (issue #23 item 7): an
// ONNX model, compiled here with RDP's facts (StudioDocument), or a compiled package, its graph
// and plan as they run (PackageDocument). The window opens, binds, lays out, inspects, places
// and profiles through this interface, so it has no branch on the kind of file; what only a
// model has (the shapes table, the hierarchy, overlays by node name) asks model() and is absent
// when it is null.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "app/profiling/profile_job.h"
#include "app/studio/backend/backend_placer.h"
#include "app/studio/document/package_document.h"
#include "app/studio/document/studio_document.h"
#include "app/studio/graph/display_graph.h"
#include "app/studio/graph/graph_hierarchy.h"
#include "app/studio/plan/timeline_model.h"
#include "core/status/status.h"

namespace sod2::studio {

// The document at one binding: what the plan views show there.
class BoundDocument {
 public:
  virtual ~BoundDocument() = default;
  const std::map<std::string, int64_t>& values() const { return values_; }
  // The model's symbols as RDP binds them (the shapes table, the plan comparison); empty for a
  // package, which carries no RDP facts.
  virtual const sym::Binding& binding() const = 0;
  virtual std::string summary() const = 0;
  // "arena 1.2 MiB, lower bound ..." for the status bar.
  virtual std::string status() const = 0;
  // What the Memory plan dock's title adds: execution symbols at their bound ("" when none).
  virtual std::string memory_note() const { return {}; }
  // The inspector's report of a drawn node at this binding.
  virtual std::string node_report(const DisplayNode& node) const = 0;

 protected:
  explicit BoundDocument(std::map<std::string, int64_t> values) : values_(std::move(values)) {}

 private:
  std::map<std::string, int64_t> values_;
};

// A bound document and the timeline it gives: `rebound` when the one passed to bind() was
// rebound in place (a new binding of the same plan keeps its model, and the view's state); else
// `timeline` is the new one (null when none can be drawn there).
struct Bound {
  std::unique_ptr<BoundDocument> document;
  std::unique_ptr<TimelineModel> timeline;
  bool rebound = false;
};

class OpenDocument {
 public:
  virtual ~OpenDocument() = default;

  // A package (told by its magic bytes) or an ONNX model, compiled under `options` with
  // progress and cancel. Errors name the file and what failed.
  static Expected<std::shared_ptr<OpenDocument>> open(const std::string& path,
                                                      const OpenOptions& options,
                                                      const ProgressFn& progress = {},
                                                      const std::atomic<bool>* cancel = nullptr);
  static std::shared_ptr<OpenDocument> of_model(std::shared_ptr<StudioDocument> model, bool fuse);
  static std::shared_ptr<OpenDocument> of_package(std::shared_ptr<PackageDocument> package);

  virtual const std::string& path() const = 0;
  // "model.onnx" or "model.sod2 (package)": the window's title.
  virtual std::string title() const = 0;
  // What the status bar says once it is open.
  virtual std::string opened_status() const = 0;
  virtual const std::vector<SymbolControl>& symbols() const = 0;
  virtual std::map<std::string, int64_t> initial_values() const = 0;
  // An execution symbol's bound at the other values (the bindings bar's slider maximum).
  virtual Expected<int64_t> execution_upper(const std::string& name,
                                            const std::map<std::string, int64_t>& values) const = 0;
  // The program that runs: what a profile packages and whose inputs input files fill (a model
  // opened without its weights has none: its graphs are empty).
  virtual const rt::ProgramDesc& program() const = 0;
  // The main graph's inputs, in order.
  virtual std::vector<std::string> input_names() const = 0;
  // The main graph's nodes as drawn (`DisplayNode::members`, `GraphHierarchy::scope_of_node`
  // index them): a model's nodes, a package's compiled nodes. `node` is in range for the others.
  virtual size_t num_nodes() const = 0;
  virtual const std::string& node_name(NodeId node) const = 0;
  virtual const std::string& node_op(NodeId node) const = 0;
  virtual OpClass node_class(NodeId node) const = 0;

  // The plan at `values`, rebinding `current` in place when it can. Errors: a symbol missing,
  // outside its range or off its multiple, an execution symbol above its bound (named).
  virtual Expected<Bound> bind(const std::map<std::string, int64_t>& values,
                               TimelineModel* current) const = 0;
  // The graph as drawn with `state` open (a package draws its compiled nodes; of the state, only
  // its name scopes).
  virtual DisplayGraph display_graph(const GraphHierarchy* hierarchy,
                                     const DisplayState& state) const = 0;
  // The name scopes (and for a model the shape computations) of the graph, built once, on the
  // opening worker; null when it has none to offer.
  virtual std::shared_ptr<const GraphHierarchy> build_hierarchy() const { return nullptr; }
  // What the Backend dock places.
  virtual PlacementSource placement_source() const = 0;
  // Fills what Export & profile sends: the file, and for a model its ranges, fusion and own
  // compiled program with its weights stored as `weights`.
  virtual void describe_profile(profiling::ProfileRequest& request,
                                package::WeightStorage weights) const = 0;

  // The ONNX model, when this is one.
  virtual std::shared_ptr<StudioDocument> model() const { return nullptr; }
  // The package, when this is one.
  virtual const PackageDocument* package() const { return nullptr; }
};

}  // namespace sod2::studio
