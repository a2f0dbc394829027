// OpenDocument for an ONNX model: RDP's facts at every binding, the hierarchy, its own program.
#include <filesystem>

#include "app/studio/document/open_document.h"
#include "core/ops/op_registry.h"
#include "core/status/byte_size.h"

namespace sod2::studio {
namespace {

// "nz at its bound 20" or "3 execution symbols at their bound": what the memory plan shown
// reserves for data it cannot know; empty when none is at its bound.
std::string at_bound_note(const std::vector<ExecutionAtBound>& at_bound) {
  if (at_bound.empty()) return {};
  if (at_bound.size() == 1)
    return at_bound.front().name + " at its bound " + std::to_string(at_bound.front().value);
  return std::to_string(at_bound.size()) + " execution symbols at their bound";
}

class BoundModel final : public BoundDocument {
 public:
  BoundModel(std::map<std::string, int64_t> values, std::shared_ptr<const StudioDocument> doc,
             sym::Binding binding, opt::PlanAtBinding at)
      : BoundDocument(std::move(values)),
        doc_(std::move(doc)),
        binding_(std::move(binding)),
        at_(std::move(at)),
        note_(at_bound_note(doc_->executions_at_bound(binding_))) {}

  const sym::Binding& binding() const override { return binding_; }
  std::string summary() const override { return doc_->summary_report(at_); }
  std::string status() const override {
    return "arena " + human_bytes(at_.arena_bytes) + ", lower bound " +
           human_bytes(at_.lower_bound_bytes) + ", " + human_bytes(at_.naive_bytes) +
           " without reuse" + (note_.empty() ? std::string() : "; " + note_);
  }
  std::string memory_note() const override { return note_; }
  std::string node_report(const DisplayNode& n) const override {
    if (n.members.empty()) {
      if (n.graph && n.node_id != kNoNode) return doc_->node_report(*n.graph, n.node_id, binding_);
      return n.label;
    }
    std::string text;
    for (NodeId m : n.members) text += doc_->node_report(m, binding_) + "\n";
    return text;
  }

 private:
  std::shared_ptr<const StudioDocument> doc_;
  sym::Binding binding_;
  opt::PlanAtBinding at_;
  std::string note_;
};

class OpenModel final : public OpenDocument {
 public:
  OpenModel(std::shared_ptr<StudioDocument> doc, bool fuse) : doc_(std::move(doc)), fuse_(fuse) {}

  const std::string& path() const override { return doc_->path(); }
  std::string title() const override {
    return std::filesystem::path(doc_->path()).filename().string();
  }
  std::string opened_status() const override {
    return std::to_string(doc_->graph().num_nodes()) + " nodes, " +
           std::to_string(doc_->fusion().groups.size()) + " steps; laying out the graph...";
  }
  const std::vector<SymbolControl>& symbols() const override { return doc_->symbols(); }
  std::map<std::string, int64_t> initial_values() const override { return doc_->initial_values(); }
  Expected<int64_t> execution_upper(const std::string& name,
                                    const std::map<std::string, int64_t>& values) const override {
    return doc_->execution_upper(name, values);
  }
  const rt::ProgramDesc& program() const override { return doc_->compiled().program; }
  std::vector<std::string> input_names() const override {
    std::vector<std::string> out;
    for (ValueId v : doc_->graph().inputs()) out.push_back(doc_->graph().value(v).name);
    return out;
  }

  Expected<Bound> bind(const std::map<std::string, int64_t>& values,
                       TimelineModel* current) const override {
    SOD2_ASSIGN_OR_RETURN(sym::Binding binding, doc_->binding(values));
    SOD2_ASSIGN_OR_RETURN(opt::PlanAtBinding at, doc_->instantiate(binding));
    Bound out;
    if (current && current->rebind(at).ok()) {
      out.rebound = true;
    } else {
      auto timeline = TimelineModel::build(doc_->model(), doc_->rdp(), doc_->plan(), at);
      if (timeline.ok()) out.timeline = std::make_unique<TimelineModel>(std::move(*timeline));
    }
    out.document = std::make_unique<BoundModel>(values, doc_, std::move(binding), std::move(at));
    return out;
  }
  size_t num_nodes() const override { return doc_->graph().num_nodes(); }
  const std::string& node_name(NodeId node) const override { return doc_->graph().node(node).name; }
  const std::string& node_op(NodeId node) const override {
    return doc_->graph().node(node).op_type;
  }
  OpClass node_class(NodeId node) const override { return op_class_of(doc_->graph().node(node)); }

  DisplayGraph display_graph(const GraphHierarchy* hierarchy,
                             const DisplayState& state) const override {
    return build_display_graph(doc_->model(), doc_->rdp(), &doc_->fusion(), hierarchy, state);
  }
  std::shared_ptr<const GraphHierarchy> build_hierarchy() const override {
    return std::make_shared<const GraphHierarchy>(
        studio::build_hierarchy(doc_->graph(), doc_->rdp(), &doc_->fusion()));
  }
  PlacementSource placement_source() const override { return {doc_, nullptr, fuse_}; }
  void describe_profile(profiling::ProfileRequest& r,
                        package::WeightStorage weights) const override {
    r.model_path = doc_->path();
    r.rdp = doc_->rdp_options();
    r.fuse = fuse_;
    r.weights = weights;
    // The document's own program (opened with these options): what the views show is what is
    // packaged and run, without compiling the file again. Empty when opened without weights.
    r.compiled = std::shared_ptr<const rt::ProgramDesc>(doc_, &doc_->compiled().program);
  }
  std::shared_ptr<StudioDocument> model() const override { return doc_; }

 private:
  std::shared_ptr<StudioDocument> doc_;
  bool fuse_;
};

}  // namespace

std::shared_ptr<OpenDocument> OpenDocument::of_model(std::shared_ptr<StudioDocument> model,
                                                     bool fuse) {
  return std::make_shared<OpenModel>(std::move(model), fuse);
}

}  // namespace sod2::studio
