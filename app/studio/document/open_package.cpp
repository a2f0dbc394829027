// OpenDocument for a compiled package: its graph and plan as they run, no RDP facts; its nodes'
// name scopes drawn as a model's are.
#include <filesystem>

#include "app/studio/document/open_document.h"
#include "core/status/byte_size.h"

namespace sod2::studio {
namespace {

class BoundPackage final : public BoundDocument {
 public:
  BoundPackage(std::map<std::string, int64_t> values, std::shared_ptr<const PackageDocument> pkg,
               PackagePlanAt at)
      : BoundDocument(std::move(values)), pkg_(std::move(pkg)), at_(std::move(at)) {}

  const sym::Binding& binding() const override { return binding_; }
  std::string summary() const override { return pkg_->summary_report(at_); }
  std::string status() const override {
    return "arena " + human_bytes(at_.arena_bytes) + " (" +
           plan::version_text(at_.version, pkg_->program().plan_versions.size()) + ")";
  }
  std::string node_report(const DisplayNode& n) const override {
    return n.members.empty() ? n.label : pkg_->node_report(n.members.front(), at_);
  }

 private:
  std::shared_ptr<const PackageDocument> pkg_;
  PackagePlanAt at_;
  sym::Binding binding_;  // a package carries no RDP facts to bind
};

class OpenPackage final : public OpenDocument {
 public:
  explicit OpenPackage(std::shared_ptr<PackageDocument> pkg) : pkg_(std::move(pkg)) {}

  const std::string& path() const override { return pkg_->path(); }
  std::string title() const override {
    return std::filesystem::path(pkg_->path()).filename().string() + " (package)";
  }
  std::string opened_status() const override {
    return "Package: the compiled graph and plan; dims are on the edges and in the inspector (the "
           "shapes table needs the .onnx)";
  }
  const std::vector<SymbolControl>& symbols() const override { return pkg_->symbols(); }
  std::map<std::string, int64_t> initial_values() const override { return pkg_->initial_values(); }
  Expected<int64_t> execution_upper(const std::string& name,
                                    const std::map<std::string, int64_t>& values) const override {
    return pkg_->execution_upper(name, values);
  }
  const rt::ProgramDesc& program() const override { return pkg_->program(); }
  std::vector<std::string> input_names() const override {
    std::vector<std::string> out;
    for (const rt::InputSignature& s : pkg_->program().inputs) out.push_back(s.name);
    return out;
  }

  Expected<Bound> bind(const std::map<std::string, int64_t>& values,
                       TimelineModel*) const override {
    SOD2_ASSIGN_OR_RETURN(PackagePlanAt at, pkg_->plan_at(values));
    Bound out;
    out.timeline = std::make_unique<TimelineModel>(pkg_->timeline(at));
    out.document = std::make_unique<BoundPackage>(values, pkg_, std::move(at));
    return out;
  }
  size_t num_nodes() const override { return pkg_->num_nodes(); }
  const std::string& node_name(NodeId node) const override { return pkg_->node_name(node); }
  const std::string& node_op(NodeId node) const override { return pkg_->node_op(node); }
  OpClass node_class(NodeId node) const override { return pkg_->node_class(node); }

  DisplayGraph display_graph(const GraphHierarchy* hierarchy,
                             const DisplayState& state) const override {
    return pkg_->display_graph(hierarchy, state.expanded_scopes);
  }
  std::shared_ptr<const GraphHierarchy> build_hierarchy() const override {
    return std::make_shared<const GraphHierarchy>(pkg_->hierarchy());
  }
  PlacementSource placement_source() const override { return {nullptr, pkg_, true}; }
  void describe_profile(profiling::ProfileRequest& r, package::WeightStorage) const override {
    r.model_path = pkg_->path();  // it keeps the weights it was compiled with
  }
  const PackageDocument* package() const override { return pkg_.get(); }

 private:
  std::shared_ptr<PackageDocument> pkg_;
};

}  // namespace

std::shared_ptr<OpenDocument> OpenDocument::of_package(std::shared_ptr<PackageDocument> package) {
  return std::make_shared<OpenPackage>(std::move(package));
}

}  // namespace sod2::studio
