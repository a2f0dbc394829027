#include "core/family/family_writer.h"

#include <bit>
#include <cstring>

#include "core/onnx/onnx_import.h"
#include "core/package/manifest_builder.h"
#include "core/version.h"

namespace sod2::family {
namespace {

template <typename T>
std::vector<uint8_t> as_bytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

void add_weight(const SharedWeight& w, package::BlobBuilder& blob, pkg::FamilyWeight* o) {
  if (w.stored) {
    pkg::TensorRef* t = o->mutable_stored();
    t->set_dtype(static_cast<uint32_t>(w.tensor.dtype));
    for (int64_t d : w.tensor.shape.dims()) t->add_dims(d);
    t->set_length(w.tensor.bytes());
    t->set_offset(blob.add(w.tensor));
    return;
  }
  pkg::WeightView* v = o->mutable_view();
  v->set_base(w.base);
  for (int64_t d : w.tensor.shape.dims()) v->add_dims(d);
  for (int64_t d : w.offsets) v->add_offsets(d);
  v->set_scale_axis(w.scale_axis);
  if (w.scale_axis >= 0) v->set_scale_offset(blob.add_owned(as_bytes(w.scales)));
  if (!w.residual.empty()) {
    v->set_residual_length(w.residual.size());
    v->set_residual_offset(blob.add_owned(w.residual));
  }
  if (!w.escapes.empty()) {
    v->set_escape_count(w.escapes.size());
    v->set_escape_offset(blob.add_owned(as_bytes(w.escapes)));
  }
}

}  // namespace

Expected<std::vector<uint8_t>> build_family_package(const FamilySpec& spec,
                                                    const FamilyCompileOptions& options,
                                                    FamilyPackageStats* stats) {
  auto progress = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  FamilyPackageStats local;
  FamilyPackageStats& st = stats ? *stats : local;
  std::vector<rt::ProgramDesc> programs;
  programs.reserve(spec.variants.size());
  for (size_t i = 0; i < spec.variants.size(); ++i) {
    const VariantSpec& v = spec.variants[i];
    progress("compiling " + v.name + " (" + std::to_string(i + 1) + "/" +
             std::to_string(spec.variants.size()) + ")");
    const std::string what = "variant '" + v.name + "'";
    Expected<pipeline::CompiledModel> compiled =
        pipeline::compile_file(v.model_path, options.compile);
    if (!compiled.ok()) return compiled.status().with_context(what);
    rt::ProgramDesc* program = &compiled->program;
    // What this variant would take as a package of its own: the baseline the sharing is
    // measured against.
    SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> alone, package::serialize_package(*program));
    st.variant_package_bytes.push_back(alone.size());
    st.separate_bytes += alone.size();
    programs.push_back(std::move(*program));
  }
  progress("sharing weights across " + std::to_string(programs.size()) + " variants");
  std::vector<FamilyMember> members;
  for (size_t i = 0; i < programs.size(); ++i) members.push_back({spec.variants[i], &programs[i]});
  return serialize_family(spec.name, members, options.sharing, &st);
}

Expected<std::vector<uint8_t>> serialize_family(const std::string& name,
                                                const std::vector<FamilyMember>& members,
                                                const WeightSharingOptions& sharing,
                                                FamilyPackageStats* stats) {
  FamilyPackageStats local;
  FamilyPackageStats& st = stats ? *stats : local;
  if (members.empty()) return invalid_argument("a family needs at least one variant");
  std::vector<const rt::ProgramDesc*> ptrs;
  for (const FamilyMember& m : members) ptrs.push_back(m.program);
  SOD2_ASSIGN_OR_RETURN(const WeightSharingPlan plan, plan_weight_sharing(ptrs, sharing));
  st.sharing = plan.stats;

  pkg::Manifest manifest;
  manifest.set_producer(std::string("sod2 ") + SOD2_VERSION_STRING);
  pkg::Family* fam = manifest.mutable_family();
  fam->set_name(name);
  package::BlobBuilder blob;
  for (const SharedWeight& w : plan.weights) add_weight(w, blob, fam->add_weights());
  for (size_t i = 0; i < members.size(); ++i) {
    const VariantSpec& v = members[i].spec;
    pkg::Variant* o = fam->add_variants();
    o->set_name(v.name);
    package::ManifestBuilder builder(blob);
    SOD2_RETURN_IF_ERROR(builder.build(*members[i].program, o->mutable_program(), false)
                             .with_context("variant " + v.name));
    for (uint32_t w : plan.constant_weights[i]) o->add_constant_weights(w);
    o->set_macs(v.macs);
    o->set_params(v.params);
    o->set_has_accuracy(v.has_accuracy);
    o->set_accuracy(v.accuracy);
    o->set_config(v.config);
  }
  SOD2_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                        package::seal_package(manifest, blob, &st.package));
  st.package.constants = plan.weights.size();
  return bytes;
}

Status write_family_package(const FamilySpec& spec, const FamilyCompileOptions& options,
                            const std::string& path, FamilyPackageStats* stats) {
  SOD2_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes,
                        build_family_package(spec, options, stats));
  return package::write_file_atomically(bytes, path);
}

}  // namespace sod2::family
